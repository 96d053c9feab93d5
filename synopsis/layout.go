package synopsis

import (
	"fmt"
	"math"
	"slices"
	"sync"

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

// hnode is one H node: the half-open index interval [lo, hi) and its
// children, which are consecutive in Layout.h: [kid0, kid0+nkid).
type hnode struct {
	lo, hi     int
	kid0, nkid int
}

// span is a run of consecutive H nodes.
type span struct{ first, n int }

// shape is the arithmetic description of the structure: enough to
// decompose any prefix into nodes without materialising them (answers and
// explain), see prefixIDs.
type shape struct {
	n      int // domain size N
	width  int // block width w
	blocks int // K
	fanout int
	depth  int // D: largest leaf depth below a block root, ⌈log_f w⌉
}

// Layout is the node structure of a synopsis: which counts are released
// and with which sensitivity. It is a pure function of Config. The H nodes
// themselves are only materialised when a release or a test needs them;
// answering and explaining use the arithmetic shape. A Layout is safe for
// concurrent use.
type Layout struct {
	cfg Config
	shape
	once  sync.Once
	h     []hnode // every H node, parents before children
	roots []span  // roots[b]: the H nodes whose parent is block b's root
}

// NewLayout validates cfg and describes the structure (cheaply: nothing is
// materialised).
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
	if w > 1 && (cfg.Fanout < 2 || cfg.Fanout > MaxDomain) {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "synopsis fan-out must be between 2 and %d, not %d", MaxDomain, cfg.Fanout)
	}
	l := &Layout{cfg: cfg, shape: shape{n: n, width: w, blocks: (n + w - 1) / w, fanout: cfg.Fanout}}
	// A node of width x has children of width ≤ ⌈x/f⌉ and the first one
	// has exactly that, so the deepest leaf is at ⌈log_f w⌉ (block 0 has
	// the full width w).
	for x := w; x > 1; x = (x + cfg.Fanout - 1) / cfg.Fanout {
		l.depth++
	}
	return l, nil
}

// nodes materialises the H nodes once.
func (l *Layout) nodes() {
	l.once.Do(func() {
		l.roots = make([]span, l.blocks)
		for b := range l.blocks {
			lo, hi := b*l.width, min((b+1)*l.width, l.n)
			l.roots[b] = l.split(lo, hi)
		}
	})
}

// split adds the children of the node [lo, hi) (none for a single value),
// then their subtrees, and returns the children's span. Children have
// width ⌈(hi−lo)/f⌉ except the last (Blowfish §7.2, "δ = ⌈|T|/f⌉").
func (l *Layout) split(lo, hi int) span {
	wd := hi - lo
	if wd <= 1 {
		return span{}
	}
	step := (wd + l.fanout - 1) / l.fanout
	first := len(l.h)
	for a := lo; a < hi; a += step {
		l.h = append(l.h, hnode{lo: a, hi: min(a+step, hi)})
	}
	kids := span{first, len(l.h) - first}
	for i := kids.first; i < kids.first+kids.n; i++ {
		sp := l.split(l.h[i].lo, l.h[i].hi)
		l.h[i].kid0, l.h[i].nkid = sp.first, sp.n
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
func (l *Layout) HNodes() int {
	l.nodes()
	return len(l.h)
}

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
	l.nodes()
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
// or H node (index into Layout.h), with a coefficient.
type term struct {
	h    bool
	idx  int
	coef int
}

// prefix returns the materialised nodes whose sum is #[0, j] (j = −1:
// none), for RawRange. The total s_{K−1} may appear; it is exact.
func (l *Layout) prefix(j int) []term {
	if j < 0 {
		return nil
	}
	l.nodes()
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
	for kids.n > 0 {
		next := span{}
		for c := kids.first; c < kids.first+kids.n; c++ {
			nd := l.h[c]
			switch {
			case nd.hi-1 <= j:
				out = append(out, term{h: true, idx: c, coef: 1})
			case nd.lo <= j:
				next = span{nd.kid0, nd.nkid}
			}
		}
		kids = next
	}
	return out
}

// rangeTerms returns the materialised nodes and coefficients of #[a, b]
// (indices, a ≤ b), with the terms common to both prefixes cancelled.
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

// nodeID names a node arithmetically: S node lo (h = false) or the H node
// covering [lo, hi). H intervals are unique (a child is always narrower
// than its parent).
type nodeID struct {
	h      bool
	lo, hi int
}

// prefixIDs appends to buf the nodes whose sum is #[0, j] (j = −1: none),
// walking the tree by arithmetic only: the same decomposition as prefix.
func (s shape) prefixIDs(j int, buf []nodeID) []nodeID {
	if j < 0 {
		return buf
	}
	b := j / s.width
	a, e := b*s.width, min((b+1)*s.width, s.n)
	if j == e-1 {
		return append(buf, nodeID{lo: b})
	}
	if b > 0 {
		buf = append(buf, nodeID{lo: b - 1})
	}
	for e-a > 1 {
		step := (e - a + s.fanout - 1) / s.fanout
		i := (j - a) / step
		for c := range i {
			buf = append(buf, nodeID{h: true, lo: a + c*step, hi: a + (c+1)*step})
		}
		ca, ce := a+i*step, min(a+(i+1)*step, e)
		if j == ce-1 {
			return append(buf, nodeID{h: true, lo: ca, hi: ce})
		}
		a, e = ca, ce
	}
	return buf
}

// rangeCounts returns how many noisy S nodes and H nodes #[a, b] (indices,
// a ≤ b) depends on after cancelling the nodes common to both prefixes
// (every coefficient is then ±1).
func (s shape) rangeCounts(a, b int) (ns, nh int) {
	var bufA, bufB [64]nodeID
	pb := s.prefixIDs(b, bufB[:0])
	pa := s.prefixIDs(a-1, bufA[:0])
	count := func(list, other []nodeID) {
		for _, x := range list {
			if slices.Contains(other, x) {
				continue
			}
			switch {
			case x.h:
				nh++
			case x.lo < s.blocks-1: // the total is exact
				ns++
			}
		}
	}
	count(pb, pa)
	count(pa, pb)
	return ns, nh
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
			ns, nh := l.rangeCounts(0, j)
			a += float64(ns)
			b += float64(nh)
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
	return fmt.Sprintf("%s over %d values: %d S nodes (ΔS=%d), H trees of depth %d under blocks of %d (ΔH=%d)",
		l.cfg.Mechanism, l.n, l.blocks, ds, l.depth, l.width, dh)
}
