package sensitivity

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/constraints"
	"github.com/ddp-proxy/ddp-proxy/sensitivity/oracle"
)

// randomFunc draws a function of the columns cols of d's tuples into
// [0, n): tuples that agree on cols get the same value, so the function
// reads only cols (cols empty: a constant).
func randomFunc(r *rand.Rand, d bfDomain, cols []int, n int) func(v int) int {
	table := map[string]int{}
	return func(v int) int {
		t := d.tuple(v)
		key := ""
		for _, c := range cols {
			key += fmt.Sprint(t[c], ",")
		}
		if y, ok := table[key]; ok {
			return y
		}
		y := r.IntN(n)
		table[key] = y
		return y
	}
}

func randomCols(r *rand.Rand, d bfDomain) ([]int, []string) {
	var cols []int
	var names []string
	for c := range d {
		if r.IntN(2) == 0 {
			cols = append(cols, c)
			names = append(names, colName(c))
		}
	}
	return cols, names
}

// randomExprQuery is a random aggregate of the shapes the planner sends
// for expressions: COUNT(f), SUM(f) (f any function of some columns, NULL
// for some of their values, clamped to [lo, hi]), grouped by g (any
// function of some columns), with the column sets the planner reports:
// where holds the WHERE columns and, for COUNT(f), f's columns; group the
// columns g reads; values the columns f reads. A NULL summand adds
// nothing, exactly as a row the WHERE clause drops, so the oracle folds it
// into Where.
func randomExprQuery(r *rand.Rand, d bfDomain) (q bfQuery, values []string) {
	n := d.size()
	base := randomBFQuery(r, d) // WHERE columns and predicate
	q.where = base.where
	where := base.agg.Where
	gcols, gnames := randomCols(r, d)
	grouped := r.IntN(3) > 0
	var groupOf []int
	groups := 1
	if grouped {
		groups = 1 + r.IntN(4)
		g := randomFunc(r, d, gcols, groups)
		groupOf = make([]int, n)
		for v := range n {
			groupOf[v] = g(v)
		}
		q.group = gnames
	}
	fcols, fnames := randomCols(r, d)
	nullable := r.IntN(2) == 0
	isNull := randomFunc(r, d, fcols, 3) // NULL where 0, when nullable
	pass := make([]bool, n)
	for v := range n {
		pass[v] = where[v] && !(nullable && isNull(v) == 0)
	}
	q.agg = oracle.Aggregate{Where: pass}
	if grouped {
		q.agg.GroupOf, q.agg.Groups = groupOf, groups
	}
	if r.IntN(3) == 0 {
		// COUNT(f): f's columns act as a filter.
		q.kind = KindCount
		if grouped {
			q.kind = KindHistogram
		}
		if nullable {
			for _, c := range fnames {
				q.where = appendNew(q.where, c)
			}
		}
		return q, nil
	}
	q.lo = int64(r.IntN(7)) - 4
	q.hi = q.lo + int64(r.IntN(6))
	f := randomFunc(r, d, fcols, int(q.hi-q.lo)+3)
	vals := make([]int64, n)
	for v := range n {
		vals[v] = q.lo - 1 + int64(f(v)) // also outside [lo, hi]: clamped
	}
	q.agg.Value, q.agg.Lo, q.agg.Hi = vals, q.lo, q.hi
	q.kind = KindSum
	if grouped {
		q.kind = KindGroupedSum
	}
	return q, fnames
}

func appendNew(list []string, c string) []string {
	for _, x := range list {
		if x == c {
			return list
		}
	}
	return append(list, c)
}

// TestBlowfishExprNoConstraintsAgainstOracle: without constraints the
// per-change bound with an expression's column sets (ReachExpr) is ≥ the
// oracle for random secret graphs of every kind and random expression
// sums, counts and grouping keys.
func TestBlowfishExprNoConstraintsAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 7))
	zeros, tight := 0, 0
	for trial := range 600 {
		d := randomBFDomain(r)
		q, values := randomExprQuery(r, d)
		g, _, edge := randomGraph(r, d, 1, "")
		per, err := PerChange(Aggregate{Kind: q.kind, Lo: q.lo, Hi: q.hi}, g.ReachExpr(q.where, q.group, values))
		if err != nil {
			t.Fatal(err)
		}
		w, err := oracle.BlowfishMaxL1(oracle.BlowfishPolicy{Domain: d.size(), N: 2, Edge: edge}, q.agg.Query())
		if err != nil {
			t.Fatal(err)
		}
		if w.L1 > per {
			t.Fatalf("trial %d %v %+v %v where %v group %v values %v [%d,%d]: oracle %d > %d; witness %v → %v",
				trial, d, g, q.kind, q.where, q.group, values, q.lo, q.hi, w.L1, per, w.D1, w.D2)
		}
		if per == 0 {
			zeros++
		}
		if w.L1 == per {
			tight++
		}
	}
	t.Logf("%d zero-sensitivity queries, %d tight", zeros, tight)
	if zeros < 20 || tight < 200 {
		t.Errorf("only %d zero-sensitivity and %d tight cases", zeros, tight)
	}
}

// TestBlowfishExprConstraintsAgainstOracle: with random published counts,
// maxT · c(q) bounds random expression queries under the literal reading
// (AnyChangeExpr) and under secrets-only (G's ReachExpr).
func TestBlowfishExprConstraintsAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 8))
	checked := 0
	for trial := range 300 {
		d := randomBFDomain(r)
		q, values := randomExprQuery(r, d)
		g, cg, edge := randomGraph(r, d, 1, "")
		s, preds := randomPublished(r, d)
		agg := Aggregate{Kind: q.kind, Lo: q.lo, Hi: q.hi}
		for _, secretsOnly := range []bool{false, true} {
			b, err := constraints.BlowfishBound(s, cg, secretsOnly)
			if errors.Is(err, constraints.ErrUnbounded) {
				continue
			} else if err != nil {
				t.Fatal(err)
			}
			reach := AnyChangeExpr(q.where, q.group, values)
			if secretsOnly {
				reach = g.ReachExpr(q.where, q.group, values)
			}
			per, err := PerChange(agg, reach)
			if err != nil {
				t.Fatal(err)
			}
			bound, err := Blowfish(b.MaxT, per)
			if err != nil {
				t.Fatal(err)
			}
			w, err := oracle.BlowfishMaxL1(oracle.BlowfishPolicy{Domain: d.size(), N: 3, Edge: edge, Counts: preds, SecretsOnly: secretsOnly}, q.agg.Query())
			if err != nil {
				t.Fatal(err)
			}
			checked++
			if w.L1 > bound {
				t.Fatalf("trial %d %v %+v secretsOnly=%v %v where %v group %v values %v [%d,%d]: oracle %d > maxT %d × %d; witness %v → %v",
					trial, d, g, secretsOnly, q.kind, q.where, q.group, values, q.lo, q.hi, w.L1, b.MaxT, per, w.D1, w.D2)
			}
		}
	}
	if checked < 200 {
		t.Errorf("only %d cases checked", checked)
	}
}

// TestInducedExprAgainstOracle: Induced(bounds, agg) with an expression's
// range is ≥ the induced-neighbour oracle for random expression sums and
// grouping keys (the Graver bound never looks at which columns a row's
// contribution reads).
func TestInducedExprAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 9))
	for trial := range 150 {
		d := randomBFDomain(r)
		q, _ := randomExprQuery(r, d)
		s, preds := randomPublished(r, d)
		checkInducedAgainstOracle(t, trial, d, q, s, preds)
	}
}
