package oracle

import (
	"slices"
)

// Query is a query's true answer as a vector (one entry per output value,
// e.g. per group). It must depend only on the multiset of rows (or at
// least not on the order of units), like an SQL aggregate. Vectors of
// different lengths are compared as if padded with zeros.
type Query func(Database) []int64

// Pairs is every neighbour pair of a Universe under one relation, as
// unordered index pairs into Universe.DBs (the L1 distance is symmetric).
// Build it once and evaluate many queries on it.
type Pairs struct {
	U     *Universe
	pairs [][2]int32
}

// NewPairs collects the pairs (D1, D2) with D1 in u and D2 a neighbour of
// D1 that is also in u. Pairs of a database with itself are dropped (their
// distance is 0).
func NewPairs(u *Universe, nb Neighbours) *Pairs {
	var packed []uint64
	for i, d := range u.DBs {
		for d2 := range nb(u, d) {
			j, ok := u.Index(d2)
			if !ok || j == i {
				continue
			}
			a, b := uint64(min(i, j)), uint64(max(i, j))
			packed = append(packed, a<<32|b)
		}
	}
	slices.Sort(packed)
	packed = slices.Compact(packed)
	p := &Pairs{U: u, pairs: make([][2]int32, len(packed))}
	for n, x := range packed {
		p.pairs[n] = [2]int32{int32(x >> 32), int32(x & 0xFFFFFFFF)}
	}
	return p
}

// Len is the number of distinct unordered pairs.
func (p *Pairs) Len() int { return len(p.pairs) }

// Witness is the result of a search: the largest L1 distance found and a
// pair attaining it (both nil when there are no pairs, with L1 0).
type Witness struct {
	L1     int64
	D1, D2 Database
}

// MaxL1 returns max ‖q(D1) − q(D2)‖₁ over the pairs, evaluating q once per
// database.
func (p *Pairs) MaxL1(q Query) Witness {
	vals := make([][]int64, len(p.U.DBs))
	for i, d := range p.U.DBs {
		vals[i] = q(d)
	}
	var w Witness
	best := int64(-1)
	for _, pr := range p.pairs {
		if l := l1(vals[pr[0]], vals[pr[1]]); l > best {
			best = l
			w = Witness{L1: l, D1: p.U.DBs[pr[0]], D2: p.U.DBs[pr[1]]}
		}
	}
	return w
}

// MaxL1 enumerates s, builds its pairs under nb and returns the largest L1
// change of q with a witness. Use NewUniverse and NewPairs directly to
// evaluate many queries on one space.
func MaxL1(s Space, nb Neighbours, q Query) (Witness, error) {
	u, err := NewUniverse(s)
	if err != nil {
		return Witness{}, err
	}
	return NewPairs(u, nb).MaxL1(q), nil
}

// l1 is ‖a − b‖₁ with the shorter vector padded with zeros. The oracle's
// spaces are tiny, so the sums cannot overflow for the bounded values tests
// use.
func l1(a, b []int64) int64 {
	var s int64
	for i := range max(len(a), len(b)) {
		var x, y int64
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x > y {
			s += x - y
		} else {
			s += y - x
		}
	}
	return s
}
