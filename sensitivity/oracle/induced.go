package oracle

import (
	"iter"
	"slices"
)

// Induced returns the relation of neighbours induced by published counts
// (kifer2011 Def. 4.4) over contingency tables: a database is a multiset
// of single-row units; counts are the predicates of the published counts.
// D2 is a neighbour of D1 iff both give the same answers to every count,
// D1 ≠ D2, and no non-empty proper subset of the minimal moves from D1 to
// D2 (add the rows D2 has more of, remove those it has fewer of) leads to
// a table with the same answers. The intermediate table may be of any
// size: it need not be in the Universe. Use it with Space.RowsPerUnit 1.
func Induced(counts []func(v int) bool) Neighbours {
	return func(u *Universe, d Database) iter.Seq[Database] {
		h1 := hist(u.Space.Domain, d)
		a1 := answersOf(counts, h1)
		return func(yield func(Database) bool) {
			for _, d2 := range u.DBs {
				h2 := hist(u.Space.Domain, d2)
				if slices.Equal(h1, h2) || !slices.Equal(a1, answersOf(counts, h2)) {
					continue
				}
				diff := make([]int64, len(h1))
				for i := range h1 {
					diff[i] = h2[i] - h1[i]
				}
				if minimalMoves(counts, diff) && !yield(d2) {
					return
				}
			}
		}
	}
}

func hist(domain int, d Database) []int64 {
	h := make([]int64, domain)
	for _, un := range d {
		for _, r := range un {
			h[r]++
		}
	}
	return h
}

func answersOf(counts []func(int) bool, h []int64) []int64 {
	out := make([]int64, len(counts))
	for c, pred := range counts {
		for v, n := range h {
			if pred(v) {
				out[c] += n
			}
		}
	}
	return out
}

// minimalMoves reports whether no non-empty proper part d' of the moves d
// (same signs, |d'_i| ≤ |d_i|) keeps every count's answer.
func minimalMoves(counts []func(int) bool, d []int64) bool {
	part := make([]int64, len(d))
	var rec func(i int, nonzero, proper bool) bool
	rec = func(i int, nonzero, proper bool) bool {
		if i == len(d) {
			if !nonzero || !proper {
				return true
			}
			for _, pred := range counts {
				var s int64
				for v, x := range part {
					if pred(v) {
						s += x
					}
				}
				if s != 0 {
					return true
				}
			}
			return false // this part keeps every answer: d is not minimal
		}
		step := int64(1)
		if d[i] < 0 {
			step = -1
		}
		for k := int64(0); k <= d[i]*step; k++ {
			part[i] = k * step
			if !rec(i+1, nonzero || k != 0, proper || part[i] != d[i]) {
				part[i] = 0
				return false
			}
		}
		part[i] = 0
		return true
	}
	return rec(0, false, false)
}
