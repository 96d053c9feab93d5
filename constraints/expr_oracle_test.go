package constraints

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/sensitivity/oracle"
)

// randomRowQuery is SUM(f(row)) or COUNT(f(row)) WHERE w(row) GROUP BY
// g(row) for arbitrary functions of the whole tuple: every value of the
// domain gets a random predicate bit, group and summand. These are the
// queries expression aggregates and grouping expressions send.
func randomRowQuery(r *rand.Rand, n int) oracle.Aggregate {
	a := oracle.Aggregate{Where: make([]bool, n)}
	for v := range a.Where {
		a.Where[v] = r.IntN(4) > 0
	}
	if r.IntN(3) > 0 {
		a.Groups = 1 + r.IntN(3)
		a.GroupOf = make([]int, n)
		for v := range a.GroupOf {
			a.GroupOf[v] = r.IntN(a.Groups)
		}
	}
	if r.IntN(3) > 0 {
		a.Lo = int64(r.IntN(7)) - 4
		a.Hi = a.Lo + int64(r.IntN(6))
		a.Value = make([]int64, n)
		for v := range a.Value {
			a.Value[v] = a.Lo - 1 + r.Int64N(a.Hi-a.Lo+3)
		}
	}
	return a
}

// perChange is c(q) brute-forced: the largest ‖q({y}) − q({x})‖₁ over
// single-tuple changes x → y allowed by edge (nil: any change). For a
// query that adds up a contribution per row this is the change of q when
// one tuple changes, whatever the other tuples are.
func perChange(n int, q oracle.Query, edge func(x, y int) bool) int64 {
	var best int64
	for x := range n {
		for y := range n {
			if x == y || (edge != nil && !edge(x, y)) {
				continue
			}
			qx, qy := q(oracle.Database{{x}}), q(oracle.Database{{y}})
			var s int64
			for i := range qx {
				s += max(qx[i]-qy[i], qy[i]-qx[i])
			}
			best = max(best, s)
		}
	}
	return best
}

// TestBlowfishRowQueriesAgainstOracle: the composition S(q) ≤ maxT · c(q)
// that the planner uses holds for arbitrary per-row aggregates (sums of
// any f(row), counts, grouping by any g(row)), with c(q) brute-forced over
// single changes (any change under the literal reading, G's edges under
// secrets-only) and maxT from the load-time analysis: the only fact about
// the query the bound needs is that it adds up one contribution per row.
func TestBlowfishRowQueriesAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 4))
	const n = 3
	checked := 0
	for range 150 {
		d := randomDomain(r)
		s := d.system()
		for range 1 + r.IntN(2) {
			s.Constraints = append(s.Constraints, randomConstraint(r, d, s))
		}
		g, edge, gname := secretsFor(r, d)
		q := randomRowQuery(r, d.size()).Query()
		for _, secretsOnly := range []bool{false, true} {
			b, err := BlowfishBound(s, g, secretsOnly)
			if errors.Is(err, ErrUnbounded) {
				continue
			} else if err != nil {
				t.Fatal(err)
			}
			var e func(x, y int) bool
			if secretsOnly {
				e = edge
			}
			c := perChange(d.size(), q, e)
			pol := oracle.BlowfishPolicy{Domain: d.size(), N: n, Edge: edge, Counts: predicates(withoutTotal(s), d), SecretsOnly: secretsOnly}
			w, err := oracle.BlowfishMaxL1(pol, q)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			if w.L1 > b.MaxT*c {
				t.Fatalf("%v %s, %s, secretsOnly=%v: oracle %d > maxT %d × c %d; witness %v → %v", d.sizes, gname, s.allNames(), secretsOnly, w.L1, b.MaxT, c, w.D1, w.D2)
			}
		}
	}
	t.Logf("%d cases checked", checked)
	if checked < 100 {
		t.Errorf("only %d cases checked", checked)
	}
}
