package synopsis

import (
	"fmt"
	"math"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Mechanism names (the policy's synopses.mechanism values, plus the
// baseline).
const (
	// Ordered is the ordered mechanism (Blowfish §7.1): noisy cumulative
	// counts, for θ = 1.
	Ordered = "ordered"
	// OrderedHierarchical is the ordered hierarchical mechanism (§7.2).
	OrderedHierarchical = "ordered_hierarchical"
	// Hierarchical is the plain-DP baseline: Hay et al.'s tree over the
	// whole domain (the OH layout with θ ≥ N).
	Hierarchical = "hierarchical"
)

// MaxDomain bounds N: the synopsis holds one cumulative count per value.
const MaxDomain = 1 << 20

// DefaultFanout is the paper's f = 16.
const DefaultFanout = 16

// Config describes a synopsis before it is released.
type Config struct {
	Mechanism string
	// Lo and Hi are the inclusive integer domain of the column.
	Lo, Hi int64
	// Theta is the distance threshold θ ≥ 1 of the secrets, in column
	// units (ignored by Hierarchical).
	Theta int64
	// Fanout f ≥ 2 of the H trees (ignored by Ordered).
	Fanout int
	// RowsPerUnit is k ≥ 1: one unit moves up to k rows.
	RowsPerUnit int
}

// hnode is one H node: the half-open index interval [lo, hi).
type hnode struct {
	lo, hi   int
	depth    int // 1 for children of the block root
	parent   int // index in Layout.h; −1 when the parent is the block root
	children []int
}

// Layout is the node structure of a synopsis: which counts are released
// and with which sensitivity. It is a pure function of Config.
type Layout struct {
	cfg    Config
	n      int // domain size N
	width  int // block width w
	blocks int // K
	// h holds every H node; roots[b] lists the H nodes whose parent is the
	// root of block b, in order.
	h     []hnode
	roots [][]int
	depth int // D: largest leaf depth
}

// NewLayout validates cfg and builds the structure.
func NewLayout(cfg Config) (*Layout, error) {
	if cfg.Hi < cfg.Lo {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "synopsis domain [%d, %d] is empty", cfg.Lo, cfg.Hi)
	}
	size := uint64(cfg.Hi) - uint64(cfg.Lo) // exact for Hi ≥ Lo, even across ±2^63
	if size >= MaxDomain {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "synopsis domain [%d, %d] has more than %d values", cfg.Lo, cfg.Hi, MaxDomain)
	}
	n := int(size) + 1
	if cfg.RowsPerUnit < 1 {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "synopsis rows per unit must be at least 1, not %d", cfg.RowsPerUnit)
	}
	w := 0
	switch cfg.Mechanism {
	case Ordered:
		if cfg.Theta != 1 {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "the ordered mechanism needs θ = 1, not %d", cfg.Theta).
				WithHint("use ordered_hierarchical for θ > 1")
		}
		w = 1
	case OrderedHierarchical:
		if cfg.Theta < 1 {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "the ordered hierarchical mechanism needs θ ≥ 1, not %d", cfg.Theta)
		}
		w = int(min(cfg.Theta, int64(n)))
	case Hierarchical:
		w = n
	default:
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unknown synopsis mechanism %q", cfg.Mechanism)
	}
	if w > 1 && cfg.Fanout < 2 {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "synopsis fan-out must be at least 2, not %d", cfg.Fanout)
	}
	l := &Layout{cfg: cfg, n: n, width: w, blocks: (n + w - 1) / w}
	l.roots = make([][]int, l.blocks)
	for b := range l.blocks {
		lo, hi := b*w, min((b+1)*w, n)
		l.roots[b] = l.split(lo, hi, 1, -1)
	}
	return l, nil
}

// split adds the children of the node [lo, hi) at depth−1 (none for a
// single value) and returns their indices. Children have width ⌈(hi−lo)/f⌉
// except the last (Blowfish §7.2, "δ = ⌈|T|/f⌉").
func (l *Layout) split(lo, hi, depth, parent int) []int {
	wd := hi - lo
	if wd <= 1 {
		return nil
	}
	step := (wd + l.cfg.Fanout - 1) / l.cfg.Fanout
	var kids []int
	for a := lo; a < hi; a += step {
		i := len(l.h)
		l.h = append(l.h, hnode{lo: a, hi: min(a+step, hi), depth: depth, parent: parent})
		kids = append(kids, i)
		l.depth = max(l.depth, depth)
	}
	for _, i := range kids {
		c := l.split(l.h[i].lo, l.h[i].hi, depth+1, i)
		l.h[i].children = c
	}
	return kids
}

// Config returns the configuration the layout was built from.
func (l *Layout) Config() Config { return l.cfg }

// Size is the domain size N.
func (l *Layout) Size() int { return l.n }

// Blocks is the number K of S nodes.
func (l *Layout) Blocks() int { return l.blocks }

// HNodes is the number of H nodes.
func (l *Layout) HNodes() int { return len(l.h) }

// Sensitivity returns the L1 sensitivities of the noisy S nodes and of the
// H nodes under distance-θ neighbours with k rows per unit (see the
// package documentation for the derivation): ΔS = k if K ≥ 2 else 0;
// ΔH = 2·k·D.
func (l *Layout) Sensitivity() (s, h int64) {
	k := int64(l.cfg.RowsPerUnit)
	if l.blocks >= 2 {
		s = k
	}
	return s, 2 * k * int64(l.depth)
}

// Nodes returns the true node values of a histogram (hist[i] = number of
// rows with index i): the K S nodes (the last is the total) and the H
// nodes.
func (l *Layout) Nodes(hist []int64) (s, h []int64) {
	cum := make([]int64, l.n+1) // cum[j] = #[0, j)
	for i, c := range hist {
		cum[i+1] = cum[i] + c
	}
	s = make([]int64, l.blocks)
	for b := range s {
		s[b] = cum[min((b+1)*l.width, l.n)]
	}
	h = make([]int64, len(l.h))
	for i, nd := range l.h {
		h[i] = cum[nd.hi] - cum[nd.lo]
	}
	return s, h
}

// term is one node of a prefix or range decomposition: S node (h = false)
// or H node, with a coefficient.
type term struct {
	h    bool
	idx  int
	coef int
}

// prefix returns the nodes whose sum is #[0, j] (j = −1: none). The total
// s_{K−1} may appear; it is exact.
func (l *Layout) prefix(j int) []term {
	if j < 0 {
		return nil
	}
	b := j / l.width
	end := min((b+1)*l.width, l.n) - 1
	if j == end {
		return []term{{idx: b, coef: 1}}
	}
	var out []term
	if b > 0 {
		out = append(out, term{idx: b - 1, coef: 1})
	}
	kids := l.roots[b]
	for len(kids) > 0 {
		next := []int(nil)
		for _, c := range kids {
			nd := l.h[c]
			switch {
			case nd.hi-1 <= j:
				out = append(out, term{h: true, idx: c, coef: 1})
			case nd.lo <= j:
				next = nd.children
			}
		}
		kids = next
	}
	return out
}

// rangeTerms returns the nodes and coefficients of #[a, b] (indices,
// a ≤ b), with the terms common to both prefixes cancelled.
func (l *Layout) rangeTerms(a, b int) []term {
	m := map[term]int{}
	for _, t := range l.prefix(b) {
		m[term{h: t.h, idx: t.idx}] += t.coef
	}
	for _, t := range l.prefix(a - 1) {
		m[term{h: t.h, idx: t.idx}] -= t.coef
	}
	var out []term
	for k, c := range m {
		if c != 0 {
			out = append(out, term{h: k.h, idx: k.idx, coef: c})
		}
	}
	return out
}

// Split divides ε between the S and the H nodes to minimise the mean
// variance of a prefix count (package documentation). The exact rational
// sum of the two shares never exceeds ε.
func (l *Layout) Split(eps float64) (epsS, epsH float64, err error) {
	if math.IsNaN(eps) || math.IsInf(eps, 0) || eps <= 0 {
		return 0, 0, sqlerr.New(sqlerr.InvalidParameterValue, "ε must be a positive finite number, got %g", eps)
	}
	ds, dh := l.Sensitivity()
	switch {
	case ds == 0 && dh == 0:
		return 0, 0, nil // N = 1: nothing is noisy
	case ds == 0:
		epsH = eps
	case dh == 0:
		epsS = eps
	default:
		var a, b float64 // mean number of noisy S / H nodes per prefix
		for j := range l.n {
			for _, t := range l.prefix(j) {
				switch {
				case t.h:
					b++
				case t.idx < l.blocks-1:
					a++
				}
			}
		}
		ws := math.Cbrt(a / float64(l.n) * float64(ds*ds))
		wh := math.Cbrt(b / float64(l.n) * float64(dh*dh))
		epsS = eps * ws / (ws + wh)
		epsH = eps - epsS
	}
	// The ledger charges ε read as its shortest decimal (0.1 is 1/10,
	// slightly less than the float64 0.1); the shares, read as exact
	// binary values by noise.ScaleFor, must not add up to more.
	for !fitsRat(epsS, epsH, eps) {
		if epsH > 0 {
			epsH = math.Nextafter(epsH, 0)
		} else {
			epsS = math.Nextafter(epsS, 0)
		}
	}
	if (ds > 0 && epsS <= 0) || (dh > 0 && epsH <= 0) {
		return 0, 0, sqlerr.New(sqlerr.InvalidParameterValue, "ε = %g is too small to split between the synopsis's S and H nodes", eps)
	}
	return epsS, epsH, nil
}

// String describes the layout for notes and errors.
func (l *Layout) String() string {
	ds, dh := l.Sensitivity()
	return fmt.Sprintf("%s over %d values: %d S nodes (ΔS=%d), %d H nodes of depth ≤ %d (ΔH=%d)",
		l.cfg.Mechanism, l.n, l.blocks, ds, len(l.h), l.depth, dh)
}
