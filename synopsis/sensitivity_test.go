package synopsis

import (
	"fmt"
	"iter"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/sensitivity/oracle"
)

// unitVectors returns the node vectors (noisy S nodes, H nodes, total) of
// a database holding one row at index i.
func unitVectors(l *Layout, i int) (s, h []int64, total int64) {
	hist := l.Histogram()
	hist[i] = 1
	s, h = l.Nodes(hist)
	return s[:len(s)-1], h, s[len(s)-1]
}

func l1(a, b []int64) int64 {
	var d int64
	for i := range a {
		d += max(a[i]-b[i], b[i]-a[i])
	}
	return d
}

func isPowerOf(w, f int) bool {
	p := 1
	for p < w {
		p *= f
	}
	return p == w
}

// TestSensitivityBruteForce enumerates every single-row move x → y with
// 0 < |x−y| ≤ θ on small domains and checks the L1 change of the released
// node vectors against Layout.Sensitivity: never above (safe), equal where
// the derivation says it is tight (ΔS whenever K ≥ 2, ΔH whenever the
// block width is a power of f), and the total never changes. The node
// vector is linear in the histogram, so one row in an otherwise arbitrary
// database gives the same differences; TestSensitivityOracle covers
// whole databases and k = 2.
func TestSensitivityBruteForce(t *testing.T) {
	cases := 0
	for n := 1; n <= 26; n++ {
		for f := 2; f <= 5; f++ {
			for theta := 1; theta <= n+2; theta++ {
				mech := OrderedHierarchical
				if theta == 1 {
					mech = Ordered
				}
				for _, m := range []string{mech, Hierarchical} {
					l, err := NewLayout(Config{Mechanism: m, Lo: 10, Hi: int64(9 + n), Theta: int64(theta), Fanout: f, RowsPerUnit: 1})
					if err != nil {
						t.Fatal(err)
					}
					th := theta
					if m == Hierarchical {
						th = n // any move is a neighbour under bounded DP
					}
					ds, dh := l.Sensitivity()
					var maxS, maxH int64
					for x := range n {
						sx, hx, tx := unitVectors(l, x)
						for y := max(0, x-th); y <= min(n-1, x+th); y++ {
							if y == x {
								continue
							}
							sy, hy, ty := unitVectors(l, y)
							if tx != ty {
								t.Fatalf("%v: the total changed on %d→%d", l, x, y)
							}
							maxS = max(maxS, l1(sx, sy))
							maxH = max(maxH, l1(hx, hy))
						}
					}
					name := fmt.Sprintf("%s N=%d θ=%d f=%d", m, n, theta, f)
					if maxS > ds || maxH > dh {
						t.Fatalf("%s: brute force ΔS=%d ΔH=%d exceeds the claimed %d, %d", name, maxS, maxH, ds, dh)
					}
					if l.Blocks() >= 2 && maxS != ds {
						t.Errorf("%s: ΔS=%d claimed, brute force %d (claimed tight)", name, ds, maxS)
					}
					if l.width > 1 && isPowerOf(l.width, f) && n > 1 && maxH != dh {
						t.Errorf("%s: ΔH=%d claimed, brute force %d (claimed tight)", name, dh, maxH)
					}
					cases++
				}
			}
		}
	}
	t.Logf("%d layouts checked", cases)
}

// TestPaperRootTrap pins down why the block roots are not H nodes: had
// they been (Blowfish Fig. 2(a) draws them as H nodes), a move between
// adjacent blocks would change 2h+2 H counts, more than the paper's 2h.
func TestPaperRootTrap(t *testing.T) {
	l, err := NewLayout(Config{Mechanism: OrderedHierarchical, Lo: 0, Hi: 7, Theta: 4, Fanout: 2, RowsPerUnit: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, dh := l.Sensitivity()
	h := 2 // ⌈log_2 4⌉
	if dh != int64(2*h) {
		t.Fatalf("ΔH = %d, want 2h = %d", dh, 2*h)
	}
	// Move 3 → 4 (distance 1 ≤ θ) crosses the block boundary: it leaves
	// leaf 3 and node [2,4) of block 0 and enters leaf 4 and [4,6) of
	// block 1 (4 H nodes), and both block totals change (2 more if they
	// were H nodes).
	_, h3, _ := unitVectors(l, 3)
	_, h4, _ := unitVectors(l, 4)
	if got := l1(h3, h4); got != 4 {
		t.Fatalf("H change of 3→4 = %d, want 4", got)
	}
	s3, _ := l.Nodes(oneAt(l, 3))
	s4, _ := l.Nodes(oneAt(l, 4))
	blockTotals := func(s []int64) []int64 { return []int64{s[0], s[1] - s[0]} }
	if got := l1(blockTotals(s3), blockTotals(s4)); got != 2 {
		t.Fatalf("block totals change by %d, want 2 (2h+2 with roots as H nodes)", got)
	}
}

func oneAt(l *Layout, i int) []int64 {
	h := l.Histogram()
	h[i] = 1
	return h
}

// distanceNeighbours is the Blowfish distance-θ relation written from its
// definition for the oracle: one unit's rows each move by at most θ within
// the domain (at least one row moves).
func distanceNeighbours(theta int) oracle.Neighbours {
	return func(u *oracle.Universe, d oracle.Database) iter.Seq[oracle.Database] {
		return func(yield func(oracle.Database) bool) {
			for i, un := range d {
				moved := make([]int, len(un))
				var rec func(j int) bool
				rec = func(j int) bool {
					if j == len(un) {
						same := true
						for r := range un {
							same = same && moved[r] == un[r]
						}
						if same {
							return true
						}
						d2 := append(oracle.Database(nil), d...)
						d2[i] = append(oracle.Unit(nil), moved...)
						return yield(d2)
					}
					for v := max(0, un[j]-theta); v <= min(u.Space.Domain-1, un[j]+theta); v++ {
						moved[j] = v
						if !rec(j + 1) {
							return false
						}
					}
					return true
				}
				if !rec(0) {
					return
				}
			}
		}
	}
}

// TestSensitivityOracle runs the project's brute-force oracle: every
// database of up to 3 units (k = 1 or 2 rows each) over a domain of up to
// 7 values, neighbours straight from the distance-θ definition, and the
// largest L1 change of the S and H node vectors.
func TestSensitivityOracle(t *testing.T) {
	for _, k := range []int{1, 2} {
		for _, n := range []int{5, 7} {
			units := 3
			if k == 2 {
				units = 2
			}
			space := oracle.Space{Domain: n, MaxUnits: units, RowsPerUnit: k}
			uni, err := oracle.NewUniverse(space)
			if err != nil {
				t.Fatal(err)
			}
			for theta := 1; theta <= n; theta++ {
				pairs := oracle.NewPairs(uni, distanceNeighbours(theta))
				for _, f := range []int{2, 3} {
					mech := OrderedHierarchical
					if theta == 1 {
						mech = Ordered
					}
					l, err := NewLayout(Config{Mechanism: mech, Lo: 0, Hi: int64(n - 1), Theta: int64(theta), Fanout: f, RowsPerUnit: k})
					if err != nil {
						t.Fatal(err)
					}
					part := func(which int) oracle.Query {
						return func(d oracle.Database) []int64 {
							hist := l.Histogram()
							for _, r := range d.Rows() {
								hist[r]++
							}
							s, h := l.Nodes(hist)
							switch which {
							case 0:
								return s[:len(s)-1]
							case 1:
								return h
							}
							return s[len(s)-1:]
						}
					}
					ds, dh := l.Sensitivity()
					for which, want := range []int64{ds, dh, 0} {
						w := pairs.MaxL1(part(which))
						if w.L1 > want {
							t.Fatalf("%v k=%d θ=%d: node part %d changes by %d > claimed %d (witness %v → %v)",
								l, k, theta, which, w.L1, want, w.D1, w.D2)
						}
						if which == 0 && l.Blocks() >= 2 && w.L1 != want {
							t.Errorf("%v k=%d θ=%d: ΔS not tight: oracle %d, claimed %d", l, k, theta, w.L1, want)
						}
					}
				}
			}
		}
	}
}

// TestSensitivityBlowfishOracle cross-checks with the oracle's own
// implementation of Blowfish Def. 4.1 (written independently of
// distanceNeighbours above): distance-θ secrets, no published counts,
// 3 individuals over up to 8 values.
func TestSensitivityBlowfishOracle(t *testing.T) {
	for _, n := range []int{6, 8} {
		for theta := 1; theta <= n; theta++ {
			for _, f := range []int{2, 3} {
				mech := OrderedHierarchical
				if theta == 1 {
					mech = Ordered
				}
				l, err := NewLayout(Config{Mechanism: mech, Lo: 0, Hi: int64(n - 1), Theta: int64(theta), Fanout: f, RowsPerUnit: 1})
				if err != nil {
					t.Fatal(err)
				}
				th := theta
				pol := oracle.BlowfishPolicy{Domain: n, N: 3, Edge: func(x, y int) bool { return max(x-y, y-x) <= th }}
				ds, dh := l.Sensitivity()
				for which, want := range []int64{ds, dh, 0} {
					w, err := oracle.BlowfishMaxL1(pol, func(d oracle.Database) []int64 {
						hist := l.Histogram()
						for _, r := range d.Rows() {
							hist[r]++
						}
						s, h := l.Nodes(hist)
						return [][]int64{s[:len(s)-1], h, s[len(s)-1:]}[which]
					})
					if err != nil {
						t.Fatal(err)
					}
					if w.L1 > want || w.MaxT > 1 {
						t.Fatalf("%v: part %d: Def. 4.1 oracle L1 %d (maxT %d) > claimed %d; witness %v → %v", l, which, w.L1, w.MaxT, want, w.D1, w.D2)
					}
					if which < 2 && w.L1 != want && (which == 0 || isPowerOf(theta, f)) {
						t.Errorf("%v: part %d: claimed %d, oracle %d (claimed tight)", l, which, want, w.L1)
					}
				}
			}
		}
	}
}
