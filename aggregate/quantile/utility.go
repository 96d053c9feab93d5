package quantile

import (
	"errors"
	"math"
	"math/big"

	"github.com/ddp-proxy/ddp-proxy/noise"
)

// Fraction is the quantile's fraction p = r/q in lowest terms, 0 ≤ p ≤ 1:
// a literal of the query (MIN is 0, MAX 1, median 1/2), hence public.
type Fraction struct{ r, q *big.Int }

// NewFraction checks 0 ≤ p ≤ 1.
func NewFraction(p *big.Rat) (Fraction, error) {
	if p == nil || p.Sign() < 0 || p.Cmp(big.NewRat(1, 1)) > 0 {
		return Fraction{}, errors.New("quantile: fraction outside [0, 1]")
	}
	return Fraction{r: new(big.Int).Set(p.Num()), q: new(big.Int).Set(p.Denom())}, nil
}

// Rat returns p.
func (f Fraction) Rat() *big.Rat { return new(big.Rat).SetFrac(f.r, f.q) }

// Lipschitz is max(r, q−r): the utilities below, which are scaled by q,
// change by at most this much per unit of L1 change of the bin counts.
func (f Fraction) Lipschitz() *big.Int {
	return bigMax(f.r, new(big.Int).Sub(f.q, f.r))
}

// Utilities returns, for per-bin counts c_0…c_{m−1} (rows of one group in
// each candidate bin, in increasing order), the utility of each candidate
// scaled by q so that it is an exact integer:
//
//	U_j = −max(q·C_<(j) − r·(n−1),  r·(n−1) + q − q·C_≤(j),  0)
//
// with C_<(j) = Σ_{b<j} c_b, C_≤(j) = C_<(j) + c_j and n = Σ c_b. Divided
// by q it is minus the distance from the target position h = p·(n−1)
// (0-based; where percentile_cont interpolates) to the interval
// [C_<(j), C_≤(j) − 1] of positions bin j's rows occupy in sorted order:
// 0 when bin j holds the row at position h, and the best candidates are
// always the bins of the rows at positions ⌊h⌋ and ⌈h⌉ (utility_test.go
// checks this against sorted data). For p = 0 the best bin is the one of
// the smallest row, for p = 1 of the largest; for an empty group (n = 0)
// every candidate has the same utility, so the choice is uniform.
//
// Lipschitz property (the sensitivity argument). Each of the three terms
// is an affine function of the counts: the first has coefficient q − r on
// c_b for b < j and −r for b ≥ j; the second r for b > j and r − q for
// b ≤ j; the third none. A maximum of functions whose coefficients are all
// at most L = max(r, q−r) in magnitude is L-Lipschitz in the L1 norm, so
//
//	|U_j(c) − U_j(c')| ≤ L·‖c − c'‖₁   for every j and count vectors c, c'.
//
// Summing over groups, Σ_g max_j |ΔU_gj| ≤ L·Σ_g ‖Δc_g‖₁, which is L times
// the L1 change of the histogram GROUP BY (keys…, bin(x)). TestLipschitz
// checks it by brute force.
func Utilities(counts []int64, f Fraction) []*big.Int {
	var n big.Int
	for _, c := range counts {
		n.Add(&n, big.NewInt(c))
	}
	// h·q = r·(n−1)
	hq := new(big.Int).Sub(&n, big.NewInt(1))
	hq.Mul(hq, f.r)
	out := make([]*big.Int, len(counts))
	var below big.Int // C_<(j)
	for j, c := range counts {
		atOrBelow := new(big.Int).Add(&below, big.NewInt(c))
		a := new(big.Int).Mul(f.q, &below)
		a.Sub(a, hq)
		b := new(big.Int).Add(hq, f.q)
		b.Sub(b, new(big.Int).Mul(f.q, atOrBelow))
		u := bigMax(bigMax(a, b), new(big.Int))
		out[j] = u.Neg(u)
		below.Set(atOrBelow)
	}
	return out
}

// Deficits returns d_j = max_i U_i − U_j ≥ 0 (at least one is 0), the
// input of noise.Exponential.
func Deficits(counts []int64, f Fraction) []*big.Int {
	u := Utilities(counts, f)
	best := u[0]
	for _, x := range u {
		best = bigMax(best, x)
	}
	for j, x := range u {
		u[j] = new(big.Int).Sub(best, x)
	}
	return u
}

// UtilitySensitivity returns Δu = L·S in the utilities' scaled units,
// where S is the L1 sensitivity of the histogram GROUP BY (keys…, bin(x))
// under the privacy model in force (see Utilities for why).
func UtilitySensitivity(histogram *big.Rat, f Fraction) *big.Rat {
	return new(big.Rat).Mul(histogram, new(big.Rat).SetInt(f.Lipschitz()))
}

// Select is the exponential mechanism over one group's bin counts: it
// returns candidate j with probability exactly ∝ exp(−a·d_j), d_j from
// Deficits, a the rate (noise.RateFor(UtilitySensitivity(S, f), ε)).
// Counts must be non-negative (the backend's COUNT).
func Select(src noise.Source, a noise.Rate, counts []int64, f Fraction) int {
	if d, ok := distances64(counts, f); ok {
		// The sampler shifts by the smallest distance: the deficits.
		return noise.ExponentialUint64(src, a, d)
	}
	return noise.Exponential(src, a, Deficits(counts, f))
}

// distances64 is −U_j (see Utilities) in 64-bit arithmetic, when every
// intermediate value fits: q < 2^31 and n < 2^31 keep q·n and r·n below
// 2^62. It saves the big.Int work for the usual fractions (0.5, 0.95)
// and group sizes; ok is false otherwise.
func distances64(counts []int64, f Fraction) ([]uint64, bool) {
	const limit = 1 << 31
	if !f.q.IsInt64() || f.q.Int64() >= limit {
		return nil, false
	}
	q, r := f.q.Int64(), f.r.Int64()
	var n int64
	for _, c := range counts {
		if c < 0 || c >= limit {
			return nil, false
		}
		if n += c; n >= limit {
			return nil, false
		}
	}
	hq := r * (n - 1)
	out := make([]uint64, len(counts))
	var below int64
	for j, c := range counts {
		atOrBelow := below + c
		out[j] = uint64(max(q*below-hq, hq+q-q*atOrBelow, 0))
		below = atOrBelow
	}
	return out, true
}

// rankConfidence is the probability with which RankError holds.
const rankConfidence = 0.95

// RankError returns R, in rows, such that with probability at least 95%
// the candidate Select returns is at most R rows away (in sorted order)
// from the target position p·(n−1): explain's "rank error ≤ R rows (95%)".
//
// Derivation: the best candidate is within 1/2 row of the target (see
// Utilities). A candidate whose deficit is at least D = (ln m + ln 20)/a
// has probability at most exp(−a·D)/Z with Z ≥ 1, and there are at most m
// of them, so P(deficit ≥ D) ≤ m·exp(−a·D) = 1/20. Deficits are in units
// of 1/q row: R = D/q + 1/2, rounded up. Since a ≤ ε/(2Δu) this is at
// least the textbook (2Δu/ε)(ln m + ln 20). Floats only bound a public
// number here, with a relative margin so rounding can only make R larger.
// It returns +Inf for the zero rate (uniform choice).
func RankError(a noise.Rate, f Fraction, m int) float64 {
	if a.IsZero() {
		return math.Inf(1)
	}
	qf, _ := new(big.Rat).SetInt(f.q).Float64()
	d := (math.Log(float64(max(m, 1))) + math.Log(1/(1-rankConfidence))) / (a.Float64() * qf)
	r := d + 0.5
	return math.Ceil(r + 1e-9*r)
}

func bigMax(a, b *big.Int) *big.Int {
	if a.Cmp(b) >= 0 {
		return a
	}
	return b
}
