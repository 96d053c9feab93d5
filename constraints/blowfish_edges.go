package constraints

// edgesKeepCounts reports whether no edge of G changes the value of any
// published count predicate of a tuple: every secret pair (x, y) lies in
// one atom. Then Blowfish neighbours (He et al. Def. 4.1, literal or
// secrets-only reading) are exactly the single secret changes, so maxT = 1
// and the per-change contribution may use G's edges.
//
// Proof. Let D1, D2 be neighbours, T = T(D1, D2) ≠ ∅ their secret changes
// and NS their other changes. Take one (i, x → y) ∈ T and let D3 be D1
// with only individual i changed to y. (x, y) is an edge, so x and y lie
// in one atom: D3 gives every published count the same answer as D1, and
// so satisfies Q (and D3 uses only a secret change, so it is admissible
// under secrets-only too). T(D1, D3) = {(i, y)} ⊆ T. If |T| > 1 it is a
// non-empty proper subset, which condition 3(a) forbids; so T = {(i, y)}.
// Then T(D1, D3) = T(D1, D2) and Δ(D3, D1) ⊆ Δ(D2, D1), strictly if NS ≠
// ∅, which 3(b) forbids; so NS = ∅ and D2 = D3. Conversely every single
// secret change D1 → D3 keeps Q (same atom), and nothing smaller exists
// (3(a) needs a non-empty proper subset of a singleton; 3(b) a D3' with
// the same non-empty T and no change). So the neighbour relation is the
// unconstrained one: one tuple changes along one edge of G.
//
// The check is exact over the System's tuples (the projections of edges:
// a change outside the System's columns never changes a count).
func edgesKeepCounts(s *System, g *Secrets, at *Atoms) bool {
	oneAtom := len(at.Size) == 1
	switch g.Kind {
	case SecretsFull, SecretsAttribute:
		// Both graphs connect every pair of tuples (attribute: one column
		// at a time), so every edge stays in one atom iff there is one.
		return oneAtom
	case SecretsPartition:
		if g.Bucket != nil && g.Column < 0 {
			// The bucketed column is outside the System: an edge may
			// change every System column.
			return oneAtom
		}
		// Edges connect exactly the tuples of one cell (equal partition
		// columns, or equal bucket of the column): one atom per cell.
		cell := map[string]int{}
		key := make([]byte, 0, 8*len(s.Columns))
		i := 0
		keep := true
		err := s.tuples(func(t []int) {
			a := at.Of[i]
			i++
			key = key[:0]
			if g.Bucket != nil {
				key = appendInt(key, g.Bucket[t[g.Column]])
			} else {
				for _, c := range g.Columns {
					key = appendInt(key, t[c])
				}
			}
			if b, ok := cell[string(key)]; ok {
				keep = keep && a == b
				return
			}
			cell[string(key)] = a
		})
		return err == nil && keep
	case SecretsDistance:
		if g.Column < 0 {
			return true // the distance column is outside the System
		}
		// An edge changes only Column, by at most θ: compare each tuple's
		// atom with the atoms of the tuples within θ along Column.
		c := g.Column
		stride := 1
		for j := c + 1; j < len(s.Columns); j++ {
			stride *= s.Columns[j].Size
		}
		vals := s.Columns[c].Values
		i := 0
		keep := true
		err := s.tuples(func(t []int) {
			a := at.Of[i]
			idx := i
			i++
			for v := range s.Columns[c].Size {
				if v == t[c] || vals == nil {
					continue
				}
				if g.near(vals[v], vals[t[c]]) && at.Of[idx+(v-t[c])*stride] != a {
					keep = false
				}
			}
		})
		if vals == nil && s.Columns[c].Size > 1 {
			return false // no numeric values: cannot measure distances
		}
		return err == nil && keep
	}
	return false
}

func appendInt(b []byte, v int) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
}
