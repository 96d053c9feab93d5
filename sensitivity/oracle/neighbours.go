package oracle

import (
	"iter"
	"slices"
)

// Neighbours is a neighbour relation written straight from its definition:
// it yields every database D2 that is a neighbour of D1 = d. d is canonical
// and in the space; the yielded databases need not be canonical, and those
// outside the space (too many units, constraint violated) are ignored by the
// oracle, so a relation may yield them freely. The relation must not depend
// on the order of units (the oracle only visits canonical D1), and it is not
// assumed symmetric: the oracle takes every pair (D1, D2) it yields.
type Neighbours func(u *Universe, d Database) iter.Seq[Database]

// Unbounded is DP's add/remove relation: D2 is D1 with one unit (and all of
// its 1..k rows) removed, or with one more unit of any 1..k rows.
func Unbounded(u *Universe, d Database) iter.Seq[Database] {
	return func(yield func(Database) bool) {
		for i := range d {
			if i > 0 && slices.Equal(d[i], d[i-1]) {
				continue // removing an equal unit gives the same database
			}
			if !yield(slices.Delete(slices.Clone(d), i, i+1)) {
				return
			}
		}
		for _, un := range u.Units {
			if !yield(append(slices.Clone(d), un)) {
				return
			}
		}
	}
}

// Bounded is DP's replace-one-unit relation: D2 has the same units as D1
// except that one unit's rows are replaced by any other 1..k rows (possibly
// a different number of them; see sensitivity.Bounded).
func Bounded(u *Universe, d Database) iter.Seq[Database] {
	return func(yield func(Database) bool) {
		for i := range d {
			if i > 0 && slices.Equal(d[i], d[i-1]) {
				continue
			}
			for _, un := range u.Units {
				if slices.Equal(un, d[i]) {
					continue
				}
				d2 := slices.Clone(d)
				d2[i] = un
				if !yield(d2) {
					return
				}
			}
		}
	}
}
