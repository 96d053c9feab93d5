package release_test

import (
	"math"
	"reflect"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// TestSelectExpressionsOnNoisyRows: select-list expressions are computed
// on the noisy row, typed, and share the release (and its single charge)
// with the plain query over the same aggregates.
func TestSelectExpressionsOnNoisyRows(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(7)})
	plain, err := f.run(t, e, "alice", "SELECT sex, COUNT(*), AVG(age) FROM people GROUP BY sex", 1)
	if err != nil {
		t.Fatal(err)
	}
	spent, _ := f.ledger.Spent("alice", "census")
	res, err := f.run(t, e, "alice",
		`SELECT sex, ROUND(AVG(age), 2) AS a, COUNT(1) AS n, 3 AS three, COUNT(*) * 100 AS c100, COALESCE(AVG(age), -1.5) AS av, 'k' AS kind, TRUE AS "_", NULL AS x FROM people GROUP BY sex`, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cached || res.Charged.Epsilon != 0 {
		t.Errorf("cached %v, charged %+v: the same aggregates must share the release", res.Cached, res.Charged)
	}
	if again, _ := f.ledger.Spent("alice", "census"); again != spent {
		t.Errorf("spent %+v, was %+v", again, spent)
	}
	wantTypes := []string{policies.TypeText, policies.TypeReal, policies.TypeInteger, policies.TypeInteger,
		policies.TypeInteger, policies.TypeReal, policies.TypeText, policies.TypeBoolean, policies.TypeText}
	wantNames := []string{"sex", "a", "n", "three", "c100", "av", "kind", "_", "x"}
	if len(res.Columns) != len(wantNames) {
		t.Fatalf("columns %+v", res.Columns)
	}
	for i, c := range res.Columns {
		if c.Name != wantNames[i] || c.Type != wantTypes[i] {
			t.Errorf("column %d = %s %s, want %s %s", i, c.Name, c.Type, wantNames[i], wantTypes[i])
		}
	}
	if len(res.Rows) != 3 || len(plain.Rows) != 3 {
		t.Fatalf("rows %v / %v: want the three domain keys", res.Rows, plain.Rows)
	}
	for i, r := range res.Rows {
		p := plain.Rows[i]
		if r[0] != p[0] {
			t.Fatalf("row %d key %v, plain %v", i, r[0], p[0])
		}
		if r[2] != p[1] || r[4].Int != p[1].Int*100 {
			t.Errorf("row %d: n %v, c100 %v; plain count %v", i, r[2], r[4], p[1])
		}
		if r[3].Int != 3 || r[6].Str != "k" || !r[7].Bool || !r[8].IsNull() {
			t.Errorf("row %d constants %v %v %v %v", i, r[3], r[6], r[7], r[8])
		}
		if p[2].IsNull() {
			if !r[1].IsNull() || r[5].Float != -1.5 {
				t.Errorf("row %d: NULL avg gives a %v, av %v", i, r[1], r[5])
			}
			continue
		}
		if want := math.Round(p[2].Float*100) / 100; r[1].Float != want || r[1].Float < 0 || r[1].Float > 100 {
			t.Errorf("row %d: a = %v, want round(%v, 2) = %v within the age bounds", i, r[1], p[2], want)
		}
		if r[5] != p[2] {
			t.Errorf("row %d: av %v, avg %v", i, r[5], p[2])
		}
	}
	// HAVING and ORDER BY reach expression outputs through their alias.
	res2, err := f.run(t, e, "alice", "SELECT sex, COUNT(*) * 100 AS c100 FROM people GROUP BY sex HAVING COUNT(*) > 100 AND AVG(age) > 0 ORDER BY c100 DESC", 1)
	if err != nil {
		t.Fatal(err)
	}
	if !res2.Cached || len(res2.Rows) != 2 || res2.Rows[0][1].Int < res2.Rows[1][1].Int {
		t.Errorf("rows %v (cached %v): want Female and Male by c100 DESC", res2.Rows, res2.Cached)
	}
}

// TestNoRowQueriesAreFree: the Metabase probe and other queries that read
// no row answer with their typed columns, no backend call and no charge,
// even for a user without budget left.
func TestNoRowQueriesAreFree(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{})
	// bob's whole budget (0.3) goes first: a charged query would now fail.
	if _, err := f.run(t, e, "bob", "SELECT COUNT(*) FROM people", 0.3); err != nil {
		t.Fatal(err)
	}
	spent, _ := f.ledger.Spent("bob", "census")
	f.be.Close() // no backend call may happen from here on
	tests := []struct {
		sql   string
		rows  [][]any
		types []string
	}{
		{`SELECT TRUE AS "_" FROM people WHERE 1 <> 1 LIMIT 0`, nil, []string{policies.TypeBoolean}},
		{"SELECT age, sex FROM people WHERE false", nil, []string{policies.TypeInteger, policies.TypeText}},
		{"SELECT sex, COUNT(*) FROM people WHERE 1 = 0 GROUP BY sex", nil, []string{policies.TypeText, policies.TypeInteger}},
		{"SELECT COUNT(*), AVG(age), COUNT(*) + 1 AS c FROM people WHERE 1 = 0", [][]any{{int64(0), nil, int64(1)}}, []string{policies.TypeInteger, policies.TypeReal, policies.TypeInteger}},
		{"SELECT COUNT(*) FROM people LIMIT 0", nil, []string{policies.TypeInteger}},
		// HAVING false: the one row of an aggregate without GROUP BY is
		// filtered out too, as in SQL.
		{"SELECT COUNT(*) FROM people HAVING 1 = 0", nil, []string{policies.TypeInteger}},
		{"SELECT * FROM (SELECT sex, COUNT(*) AS c FROM people GROUP BY sex) q WHERE 1 = 0", nil, []string{policies.TypeText, policies.TypeInteger}},
		{"SELECT * FROM (SELECT COUNT(*) AS c FROM people) q WHERE 1 = 0", nil, []string{policies.TypeInteger}},
		// SELECT * of a probe: the declared columns, typed, no row.
		{"SELECT * FROM people LIMIT 0", nil, []string{policies.TypeInteger, policies.TypeText, policies.TypeReal, policies.TypeInteger, policies.TypeInteger}},
	}
	for _, tt := range tests {
		res, err := f.run(t, e, "bob", tt.sql, 0)
		if err != nil {
			t.Errorf("%s: %v", tt.sql, err)
			continue
		}
		if !res.NoRows || res.Charged != (policies.Budget{}) {
			t.Errorf("%s: NoRows %v, charged %+v", tt.sql, res.NoRows, res.Charged)
		}
		var got [][]any
		for _, r := range res.Rows {
			var row []any
			for _, v := range r {
				if v.IsNull() {
					row = append(row, nil)
				} else {
					row = append(row, v.Int)
				}
			}
			got = append(got, row)
		}
		if !reflect.DeepEqual(got, tt.rows) {
			t.Errorf("%s: rows %v, want %v", tt.sql, got, tt.rows)
		}
		for i, c := range res.Columns {
			if c.Type != tt.types[i] {
				t.Errorf("%s: column %s type %s, want %s", tt.sql, c.Name, c.Type, tt.types[i])
			}
		}
	}
	if again, _ := f.ledger.Spent("bob", "census"); again != spent {
		t.Errorf("spent %+v, was %+v", again, spent)
	}
}

// TestOrderByExpressionOnNoisyRows sorts on a post-processing expression.
func TestOrderByExpressionOnNoisyRows(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(3)})
	// Ages 10..99 have 11 or 12 people each, the others none: ordered by
	// the distance of the noisy count from 0, the empty ages come first
	// (ε = 5: noise this small cannot move a count of 11 below 6 often).
	res, err := f.run(t, e, "alice", "SELECT age, COUNT(*) AS n FROM people GROUP BY age ORDER BY abs(COUNT(*) - 0), age LIMIT 11", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 11 || len(res.Columns) != 2 {
		t.Fatalf("%d rows, columns %+v", len(res.Rows), res.Columns)
	}
	for i, r := range res.Rows {
		if age := r[0].Int; age >= 10 && age <= 99 {
			t.Errorf("row %d: age %d (count %d) sorted among the empty ages", i, age, r[1].Int)
		}
		if i > 0 {
			prev := res.Rows[i-1][1].Int
			if abs(r[1].Int) < abs(prev) {
				t.Errorf("rows not ordered by |n|: %v after %v", r, res.Rows[i-1])
			}
		}
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
