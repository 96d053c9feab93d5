package synopsis

import (
	"math"
	"math/big"
	"strconv"

	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Measurement is the raw output of the mechanism: the noisy node values
// before constrained inference. Only the post-processed Synopsis is ever
// stored or answered from; Measurement exists so that tests can compare the
// raw estimator with its analytic variance.
type Measurement struct {
	// S are the S nodes; S[K−1] is the exact total (sensitivity 0).
	S []int64
	// H are the noisy H nodes.
	H []int64
	// EpsilonS and EpsilonH are the shares of ε; ScaleS and ScaleH the
	// discrete Laplace scales actually used (zero: that part has no noisy
	// node).
	EpsilonS, EpsilonH float64
	ScaleS, ScaleH     noise.Scale
}

// Histogram returns an all-zero histogram for the layout's domain.
func (l *Layout) Histogram() []int64 { return make([]int64, l.n) }

// Add counts rows of one value into hist, clamping the value into the
// domain (1-Lipschitz, so distance-θ neighbours stay neighbours).
func (l *Layout) Add(hist []int64, value, rows int64) {
	v := min(max(value, l.cfg.Lo), l.cfg.Hi)
	hist[uint64(v)-uint64(l.cfg.Lo)] += rows
}

// Measure draws the noisy nodes of hist with privacy parameter ε.
func (l *Layout) Measure(src noise.Source, hist []int64, eps float64) (*Measurement, error) {
	if len(hist) != l.n {
		return nil, sqlerr.New(sqlerr.Internal, "internal error: synopsis histogram has %d values, want %d", len(hist), l.n)
	}
	for _, c := range hist {
		if c < 0 {
			return nil, sqlerr.New(sqlerr.Internal, "internal error: negative count in a synopsis histogram")
		}
	}
	epsS, epsH, err := l.Split(eps)
	if err != nil {
		return nil, err
	}
	ds, dh := l.Sensitivity()
	m := &Measurement{EpsilonS: epsS, EpsilonH: epsH}
	if ds > 0 {
		if m.ScaleS, err = noise.ScaleFor(big.NewRat(ds, 1), epsS); err != nil {
			return nil, err
		}
	}
	if dh > 0 {
		if m.ScaleH, err = noise.ScaleFor(big.NewRat(dh, 1), epsH); err != nil {
			return nil, err
		}
	}
	m.S, m.H = l.Nodes(hist)
	for b := 0; b < len(m.S)-1; b++ { // the total s_{K−1} is exact
		m.S[b] += noise.DiscreteLaplace(src, m.ScaleS)
	}
	for i := range m.H {
		m.H[i] += noise.DiscreteLaplace(src, m.ScaleH)
	}
	return m, nil
}

// Release measures hist and post-processes the measurement into a
// Synopsis.
func (l *Layout) Release(src noise.Source, hist []int64, eps float64) (*Synopsis, error) {
	m, err := l.Measure(src, hist, eps)
	if err != nil {
		return nil, err
	}
	return l.Infer(m, eps), nil
}

// fitsRat reports whether a + b ≤ eps holds exactly, with a and b read as
// exact binary rationals and eps as the smaller of its binary value and its
// shortest decimal (what the ledger charges, see planner.scaleFor).
func fitsRat(a, b, eps float64) bool {
	s := new(big.Rat).SetFloat64(a)
	s.Add(s, new(big.Rat).SetFloat64(b))
	limit := new(big.Rat).SetFloat64(eps)
	if d, ok := new(big.Rat).SetString(strconv.FormatFloat(eps, 'g', -1, 64)); ok && d.Cmp(limit) < 0 {
		limit = d
	}
	return s.Cmp(limit) <= 0
}

// Variance is the variance of discrete Laplace noise with scale t:
// 2p/(1−p)², p = exp(−1/t) (0 for the zero scale).
func Variance(t noise.Scale) float64 {
	if t.IsZero() {
		return 0
	}
	p := math.Exp(-1 / t.Float64())
	q := -math.Expm1(-1 / t.Float64())
	return 2 * p / (q * q)
}

// RawRange answers #[a, b] (indices, a ≤ b) from the raw measurement,
// without inference: the unbiased estimator whose variance is
// RawVariance.
func (l *Layout) RawRange(m *Measurement, a, b int) int64 {
	var v int64
	for _, t := range l.rangeTerms(a, b) {
		if t.h {
			v += int64(t.coef) * m.H[t.idx]
		} else {
			v += int64(t.coef) * m.S[t.idx]
		}
	}
	return v
}

// RawVariance is the exact variance of RawRange(a, b) for noise scales ts,
// th: Σ coef²·Var over the noisy nodes of the decomposition (every
// coefficient is ±1). It needs no materialised nodes.
func (l *Layout) RawVariance(a, b int, ts, th noise.Scale) float64 {
	ns, nh := l.rangeCounts(a, b)
	return float64(ns)*Variance(ts) + float64(nh)*Variance(th)
}
