package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"context"
	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/ledger"
)

// bigRelease is a GROUP BY release of n rows: an integer and a text key,
// a count and a sum, as a 100k-group query releases.
func bigRelease(n int) *stored {
	rel := &stored{Version: 1}
	for i := range n {
		rel.Rows = append(rel.Rows, storedRow{
			Keys: []ir.Value{ir.Int(int64(i)), ir.String(fmt.Sprintf("zip-%05d", i%5000))},
			Aggs: []int64{int64(i%97) - 3, int64(i) * 1000},
		})
	}
	return rel
}

func TestStoredRoundTrip(t *testing.T) {
	all := []ir.Value{ir.Null(), ir.Int(math.MinInt64), ir.Int(math.MaxInt64), ir.Float(math.Copysign(0, -1)),
		ir.Float(math.Inf(1)), ir.Float(0.1), ir.String(""), ir.String("\xff\xfe not utf-8"), ir.Bool(true), ir.Bool(false),
		{Kind: ir.KindDate, Int: -719162}, {Kind: ir.KindTimestamp, Int: 1 << 50}, {Kind: ir.KindTimestampTZ, Int: -1}}
	tests := []struct {
		name string
		rel  *stored
	}{
		{"empty", &stored{Version: 1}},
		{"no keys", &stored{Version: 1, Rows: []storedRow{{Aggs: []int64{math.MinInt64, 0, math.MaxInt64}}}}},
		{"every kind", &stored{Version: 1, Rows: []storedRow{{Keys: all, Aggs: []int64{}, Set: 3}}}},
		{"large (compressed)", bigRelease(5000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := encodeStored(tt.rel)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeStored(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Rows) != len(tt.rel.Rows) {
				t.Fatalf("%d rows back, want %d", len(got.Rows), len(tt.rel.Rows))
			}
			for i := range got.Rows {
				w, g := tt.rel.Rows[i], got.Rows[i]
				if g.Set != w.Set || !slicesEqualAggs(g.Aggs, w.Aggs) || len(g.Keys) != len(w.Keys) {
					t.Fatalf("row %d = %+v, want %+v", i, g, w)
				}
				for j := range g.Keys {
					// Bits, not ==: -0 and NaN must come back as they were.
					if g.Keys[j].Kind != w.Keys[j].Kind || g.Keys[j].Int != w.Keys[j].Int || g.Keys[j].Str != w.Keys[j].Str ||
						g.Keys[j].Bool != w.Keys[j].Bool || math.Float64bits(g.Keys[j].Float) != math.Float64bits(w.Keys[j].Float) {
						t.Fatalf("row %d key %d = %+v, want %+v", i, j, g.Keys[j], w.Keys[j])
					}
				}
			}
		})
	}
}

func slicesEqualAggs(a, b []int64) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

// Releases stored by earlier versions (JSON) still decode.
func TestStoredDecodesJSON(t *testing.T) {
	rel := &stored{Version: 1, Rows: []storedRow{{Keys: []ir.Value{ir.String("a")}, Aggs: []int64{7}, Set: 1}}}
	old, err := json.Marshal(rel)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeStored(old)
	if err != nil || !reflect.DeepEqual(got, rel) {
		t.Fatalf("decode JSON = %+v, %v; want %+v", got, err, rel)
	}
}

// Every cut of a valid encoding is refused, never misread.
func TestStoredTruncated(t *testing.T) {
	b, err := encodeStored(&stored{Version: 1, Rows: []storedRow{{Keys: []ir.Value{ir.String("abc"), ir.Float(1)}, Aggs: []int64{300}}}})
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(b) {
		if _, err := decodeStored(b[:n]); err == nil {
			t.Errorf("a release cut to %d of %d bytes decoded", n, len(b))
		}
	}
}

func FuzzDecodeStored(f *testing.F) {
	for _, rel := range []*stored{{Version: 1}, bigRelease(3), bigRelease(600)} {
		b, err := encodeStored(rel)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"v":1,"rows":[{"a":[1]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rel, err := decodeStored(data)
		if err != nil {
			return
		}
		// What decodes re-encodes to something that decodes the same.
		b, err := encodeStored(rel)
		if err != nil {
			return // JSON may hold kinds the binary form refuses
		}
		back, err := decodeStored(b)
		if err != nil || len(back.Rows) != len(rel.Rows) {
			t.Fatalf("re-encoded release does not decode: %v", err)
		}
	})
}

// TestStoredSize measures what a 100k-row release costs in the ledger
// file, in JSON (before) and in the binary form (after), and requires the
// binary form to be at least 5 times smaller on disk.
func TestStoredSize(t *testing.T) {
	if testing.Short() {
		t.Skip("writes two ledgers with 100k-row releases")
	}
	rel := bigRelease(100_000)
	js, err := json.Marshal(rel)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := encodeStored(rel)
	if err != nil {
		t.Fatal(err)
	}
	perRelease := func(enc []byte) int64 {
		path := filepath.Join(t.TempDir(), "ledger.db")
		l, err := ledger.Open(path, ledger.Options{})
		if err != nil {
			t.Fatal(err)
		}
		before := fileSize(t, path)
		const n = 4
		for i := range n {
			r, err := l.Charge(context.Background(), budget.Charge{User: "u", Dataset: "d", Cost: budget.Budget{Epsilon: 0.1}}, budget.Budget{Epsilon: 10})
			if err != nil {
				t.Fatal(err)
			}
			// Distinct contents, as distinct queries release.
			v := append(bytes.Clone(enc), byte(i))
			if _, err := r.Commit(fmt.Sprintf("key%d", i), v); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		return (fileSize(t, path) - before) / n
	}
	jsonDisk, binDisk := perRelease(js), perRelease(bin)
	t.Logf("100k-row release: JSON %d bytes (%d in the ledger file), binary %d bytes (%d in the ledger file)", len(js), jsonDisk, len(bin), binDisk)
	if binDisk*5 > jsonDisk {
		t.Errorf("binary release takes %d bytes of ledger file, JSON %d: want at least 5× smaller", binDisk, jsonDisk)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
