package quantile

import (
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/noise"
)

var testFractions = []*big.Rat{
	big.NewRat(0, 1), big.NewRat(1, 4), big.NewRat(1, 3), big.NewRat(1, 2),
	big.NewRat(2, 3), big.NewRat(7, 10), big.NewRat(1, 1), big.NewRat(99, 100),
}

func mustFraction(t *testing.T, p *big.Rat) Fraction {
	t.Helper()
	f, err := NewFraction(p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// allVectors returns every count vector of length m with entries 0…top.
func allVectors(m, top int) [][]int64 {
	out := [][]int64{{}}
	for range m {
		var next [][]int64
		for _, v := range out {
			for c := 0; c <= top; c++ {
				next = append(next, append(append([]int64(nil), v...), int64(c)))
			}
		}
		out = next
	}
	return out
}

func l1(a, b []int64) int64 {
	var s int64
	for i := range a {
		s += max(a[i]-b[i], b[i]-a[i])
	}
	return s
}

// maxChange returns max_j |U_j(a) − U_j(b)|.
func maxChange(ua, ub []*big.Int) *big.Int {
	best := new(big.Int)
	for j := range ua {
		d := new(big.Int).Sub(ua[j], ub[j])
		best = bigMax(best, d.Abs(d))
	}
	return best
}

// TestLipschitz checks the sensitivity argument by brute force: for every
// pair of count vectors of length 1…4 with entries 0…3 (every pair, not
// only unit changes: a neighbour may move several rows, e.g. k rows of
// one unit, or a row between bins under bounded neighbours) and every
// fraction, max_j |ΔU_j| ≤ max(r, q−r)·‖Δc‖₁, and the constant is attained
// (so the bound is the exact Lipschitz constant, not a loose one).
func TestLipschitz(t *testing.T) {
	for _, p := range testFractions {
		f := mustFraction(t, p)
		L := f.Lipschitz()
		tight := false
		for m := 1; m <= 4; m++ {
			vs := allVectors(m, 3)
			us := make([][]*big.Int, len(vs))
			for i, v := range vs {
				us[i] = Utilities(v, f)
			}
			for i := range vs {
				for k := range vs {
					d := l1(vs[i], vs[k])
					if d == 0 {
						continue
					}
					got := maxChange(us[i], us[k])
					bound := new(big.Int).Mul(L, big.NewInt(d))
					switch got.Cmp(bound) {
					case 1:
						t.Fatalf("p=%v: counts %v → %v change a utility by %v > L·‖Δc‖₁ = %v", p, vs[i], vs[k], got, bound)
					case 0:
						tight = true
					}
				}
			}
		}
		if !tight {
			t.Errorf("p=%v: the Lipschitz constant %v is never attained", p, L)
		}
	}
}

// TestLipschitzOverGroups: for random histograms of several groups and
// random neighbours (several cells changed at once), the sum over groups
// of the largest utility change is at most L times the histogram's L1
// change — the bound the per-model histogram sensitivity supplies.
func TestLipschitzOverGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 3000 {
		f := mustFraction(t, testFractions[trial%len(testFractions)])
		groups, m := 1+rng.IntN(4), 1+rng.IntN(6)
		sum, hist := new(big.Int), int64(0)
		for range groups {
			a := make([]int64, m)
			b := make([]int64, m)
			for j := range a {
				a[j] = rng.Int64N(6)
				b[j] = a[j]
				if rng.IntN(3) == 0 {
					b[j] = max(0, a[j]+rng.Int64N(5)-2)
				}
			}
			sum.Add(sum, maxChange(Utilities(a, f), Utilities(b, f)))
			hist += l1(a, b)
		}
		if bound := new(big.Int).Mul(f.Lipschitz(), big.NewInt(hist)); sum.Cmp(bound) > 0 {
			t.Fatalf("trial %d: Σ_g max_j |ΔU| = %v > L·S = %v", trial, sum, bound)
		}
	}
}

// TestUtilitiesAgainstSortedData recomputes every utility from the sorted
// data itself — minus the distance from h = p·(n−1) to the hull of the
// positions bin j's rows occupy, or for an empty bin to the gap between
// the rows below and above it (|h − (C − 1/2)| + 1/2, C the rows below) —
// and checks that the best candidates are exactly where the true quantile
// lies: among the bins of the rows at positions ⌊h⌋ and ⌈h⌉ (for p = 0
// the minimum's bin, for p = 1 the maximum's).
func TestUtilitiesAgainstSortedData(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 4000 {
		p := testFractions[trial%len(testFractions)]
		f := mustFraction(t, p)
		m, n := 1+rng.IntN(8), rng.IntN(13)
		xs := make([]int, n)
		for i := range xs {
			xs[i] = rng.IntN(m)
		}
		sort.Ints(xs)
		counts := make([]int64, m)
		for _, x := range xs {
			counts[x]++
		}
		u := Utilities(counts, f)
		h := new(big.Rat).Mul(p, big.NewRat(int64(n)-1, 1))
		q := new(big.Rat).SetInt(f.q)
		for j := range m {
			first, last := -1, -1
			below := 0
			for i, x := range xs {
				if x == j {
					if first < 0 {
						first = i
					}
					last = i
				}
				if x < j {
					below++
				}
			}
			var dist *big.Rat
			if first >= 0 {
				a := new(big.Rat).Sub(big.NewRat(int64(first), 1), h)
				b := new(big.Rat).Sub(h, big.NewRat(int64(last), 1))
				dist = ratMax(ratMax(a, b), new(big.Rat))
			} else {
				gap := new(big.Rat).Sub(h, big.NewRat(2*int64(below)-1, 2))
				dist = new(big.Rat).Add(gap.Abs(gap), big.NewRat(1, 2))
			}
			want := new(big.Rat).Neg(new(big.Rat).Mul(dist, q))
			if !want.IsInt() || want.Num().Cmp(u[j]) != 0 {
				t.Fatalf("p=%v data %v: U_%d = %v, want %v", p, xs, j, u[j], want.RatString())
			}
		}
		if n == 0 {
			for j := range u {
				if u[j].Cmp(u[0]) != 0 {
					t.Fatalf("p=%v: empty group has unequal utilities %v", p, u)
				}
			}
			continue
		}
		// The best candidates are the bins of x_⌊h⌋ and x_⌈h⌉.
		fl := new(big.Int).Quo(h.Num(), h.Denom()).Int64()
		ce := fl
		if !h.IsInt() {
			ce++
		}
		lo, hi := xs[fl], xs[ce]
		best := u[0]
		for _, x := range u {
			best = bigMax(best, x)
		}
		if u[lo].Cmp(best) != 0 && u[hi].Cmp(best) != 0 {
			t.Fatalf("p=%v data %v: best utility %v not at the quantile's bins %d, %d (%v)", p, xs, best, lo, hi, u)
		}
		for j, x := range u {
			if x.Cmp(best) == 0 && (j < lo || j > hi) {
				t.Fatalf("p=%v data %v: bin %d is best but outside [%d, %d] (%v)", p, xs, j, lo, hi, u)
			}
		}
		if p.Sign() == 0 && u[xs[0]].Cmp(best) != 0 {
			t.Fatalf("MIN: the minimum's bin %d is not best: %v", xs[0], u)
		}
		if p.Cmp(big.NewRat(1, 1)) == 0 && u[xs[n-1]].Cmp(best) != 0 {
			t.Fatalf("MAX: the maximum's bin %d is not best: %v", xs[n-1], u)
		}
	}
}

func ratMax(a, b *big.Rat) *big.Rat {
	if a.Cmp(b) >= 0 {
		return a
	}
	return b
}

// TestDeficitsByHand: data {0, 2, 2} over three bins, median (q = 2):
// h = 1 is a row of bin 2 (deficit 0); bin 0's row is 1 position away and
// the empty bin 1 sits between positions 0 and 1 (1/2 + 1/2 away): both
// deficit 1 row = 2 in units of 1/q.
func TestDeficitsByHand(t *testing.T) {
	d := Deficits([]int64{1, 0, 2}, mustFraction(t, big.NewRat(1, 2)))
	for j, want := range []int64{2, 2, 0} {
		if d[j].Cmp(big.NewInt(want)) != 0 {
			t.Fatalf("deficits %v, want [2 2 0]", d)
		}
	}
	if _, err := NewFraction(big.NewRat(11, 10)); err == nil {
		t.Error("p = 1.1 accepted")
	}
	if _, err := NewFraction(big.NewRat(-1, 10)); err == nil {
		t.Error("p = -0.1 accepted")
	}
}

// TestSelectFrequencies: Select over the counts above at rate 1/2 returns
// bin j with probability ∝ exp(−d_j/2) = (e^−1, e^−1, 1); 200,000 draws,
// chi-square test (df 2, whose tail is exactly exp(−x/2): the critical
// value 30.1 gives a false rejection probability of 2.9e-7).
func TestSelectFrequencies(t *testing.T) {
	const draws = 200_000
	f := mustFraction(t, big.NewRat(1, 2))
	rate, err := noise.RateFor(big.NewRat(1, 1), big.NewRat(1, 1)) // a = 1/2
	if err != nil {
		t.Fatal(err)
	}
	src := noise.SeededSource(11)
	counts := make([]int, 3)
	for range draws {
		counts[Select(src, rate, []int64{1, 0, 2}, f)]++
	}
	z := 1 + 2*math.Exp(-1)
	want := []float64{math.Exp(-1) / z, math.Exp(-1) / z, 1 / z}
	var stat float64
	for j := range counts {
		e := draws * want[j]
		stat += (float64(counts[j]) - e) * (float64(counts[j]) - e) / e
	}
	if stat > 30.1 {
		t.Errorf("chi-square %.2f > 30.1: counts %v, want proportions %v", stat, counts, want)
	}
}

// TestRankErrorHolds: 1000 rows spread over 1024 bins, the median with
// ε = 1 and histogram sensitivity 1 (Δu = 1 in units of 1/2 row, a = 1/2):
// R = (ln 1024 + ln 20)/(a·q) + 1/2 = 10.42 → 11 rows. In 4000 draws the
// chosen bin must be within R rows of the target at least 95% of the time
// minus 6 standard errors (0.95 − 0.021; a correct bound fails with
// probability below 1e-9). The check is one-sided: the bound is
// conservative and is expected to hold far more often.
func TestRankErrorHolds(t *testing.T) {
	f := mustFraction(t, big.NewRat(1, 2))
	rate, err := noise.RateFor(UtilitySensitivity(big.NewRat(1, 1), f), big.NewRat(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	m := MaxCandidates
	r := RankError(rate, f, m)
	if r != 11 {
		t.Fatalf("rank error %v, want 11 (by hand)", r)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	counts := make([]int64, m)
	for range 1000 {
		counts[rng.IntN(m)]++
	}
	u := Utilities(counts, f)
	src := noise.SeededSource(12)
	const draws = 4000
	within := 0
	for range draws {
		j := Select(src, rate, counts, f)
		// −U_j/q is the chosen bin's distance from the target, in rows.
		dist := new(big.Rat).SetFrac(new(big.Int).Neg(u[j]), f.q)
		if dist.Cmp(new(big.Rat).SetFloat64(r)) <= 0 {
			within++
		}
	}
	if floor := 0.95 - 6*math.Sqrt(0.95*0.05/draws); float64(within)/draws < floor {
		t.Errorf("within %v rows in %d of %d draws (< %.3f)", r, within, draws, floor)
	}
	if !math.IsInf(RankError(noise.Rate{}, f, m), 1) {
		t.Error("zero rate: rank error should be infinite")
	}
}

// TestDistances64AgreesWithUtilities: the 64-bit path Select takes is −U_j
// exactly, on random vectors and fractions (and declines what it cannot
// hold: a denominator of 2^31 or a group of 2^31 rows).
func TestDistances64AgreesWithUtilities(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for trial := range 2000 {
		f := mustFraction(t, testFractions[trial%len(testFractions)])
		counts := make([]int64, 1+rng.IntN(20))
		for j := range counts {
			counts[j] = rng.Int64N(1000)
		}
		d, ok := distances64(counts, f)
		if !ok {
			t.Fatalf("distances64 declined %v", counts)
		}
		for j, u := range Utilities(counts, f) {
			if new(big.Int).Neg(u).Cmp(new(big.Int).SetUint64(d[j])) != 0 {
				t.Fatalf("p=%v counts %v: distance %d, utility %v", f.Rat(), counts, d[j], u)
			}
		}
	}
	if _, ok := distances64([]int64{1 << 31}, mustFraction(t, big.NewRat(1, 2))); ok {
		t.Error("a group of 2^31 rows taken in 64 bits")
	}
	if _, ok := distances64([]int64{1}, mustFraction(t, big.NewRat(1, 1<<31))); ok {
		t.Error("a denominator of 2^31 taken in 64 bits")
	}
}
