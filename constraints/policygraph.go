package constraints

import (
	"fmt"
	"math/bits"
)

// MaxPolicyGraphNodes caps the exact longest-cycle/path search (subset
// dynamic programming, O(2^p·p²)).
const MaxPolicyGraphNodes = 14

// PolicyGraph is He et al. Def. 8.3 for sparse counts: nodes are the
// published counts; Edge[i][j] when a secret pair lowers count i and lifts
// count j; Plus[j] when one lifts j and lowers nothing; Minus[i] when one
// lowers i and lifts nothing. (v⁺, v⁻) is always an edge.
type PolicyGraph struct {
	N     int
	Edge  [][]bool
	Plus  []bool
	Minus []bool
}

// atomPairs calls f(a, b) for every ordered pair of atoms joined by a
// secret pair of tuples (x in a, y in b, x ≠ y). It may repeat pairs.
func atomPairs(s *System, g *Secrets, at *Atoms, f func(a, b int)) error {
	radix := make([]int, len(s.Columns))
	r := 1
	for i := len(s.Columns) - 1; i >= 0; i-- {
		radix[i] = r
		r *= s.Columns[i].Size
	}
	index := func(t []int) int {
		n := 0
		for i, v := range t {
			n += v * radix[i]
		}
		return n
	}
	m := len(at.Size)
	switch g.Kind {
	case SecretsFull:
		for a := range m {
			for b := range m {
				if a != b {
					f(a, b)
				}
			}
		}
		return nil
	case SecretsAttribute, SecretsDistance:
		y := make([]int, len(s.Columns))
		return s.tuples(func(t []int) {
			a := at.Of[index(t)]
			copy(y, t)
			for c := range s.Columns {
				for v := range s.Columns[c].Size {
					if v == t[c] {
						continue
					}
					y[c] = v
					if g.edge(s, t, y) {
						f(a, at.Of[index(y)])
					}
				}
				y[c] = t[c]
			}
		})
	case SecretsPartition:
		groups := map[string]map[int]bool{}
		key := make([]byte, 0, 16)
		err := s.tuples(func(t []int) {
			key = key[:0]
			if g.Bucket != nil {
				if g.Column >= 0 {
					key = fmt.Appendf(key, "%d", g.Bucket[t[g.Column]])
				}
			} else {
				for _, c := range g.Columns {
					key = fmt.Appendf(key, "%d,", t[c])
				}
			}
			set := groups[string(key)]
			if set == nil {
				set = map[int]bool{}
				groups[string(key)] = set
			}
			set[at.Of[index(t)]] = true
		})
		if err != nil {
			return err
		}
		for _, set := range groups {
			for a := range set {
				for b := range set {
					if a != b {
						f(a, b)
					}
				}
			}
		}
		return nil
	}
	return fmt.Errorf("unknown secrets kind %q", g.Kind)
}

// buildPolicyGraph builds the policy graph, or reports that Q is not
// sparse with respect to G (Def. 8.2).
func buildPolicyGraph(s *System, g *Secrets, at *Atoms) (*PolicyGraph, error) {
	p := len(at.A)
	pg := &PolicyGraph{N: p, Edge: make([][]bool, p), Plus: make([]bool, p), Minus: make([]bool, p)}
	for i := range pg.Edge {
		pg.Edge[i] = make([]bool, p)
	}
	var sparseErr error
	err := atomPairs(s, g, at, func(a, b int) {
		lift, lower := -1, -1
		for q := range p {
			switch {
			case at.A[q][a] == 0 && at.A[q][b] == 1:
				if lift >= 0 && sparseErr == nil {
					sparseErr = s.refuse([]int{at.Owner[lift], at.Owner[q]}, "constraints %s are not sparse for these secrets (one secret pair lifts two published counts), so Blowfish Thm 8.2 does not apply", s.names([]int{at.Owner[lift], at.Owner[q]}))
				}
				lift = q
			case at.A[q][a] == 1 && at.A[q][b] == 0:
				if lower >= 0 && sparseErr == nil {
					sparseErr = s.refuse([]int{at.Owner[lower], at.Owner[q]}, "constraints %s are not sparse for these secrets (one secret pair lowers two published counts), so Blowfish Thm 8.2 does not apply", s.names([]int{at.Owner[lower], at.Owner[q]}))
				}
				lower = q
			}
		}
		switch {
		case lift >= 0 && lower >= 0:
			pg.Edge[lower][lift] = true
		case lift >= 0:
			pg.Plus[lift] = true
		case lower >= 0:
			pg.Minus[lower] = true
		}
	})
	if err != nil {
		return nil, err
	}
	if sparseErr != nil {
		return nil, sparseErr
	}
	return pg, nil
}

// cliques reports whether the count nodes form disjoint complete digraphs
// and returns the largest clique's size.
func (pg *PolicyGraph) cliques() (int, bool) {
	comp := make([]int, pg.N)
	for i := range comp {
		comp[i] = -1
	}
	largest := 0
	for i := range pg.N {
		if comp[i] >= 0 {
			continue
		}
		members := []int{i}
		comp[i] = i
		for j := range pg.N {
			if j != i && (pg.Edge[i][j] || pg.Edge[j][i]) {
				if comp[j] >= 0 {
					return 0, false
				}
				comp[j] = i
				members = append(members, j)
			}
		}
		for _, u := range members {
			for _, v := range members {
				if u != v && !pg.Edge[u][v] {
					return 0, false
				}
			}
			for v := range pg.N {
				if comp[v] != i && (pg.Edge[u][v] || pg.Edge[v][u]) {
					return 0, false
				}
			}
		}
		largest = max(largest, len(members))
	}
	return largest, true
}

// alphaXi returns α (longest simple cycle, in edges; 0 if acyclic) and ξ
// (longest simple v⁺→v⁻ path, in edges).
func (pg *PolicyGraph) alphaXi() (alpha, xi int64, err error) {
	plusMinus := false
	for i := range pg.N {
		plusMinus = plusMinus || pg.Plus[i] || pg.Minus[i]
	}
	if !plusMinus {
		if size, ok := pg.cliques(); ok {
			// Disjoint complete digraphs: a Hamiltonian cycle of the
			// largest one; v⁺ reaches only v⁻.
			if size < 2 {
				size = 0
			}
			return int64(size), 1, nil
		}
	}
	n := pg.N
	if n > MaxPolicyGraphNodes {
		return 0, 0, fmt.Errorf("the policy graph has %d nodes; the exact search for α and ξ handles at most %d and no closed form applies: %w", n, MaxPolicyGraphNodes, ErrUnbounded)
	}
	// Longest path v⁺ → v⁻: dp[mask][v] = true if a simple path from v⁺
	// enters the nodes of mask (in some order) and ends at v.
	xi = 1
	full := 1 << n
	reach := make([]uint32, full) // bit v set: a path over mask ends at v
	for v := range n {
		if pg.Plus[v] {
			reach[1<<v] |= 1 << v
		}
	}
	for mask := 1; mask < full; mask++ {
		ends := reach[mask]
		for ends != 0 {
			v := bits.TrailingZeros32(ends)
			ends &^= 1 << v
			if pg.Minus[v] {
				xi = max(xi, int64(bits.OnesCount(uint(mask))+1))
			}
			for w := range n {
				if mask&(1<<w) == 0 && pg.Edge[v][w] {
					reach[mask|1<<w] |= 1 << w
				}
			}
		}
	}
	// Longest simple cycle: for each start s (its smallest node), paths
	// from s over nodes ≥ s that return to s.
	for s := range n {
		clear(reach)
		reach[1<<s] = 1 << s
		for mask := 1 << s; mask < full; mask++ {
			if mask&(1<<s) == 0 || mask&((1<<s)-1) != 0 {
				continue
			}
			ends := reach[mask]
			for ends != 0 {
				v := bits.TrailingZeros32(ends)
				ends &^= 1 << v
				if v != s && pg.Edge[v][s] {
					alpha = max(alpha, int64(bits.OnesCount(uint(mask))))
				}
				for w := s + 1; w < n; w++ {
					if mask&(1<<w) == 0 && pg.Edge[v][w] {
						reach[mask|1<<w] |= 1 << w
					}
				}
			}
		}
	}
	return alpha, xi, nil
}

// policyGraphBound is the compensation: secrets-only reading: He et al.
// Thm 8.2 on G's policy graph. Every change between neighbours is a secret
// pair, each of which is an edge of the policy graph (or lifts and lowers
// nothing), and minimality makes the changes one simple cycle or one
// simple v⁺→v⁻ path: maxT ≤ max(α, ξ), and S(h) ≤ 2·max(α, ξ). Thms 8.4
// (one marginal, full), 8.5 (disjoint marginals, attribute) and 8.6
// (disjoint ranges, distance) are this bound on particular graphs.
func policyGraphBound(s *System, g *Secrets, at *Atoms) (Blowfish, error) {
	pg, err := buildPolicyGraph(s, g, at)
	if err != nil {
		return Blowfish{}, err
	}
	alpha, xi, err := pg.alphaXi()
	if err != nil {
		return Blowfish{}, s.refuse(nil, "constraints %s: %v", s.allNames(), err)
	}
	return Blowfish{
		MaxT: max(alpha, xi), SecretsOnly: true, Alpha: alpha, Xi: xi,
		Method: fmt.Sprintf("compensation: secrets-only (weaker guarantee: compensating changes must be secret pairs): Blowfish Thm 8.2 on the policy graph of %s, α = %d, ξ = %d", s.allNames(), alpha, xi),
	}, nil
}
