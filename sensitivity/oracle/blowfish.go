package oracle

import (
	"fmt"
	"slices"
)

// BlowfishPolicy is a Blowfish policy (He et al. Def. 3.1) over a tiny
// space: N individuals with identities 0..N-1, each holding one value in
// [0, Domain); Counts are the published count predicates (their answers
// are fixed: neighbours must agree on them).
type BlowfishPolicy struct {
	Domain, N int
	// Edge reports whether (x, y), x ≠ y, is a secret pair (an edge of G).
	Edge func(x, y int) bool
	// Counts are the predicates of the published counts.
	Counts []func(v int) bool
	// SecretsOnly restricts every change (between neighbours, and in the
	// D3 of the minimality condition) to secret pairs: the
	// compensation: secrets-only reading. Otherwise Def. 4.1 is taken as
	// written: compensating changes may take any value.
	SecretsOnly bool
}

// BlowfishWitness is the result of BlowfishMaxL1.
type BlowfishWitness struct {
	// L1 is the largest ‖q(D1) − q(D2)‖₁ over neighbours.
	L1 int64
	// MaxT is the largest number of individuals whose values differ
	// between neighbours.
	MaxT int
	// D1, D2 attain L1 (value of individual i at index i).
	D1, D2 []int
	// Pairs is the number of neighbour pairs (D1 canonical).
	Pairs int
}

// BlowfishMaxL1 enumerates every database of p, builds the neighbour
// relation of Def. 4.1 and returns the largest L1 change of q:
//
//  1. D1, D2 satisfy the published counts;
//  2. T(D1, D2) — the secret pairs (i, D1[i] → D2[i]) — is non-empty;
//  3. no D3 satisfying the counts has (a) ∅ ≠ T(D1, D3) ⊊ T(D1, D2), or
//     (b) T(D1, D3) = T(D1, D2) and Δ(D3, D1) ⊊ Δ(D2, D1).
//
// In 3(a) the empty set is excluded: otherwise D3 = D1 would forbid every
// pair. Δ(D, D1) is the set of (i, value) entries of D1 and D that differ,
// so Δ(D3, D1) ⊊ Δ(D2, D1) says D3 makes a proper subset of D2's changes.
// q sees a database as single-row units (a multiset of values).
func BlowfishMaxL1(p BlowfishPolicy, q Query) (BlowfishWitness, error) {
	if p.Domain < 1 || p.Domain > 8 || p.N < 1 || p.N > 5 {
		return BlowfishWitness{}, fmt.Errorf("oracle: blowfish space %d^%d too large", p.Domain, p.N)
	}
	total := 1
	for range p.N {
		total *= p.Domain
	}
	seqs := make([][]int, total)
	answers := make([]string, total)
	groups := map[string][]int{}
	for idx := range total {
		s := make([]int, p.N)
		x := idx
		for i := p.N - 1; i >= 0; i-- {
			s[i] = x % p.Domain
			x /= p.Domain
		}
		seqs[idx] = s
		a := make([]byte, len(p.Counts))
		for c, pred := range p.Counts {
			for _, v := range s {
				if pred(v) {
					a[c]++
				}
			}
		}
		answers[idx] = string(a)
		groups[answers[idx]] = append(groups[answers[idx]], idx)
	}
	index := func(s []int) int {
		n := 0
		for _, v := range s {
			n = n*p.Domain + v
		}
		return n
	}
	secret := func(x, y int) bool { return x != y && p.Edge(x, y) }
	// tkey encodes T(D1, D): per individual, 0 or 1 + the target value of
	// a secret change. ok is false when D has a non-secret change and the
	// reading is secrets-only.
	tkey := func(d1, d []int) (key int, ok bool) {
		for i := range d1 {
			key *= p.Domain + 1
			switch {
			case d[i] == d1[i]:
			case secret(d1[i], d[i]):
				key += d[i] + 1
			default:
				if p.SecretsOnly {
					return 0, false
				}
			}
		}
		return key, true
	}
	var w BlowfishWitness
	w.L1 = -1
	vals := map[int][]int64{}
	value := func(idx int) []int64 {
		if v, ok := vals[idx]; ok {
			return v
		}
		db := make(Database, p.N)
		for i, x := range seqs[idx] {
			db[i] = Unit{x}
		}
		v := q(db)
		vals[idx] = v
		return v
	}
	for i1, d1 := range seqs {
		if !slices.IsSorted(d1) {
			continue // the relation commutes with renaming individuals
		}
		group := groups[answers[i1]]
		achievable := map[int]bool{}
		for _, i3 := range group {
			if k, ok := tkey(d1, seqs[i3]); ok && k != 0 {
				achievable[k] = true
			}
		}
		for _, i2 := range group {
			d2 := seqs[i2]
			if i2 == i1 {
				continue
			}
			var T, NS []int // secret and non-secret changed individuals
			for i := range d1 {
				switch {
				case d1[i] == d2[i]:
				case secret(d1[i], d2[i]):
					T = append(T, i)
				default:
					NS = append(NS, i)
				}
			}
			if len(T) == 0 || (p.SecretsOnly && len(NS) > 0) {
				continue
			}
			neighbour := true
			// 3(a): a non-empty proper subset of T, realised by any D3.
			for mask := 1; mask < 1<<len(T)-1 && neighbour; mask++ {
				key := 0
				for i := range d1 {
					key *= p.Domain + 1
					for b, j := range T {
						if j == i && mask&(1<<b) != 0 {
							key += d2[i] + 1
						}
					}
				}
				if achievable[key] {
					neighbour = false
				}
			}
			// 3(b): same T, a proper subset of the non-secret changes.
			for mask := 0; mask < 1<<len(NS)-1 && neighbour; mask++ {
				d3 := slices.Clone(d1)
				for _, j := range T {
					d3[j] = d2[j]
				}
				for b, j := range NS {
					if mask&(1<<b) != 0 {
						d3[j] = d2[j]
					}
				}
				if answers[index(d3)] == answers[i1] {
					neighbour = false
				}
			}
			if !neighbour {
				continue
			}
			w.Pairs++
			w.MaxT = max(w.MaxT, len(T)+len(NS))
			if l := l1(value(i1), value(i2)); l > w.L1 {
				w.L1, w.D1, w.D2 = l, d1, d2
			}
		}
	}
	w.L1 = max(w.L1, 0)
	return w, nil
}
