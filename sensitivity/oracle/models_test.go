package oracle

import "testing"

// histogram is the complete histogram over a domain of size n.
func histogram(n int) Query {
	g := make([]int, n)
	for v := range g {
		g[v] = v
	}
	return Aggregate{GroupOf: g, Groups: n}.Query()
}

func in(vs ...int) func(int) bool {
	return func(v int) bool {
		for _, x := range vs {
			if v == x {
				return true
			}
		}
		return false
	}
}

// bits3 decodes a value of the 2×2×2 domain into attributes.
func attr(v, a int) int { return v >> a & 1 }

// TestInducedKnownValues checks the induced-neighbour oracle against the
// values DESIGN.md lists (kifer2011 §4).
func TestInducedKnownValues(t *testing.T) {
	all := func(int) bool { return true }
	rowCol := func(r, c int) []func(int) bool { // domain r*c, v = row*c + col
		var cs []func(int) bool
		for i := range r {
			cs = append(cs, func(v int) bool { return v/c == i })
		}
		for j := range c {
			cs = append(cs, func(v int) bool { return v%c == j })
		}
		return cs
	}
	chain := func(k int) []func(int) bool {
		var cs []func(int) bool
		for j := range k - 1 {
			cs = append(cs, in(j, j+1))
		}
		return cs
	}
	cases := []struct {
		name   string
		domain int
		n      int
		counts []func(int) bool
		want   int64
	}{
		{"none", 4, 3, nil, 1},
		{"total", 4, 3, []func(int) bool{all}, 2},
		{"one count", 4, 3, []func(int) bool{in(0, 1)}, 2},
		{"one marginal", 4, 3, []func(int) bool{in(0, 1), in(2, 3)}, 2},
		{"rows and columns 2x3", 6, 4, rowCol(2, 3), 4},
		{"rows and columns 2x4", 8, 4, rowCol(2, 4), 4},
		{"chain k=4", 4, 4, chain(4), 4},
		{"chain k=5", 5, 4, chain(5), 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := MaxL1(Space{Domain: c.domain, MaxUnits: c.n, RowsPerUnit: 1}, Induced(c.counts), histogram(c.domain))
			if err != nil {
				t.Fatal(err)
			}
			if w.L1 != c.want {
				t.Errorf("histogram sensitivity %d, want %d (witness %v → %v)", w.L1, c.want, w.D1, w.D2)
			}
		})
	}
}

// TestBlowfishKnownValues checks the Blowfish oracle against DESIGN.md's
// paper traps.
func TestBlowfishKnownValues(t *testing.T) {
	full := func(x, y int) bool { return true }
	attribute := func(x, y int) bool { d := x ^ y; return d&(d-1) == 0 }
	marg := func(a int) []func(int) bool {
		return []func(int) bool{func(v int) bool { return attr(v, a) == 0 }, func(v int) bool { return attr(v, a) == 1 }}
	}
	cases := []struct {
		name string
		p    BlowfishPolicy
		want int64
	}{
		{"no constraints, full", BlowfishPolicy{Domain: 4, N: 2, Edge: full}, 2},
		// Cor. 8.3 claims 2·max(|Q|,1) = 2; the truth is 4.
		{"one count over two values, full (Cor. 8.3 false)", BlowfishPolicy{Domain: 4, N: 3, Edge: full, Counts: []func(int) bool{in(0, 1)}}, 4},
		// Thm 8.4: one marginal of size 2 under full secrets: 2·size(C).
		{"one marginal, full (Thm 8.4)", BlowfishPolicy{Domain: 4, N: 3, Edge: full, Counts: marg(0)}, 4},
		// DESIGN.md witness: Thm 8.5 says 4, Def. 4.1 as written gives 8.
		{"marginals A1, A2, attribute, literal", BlowfishPolicy{Domain: 8, N: 4, Edge: attribute, Counts: append(marg(0), marg(1)...)}, 8},
		{"marginals A1, A2, attribute, secrets-only (Thm 8.5)", BlowfishPolicy{Domain: 8, N: 4, Edge: attribute, Counts: append(marg(0), marg(1)...), SecretsOnly: true}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := BlowfishMaxL1(c.p, histogram(c.p.Domain))
			if err != nil {
				t.Fatal(err)
			}
			if w.L1 != c.want {
				t.Errorf("histogram sensitivity %d, want %d (witness %v → %v)", w.L1, c.want, w.D1, w.D2)
			}
		})
	}
}
