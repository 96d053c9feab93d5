package oracle

import "fmt"

// Dependent DP (liu2016 Def. 3) works on identified units: unit i's change
// may come with changes of the units that depend on it. The databases here
// are labelled: Labelled[j] is unit j's rows, nil when unit j is absent.
type Labelled []Unit

// Database forgets the labels (absent units dropped), for Query.
func (l Labelled) Database() Database {
	d := make(Database, 0, len(l))
	for _, u := range l {
		if u != nil {
			d = append(d, u)
		}
	}
	return d
}

// Change is how one unit may change.
type Change int

const (
	// ValueChange replaces a present unit's rows by any other 1..k rows
	// (bounded neighbours; the unit stays present).
	ValueChange Change = iota
	// PresenceChange adds an absent unit (any 1..k rows) or removes a
	// present one (unbounded neighbours).
	PresenceChange
	// AnyChange is either.
	AnyChange
)

// states lists the states a unit in state cur may move to under ch.
func (u *Universe) states(cur Unit, ch Change) []Unit {
	var out []Unit
	if (ch == PresenceChange || ch == AnyChange) && cur != nil {
		out = append(out, nil)
	}
	for _, un := range u.Units {
		if cur == nil && ch == ValueChange {
			break // an absent unit has no value to change
		}
		if cur != nil && ch == PresenceChange {
			break
		}
		if cur != nil && equalUnit(un, cur) {
			continue
		}
		out = append(out, un)
	}
	return out
}

func equalUnit(a, b Unit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// labelled enumerates every labelled database of n units over u's units,
// every unit present, or also absent when absent is set.
func (u *Universe) labelled(n int, absent bool, fn func(Labelled)) {
	opts := u.Units
	if absent {
		opts = append([]Unit{nil}, u.Units...)
	}
	cur := make(Labelled, n)
	var rec func(j int)
	rec = func(j int) {
		if j == n {
			fn(cur)
			return
		}
		for _, o := range opts {
			cur[j] = o
			rec(j + 1)
		}
	}
	rec(0)
}

// DependentWitness is the result of a dependent search.
type DependentWitness struct {
	L1     int64
	Unit   int // the unit i whose change attains L1
	D1, D2 Labelled
}

// FullDependence is the largest ‖q(D1) − q(D2)‖₁ over labelled databases
// of n units (absent units allowed when self or dep allow presence
// changes) where D2 differs from D1 by unit i changing under self and
// every unit in deps[i] changing arbitrarily under dep — the dependent
// neighbours of liu2016 Def. 3 with complete dependence (ρ = 1: group
// privacy over i's dependents). Exponential: keep n and the universe tiny.
func (u *Universe) FullDependence(n int, deps [][]int, self, dep Change, q Query) (DependentWitness, error) {
	if len(deps) != n {
		return DependentWitness{}, fmt.Errorf("oracle: deps has %d entries, want %d", len(deps), n)
	}
	absent := self != ValueChange || dep != ValueChange
	var w DependentWitness
	w.L1 = -1
	u.labelled(n, absent, func(d1 Labelled) {
		base := q(d1.Database())
		for i := range n {
			for _, si := range u.states(d1[i], self) {
				d2 := append(Labelled(nil), d1...)
				d2[i] = si
				var rec func(k int)
				rec = func(k int) {
					if k == len(deps[i]) {
						if l := l1(base, q(d2.Database())); l > w.L1 {
							w = DependentWitness{L1: l, Unit: i, D1: append(Labelled(nil), d1...), D2: append(Labelled(nil), d2...)}
						}
						return
					}
					j := deps[i][k]
					rec(k + 1) // j unchanged
					for _, sj := range u.states(d1[j], dep) {
						d2[j] = sj
						rec(k + 1)
					}
					d2[j] = d1[j]
				}
				rec(0)
			}
		}
	})
	return w, nil
}

// UnitSensitivity is ΔQ_j of liu2016 Eq. 22: the largest change of q when
// unit j alone changes under ch, over labelled databases of n units.
func (u *Universe) UnitSensitivity(n, j int, ch Change, q Query) int64 {
	best := int64(0)
	u.labelled(n, ch != ValueChange, func(d1 Labelled) {
		base := q(d1.Database())
		for _, s := range u.states(d1[j], ch) {
			d2 := append(Labelled(nil), d1...)
			d2[j] = s
			best = max(best, l1(base, q(d2.Database())))
		}
	})
	return best
}
