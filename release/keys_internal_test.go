package release

import (
	"math"
	"slices"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// TestUniqueKeys: values that read as one key are released once.
func TestUniqueKeys(t *testing.T) {
	negZero := ir.Float(math.Copysign(0, -1))
	d := []ir.Value{ir.Float(1), negZero, ir.Float(0), ir.Float(1), ir.Float(2)}
	got := uniqueKeys(d)
	if len(got) != 3 || got[0].Float != 1 || got[1].Float != 0 || got[2].Float != 2 {
		t.Errorf("uniqueKeys = %v, want 1, -0, 2", got)
	}
	if !math.Signbit(d[1].Float) || len(d) != 5 {
		t.Errorf("the input was modified: %v", d)
	}
	plain := []ir.Value{ir.String("a"), ir.String("b")}
	if got := uniqueKeys(plain); len(got) != 2 || &got[0] != &plain[0] {
		t.Errorf("a domain without repeats is returned as is: %v", got)
	}
}

// TestUniqueKeysLinear: the short-domain search keeps exactly what the map
// keeps, for domains with repeats of every kind (-0 and 0, NaN, a date and
// its midnight timestamp, equal strings) and long keys that outgrow the
// stack buffer, at every length up to maxLinearKeys.
func TestUniqueKeysLinear(t *testing.T) {
	long := string(make([]byte, 300))
	pool := []ir.Value{ir.Float(1), ir.Float(math.Copysign(0, -1)), ir.Float(0), ir.Float(math.NaN()), ir.Float(math.NaN()),
		ir.Int(1), ir.Int(0), ir.String("a"), ir.String("a"), ir.String(long), ir.String(long + "x"), ir.String(long),
		ir.Date(10), ir.Timestamp(10 * 86400e6), ir.Date(10), ir.Null(), ir.Null(), ir.Bool(true), ir.String("t")}
	for n := 0; n <= maxLinearKeys; n++ {
		for shift := range len(pool) {
			d := make([]ir.Value, n)
			for i := range d {
				d[i] = pool[(i*7+shift)%len(pool)]
			}
			got, want := uniqueKeysLinear(d), uniqueKeysMap(d)
			if len(got) != len(want) || (len(got) > 0 && (&got[0] == &d[0]) != (&want[0] == &d[0])) {
				t.Fatalf("%v: linear %v, map %v", d, got, want)
			}
			for i := range got {
				if keyString(got[i:i+1]) != keyString(want[i:i+1]) {
					t.Fatalf("%v: linear %v, map %v", d, got, want)
				}
			}
		}
	}
}

// TestKeyProduct: the released keys are the cartesian product of the
// domains in the order of nested loops (the last group fastest), as
// keyDomain built them before, with empty domains and no groups too; a
// key cannot grow into the next one.
func TestKeyProduct(t *testing.T) {
	nested := func(doms [][]ir.Value) [][]ir.Value {
		keys := [][]ir.Value{{}}
		for _, d := range doms {
			next := make([][]ir.Value, 0, len(keys)*len(d))
			for _, k := range keys {
				for _, v := range d {
					next = append(next, append(append([]ir.Value(nil), k...), v))
				}
			}
			keys = next
		}
		return keys
	}
	a := []ir.Value{ir.String("F"), ir.String("M")}
	b := []ir.Value{ir.Int(1), ir.Int(2), ir.Int(3)}
	c := []ir.Value{ir.Null()}
	for _, doms := range [][][]ir.Value{nil, {a}, {a, b}, {b, a, c}, {a, {}, b}, {c, c, b, a}} {
		got, want := keyProduct(doms), nested(doms)
		if len(got) != len(want) {
			t.Fatalf("%v: %d keys, want %d", doms, len(got), len(want))
		}
		for i := range got {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("%v: key %d is %v, want %v", doms, i, got[i], want[i])
			}
			if cap(got[i]) != len(doms) {
				t.Fatalf("%v: key %d has room to grow into the next", doms, i)
			}
		}
	}
}

// TestTruthRows: rows are found by key, and kept in the order added,
// below and past the size where the map is built.
func TestTruthRows(t *testing.T) {
	for _, n := range []int{0, 1, maxLinearKeys, maxLinearKeys + 1, 3 * maxLinearKeys} {
		var tr truthRows
		for i := range n {
			tr.add(keyString([]ir.Value{ir.Int(int64(i))}), ir.BackendRow{Aggs: []int64{int64(i)}})
		}
		for i := range n {
			r, ok := tr.find(appendKey(nil, []ir.Value{ir.Int(int64(i))}))
			if !ok || r.Aggs[0] != int64(i) || tr.rows[i].Aggs[0] != int64(i) {
				t.Fatalf("%d rows: key %d found %v, %v", n, i, ok, r)
			}
		}
		if _, ok := tr.find(appendKey(nil, []ir.Value{ir.Int(-1)})); ok || len(tr.rows) != n {
			t.Fatalf("%d rows: a missing key was found, or %d rows kept", n, len(tr.rows))
		}
	}
}
