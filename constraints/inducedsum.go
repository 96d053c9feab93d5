package constraints

import (
	"math/big"
)

// RowRange gives, for a tuple t of the System's columns, the smallest and
// largest amount one row whose constrained columns hold t can add to an
// aggregate, over every value of the columns outside the System (0 when
// such a row fails the WHERE clause or holds NULL in the summed column).
type RowRange func(t []int) (lo, hi int64)

// SumBound is the induced sensitivity of an aggregate that adds rng(t) per
// row: a SUM (grouped false), or the L1 norm over the groups of a grouped
// one. ok is false when no Graver basis was kept (a closed form was used)
// or the bound does not fit in an int64; the caller then falls back to the
// closed form. exact is set when the bound is attained by some Graver
// element (for enough rows) if rng's ends are attained: the ungrouped sum.
//
// Proof (ungrouped). Neighbours differ by one full-domain Graver element h
// (InducedBound): either a spread of an atom-level element g — the mass
// g_a of atom a spread over its tuples (and the values of the other
// columns) with g_a's sign — or a swap e_x − e_y of two tuples of one swap
// atom. The sum changes by Σ_x h_x f(x). For a spread, the positive mass
// of atom a adds at most g_a·Fmax(a) and its negative mass removes at
// least |g_a|·Fmin(a), where Fmin(a), Fmax(a) are the smallest and largest
// rng over a's tuples; putting all of an atom's mass on one row that
// attains them is itself a spread of g, hence a Graver element, so the
// bound is attained. The L1 change of one number is |Σ|, which is the
// same bound for −g (both signs are tried). A swap changes the sum by
// f(x) − f(y) ≤ Fmax(a) − Fmin(a), attained by the same argument.
// CountBound is the case rng ∈ {0, 1}.
//
// Grouped: Σ_groups |Σ_{x in group} h_x f(x)| ≤ Σ_x |h_x|·|f(x)| ≤
// Σ_a |g_a|·A(a) with A(a) = max(|Fmin(a)|, |Fmax(a)|), and 2·A(a) for a
// swap. This is an upper bound only (the groups may not separate the
// rows).
func (r Induced) SumBound(rng RowRange, grouped bool) (sens int64, exact, ok bool) {
	if !r.haveBasis {
		return 0, false, false
	}
	m := len(r.at.Size)
	fmin := make([]int64, m)
	fmax := make([]int64, m)
	seen := make([]bool, m)
	i := 0
	if err := r.sys.tuples(func(t []int) {
		a := r.at.Of[i]
		i++
		lo, hi := rng(t)
		if !seen[a] {
			fmin[a], fmax[a], seen[a] = lo, hi, true
			return
		}
		fmin[a], fmax[a] = min(fmin[a], lo), max(fmax[a], hi)
	}); err != nil {
		return 0, false, false
	}
	big64 := func(x int64) *big.Int { return big.NewInt(x) }
	absMax := func(a int) *big.Int {
		x, y := new(big.Int).Abs(big64(fmin[a])), new(big.Int).Abs(big64(fmax[a]))
		if x.Cmp(y) > 0 {
			return x
		}
		return y
	}
	best := new(big.Int)
	keep := func(v *big.Int) {
		if v.Cmp(best) > 0 {
			best.Set(v)
		}
	}
	for a := range m {
		if !r.swapAtom[a] {
			continue
		}
		if grouped {
			keep(new(big.Int).Mul(big64(2), absMax(a)))
		} else {
			keep(new(big.Int).Sub(big64(fmax[a]), big64(fmin[a])))
		}
	}
	term := new(big.Int)
	for _, g := range r.basis {
		if grouped {
			v := new(big.Int)
			for a, x := range g {
				if x != 0 {
					v.Add(v, term.Mul(big64(abs(x)), absMax(a)))
				}
			}
			keep(v)
			continue
		}
		for _, sign := range []int64{1, -1} {
			v := new(big.Int)
			for a, x := range g {
				x *= sign
				switch {
				case x > 0:
					v.Add(v, term.Mul(big64(x), big64(fmax[a])))
				case x < 0:
					v.Sub(v, term.Mul(big64(-x), big64(fmin[a])))
				}
			}
			keep(v)
		}
	}
	if !best.IsInt64() {
		return 0, false, false
	}
	return best.Int64(), !grouped, true
}
