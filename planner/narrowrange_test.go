package planner_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
)

// TestWhereRangesNarrowDerivedKeys: a WHERE range on a bounded column
// narrows the key set derived from it (Superset's time filter with a
// monthly bucket gives the filtered months, not the declared year's).
func TestWhereRangesNarrowDerivedKeys(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol := datesPolicy(t)
	p := planner.New(pol)
	month := func(m int) ir.Value {
		v, err := ir.ParseTime(ir.KindTimestamp, fmt.Sprintf("2010-%02d-01", m))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		d    parser.Dialect
		sql  string
		want []ir.Value
	}{
		{parser.Postgres, "SELECT date_trunc('month', at), COUNT(*) FROM visits WHERE at >= '2010-04-01' AND at < '2010-07-01' GROUP BY 1",
			[]ir.Value{month(4), month(5), month(6)}},
		{parser.Postgres, "SELECT date_trunc('month', at), COUNT(*) FROM visits WHERE at BETWEEN '2010-11-15' AND '2011-06-01' GROUP BY 1",
			[]ir.Value{month(11), month(12)}}, // beyond the bounds: the clamp's edge
		{parser.MySQL, "SELECT amount DIV 10 * 10 AS b, COUNT(*) FROM visits WHERE amount > 35 AND 60 >= amount GROUP BY b",
			[]ir.Value{ir.Int(30), ir.Int(40), ir.Int(50), ir.Int(60)}},
		{parser.Postgres, "SELECT amount % 3, COUNT(*) FROM visits WHERE amount = 7 GROUP BY 1", []ir.Value{ir.Int(1)}},
	}
	for _, tc := range tests {
		pl, err := planDates(t, p, pol, tc.d, tc.sql)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if got := pl.Groups[0].Domain; !slices.Equal(got, tc.want) {
			t.Errorf("%s: keys %v, want %v", tc.sql, got, tc.want)
		}
	}
}

// TestWhereRangesNarrowSoundly is the brute-force check: for random WHERE
// ranges (strict and not, both sides, past the bounds) and key
// expressions over a column bounded [0, 100], every key a stored value
// passing WHERE can have — computed as PostgreSQL would from the value
// clamped to the bounds — is in the narrowed key set.
func TestWhereRangesNarrowSoundly(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol := datesPolicy(t)
	p := planner.New(pol)
	keys := []struct {
		sql string
		f   func(int64) int64
	}{
		{"amount / 7 * 7", func(x int64) int64 { return x / 7 * 7 }},
		{"amount % 9", func(x int64) int64 { return x % 9 }},
		{"abs(amount - 50) * 2", func(x int64) int64 { return max(x-50, 50-x) * 2 }},
		{"CASE WHEN amount < 20 THEN 1 WHEN amount < 70 THEN 2 ELSE 3 END", func(x int64) int64 {
			switch {
			case x < 20:
				return 1
			case x < 70:
				return 2
			}
			return 3
		}},
	}
	ops := []string{"<", "<=", ">", ">=", "="}
	holds := func(op string, v, c int64) bool {
		switch op {
		case "<":
			return v < c
		case "<=":
			return v <= c
		case ">":
			return v > c
		case ">=":
			return v >= c
		}
		return v == c
	}
	rng := rand.New(rand.NewPCG(11, 13))
	for i := 0; i < 400; i++ {
		k := keys[rng.IntN(len(keys))]
		op1, op2 := ops[rng.IntN(len(ops))], ops[rng.IntN(len(ops))]
		c1, c2 := int64(rng.IntN(130))-15, int64(rng.IntN(130))-15
		sql := fmt.Sprintf("SELECT %s AS k, COUNT(*) FROM visits WHERE amount %s %d AND amount %s %d GROUP BY 1", k.sql, op1, c1, op2, c2)
		pl, err := planDates(t, p, pol, parser.Postgres, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		dom := pl.Groups[0].Domain
		for v := int64(-20); v <= 120; v++ { // stored values, in and out of the bounds
			if !holds(op1, v, c1) || !holds(op2, v, c2) {
				continue
			}
			key := ir.Int(k.f(min(max(v, 0), 100)))
			if !slices.Contains(dom, key) {
				t.Fatalf("%s: stored %d has key %v, not in the key set %v", sql, v, key, dom)
			}
		}
	}
}
