package quantile

import (
	"math/big"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/sensitivity"
	"github.com/ddp-proxy/ddp-proxy/sensitivity/oracle"
)

// TestRankSensitivityAgainstOracle checks the sensitivity the planner uses
// for a grouped quantile, Δu = max(r, q−r)·S with S the histogram's L1
// sensitivity, against the brute-force oracle's neighbours: every database
// of up to 3 units over 2 groups × 3 bins (a row's value v is group v/3,
// bin v%3), every neighbour pair under unbounded and bounded DP with k = 1
// and 2 and under induced neighbours of one published count, and every
// test fraction. For each pair it sums over groups the largest change of
// any candidate's utility — the quantity the exponential mechanism's
// privacy loss is 2a times — and requires it to be at most Δu, where S is
// both the oracle's histogram sensitivity and (for DP) the closed form
// sensitivity.DP the planner calls. In every space some pair and fraction
// attains the bound, so it is the tight one.
func TestRankSensitivityAgainstOracle(t *testing.T) {
	const groups, bins = 2, 3
	hist := func(d oracle.Database) []int64 {
		h := make([]int64, groups*bins)
		for _, v := range d.Rows() {
			h[v]++
		}
		return h
	}
	inFirstTwo := func(v int) bool { return v%bins < 2 && v/bins == 0 }
	spaces := []struct {
		name   string
		space  oracle.Space
		nb     oracle.Neighbours
		closed func() (int64, error) // the planner's closed form, nil for induced
	}{
		{"unbounded k=1", oracle.Space{Domain: groups * bins, MaxUnits: 3, RowsPerUnit: 1}, oracle.Unbounded,
			func() (int64, error) { return sensitivity.Histogram(sensitivity.Unbounded, 1) }},
		{"unbounded k=2", oracle.Space{Domain: groups * bins, MaxUnits: 3, RowsPerUnit: 2}, oracle.Unbounded,
			func() (int64, error) { return sensitivity.Histogram(sensitivity.Unbounded, 2) }},
		{"bounded k=1", oracle.Space{Domain: groups * bins, MaxUnits: 3, RowsPerUnit: 1}, oracle.Bounded,
			func() (int64, error) { return sensitivity.Histogram(sensitivity.Bounded, 1) }},
		{"bounded k=2", oracle.Space{Domain: groups * bins, MaxUnits: 2, RowsPerUnit: 2}, oracle.Bounded,
			func() (int64, error) { return sensitivity.Histogram(sensitivity.Bounded, 2) }},
		{"induced, one published count", oracle.Space{Domain: groups * bins, MaxUnits: 3, RowsPerUnit: 1},
			oracle.Induced([]func(int) bool{inFirstTwo}), nil},
	}
	for _, sp := range spaces {
		t.Run(sp.name, func(t *testing.T) {
			u, err := oracle.NewUniverse(sp.space)
			if err != nil {
				t.Fatal(err)
			}
			pairs := oracle.NewPairs(u, sp.nb)
			if pairs.Len() == 0 {
				t.Fatal("no neighbour pairs: the check would be vacuous")
			}
			s := pairs.MaxL1(hist).L1
			if sp.closed != nil {
				c, err := sp.closed()
				if err != nil {
					t.Fatal(err)
				}
				if c < s {
					t.Fatalf("closed-form histogram sensitivity %d below the oracle's %d", c, s)
				}
				s = c
			}
			tight := false
			for _, p := range testFractions {
				f := mustFraction(t, p)
				// Utilities of every database, per group.
				us := make([][][]*big.Int, len(u.DBs))
				for i, d := range u.DBs {
					h := hist(d)
					for g := range groups {
						us[i] = append(us[i], Utilities(h[g*bins:(g+1)*bins], f))
					}
				}
				bound := new(big.Int).Mul(f.Lipschitz(), big.NewInt(s))
				for i, d := range u.DBs {
					for d2 := range sp.nb(u, d) {
						j, ok := u.Index(d2)
						if !ok || j == i {
							continue
						}
						sum := new(big.Int)
						for g := range groups {
							sum.Add(sum, maxChange(us[i][g], us[j][g]))
						}
						switch sum.Cmp(bound) {
						case 1:
							t.Fatalf("p=%v: %v → %v changes the utilities by %v over groups > max(r, q−r)·S = %v", p, d, d2, sum, bound)
						case 0:
							tight = true
						}
					}
				}
			}
			if !tight {
				t.Errorf("the bound is never attained for any fraction")
			}
			t.Logf("%d pairs, histogram sensitivity %d, bound attained: %v", pairs.Len(), s, tight)
		})
	}
}
