package constraints

import (
	"errors"
	"fmt"
	"math"
)

// errTooLarge is returned when a Graver computation exceeds its work cap.
var errTooLarge = errors.New("graver basis too large to compute at load")

// Vector is an integer vector over atoms.
type Vector []int64

func (v Vector) l1() int64 {
	var s int64
	for _, x := range v {
		s += abs(x)
	}
	return s
}

func (v Vector) isZero() bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// conformal reports u ⊑ v: u lies in v's orthant and |u_i| ≤ |v_i|.
func conformal(u, v Vector) bool {
	for i := range u {
		if u[i] == 0 {
			continue
		}
		if (u[i] > 0) != (v[i] > 0) || abs(u[i]) > abs(v[i]) || v[i] == 0 {
			return false
		}
	}
	return true
}

// kernelBasis returns a basis of the integer lattice {x ∈ Z^n : A x = 0}
// (A is p×n) by unimodular column operations: A·U = [H | 0], and the
// columns of U matching the zero columns span the lattice.
func kernelBasis(A [][]int64, n int) ([]Vector, error) {
	p := len(A)
	B := make([][]int64, p)
	for i := range A {
		B[i] = append([]int64(nil), A[i]...)
	}
	U := make([][]int64, n) // U[row][col]
	for i := range U {
		U[i] = make([]int64, n)
		U[i][i] = 1
	}
	colOp := func(j, k int, a, b, c, d int64) error {
		// (col j, col k) ← (a·col j + b·col k, c·col j + d·col k)
		for _, M := range [][][]int64{B, U} {
			for r := range M {
				x, y := M[r][j], M[r][k]
				nx, ny := a*x+b*y, c*x+d*y
				if abs(nx) > 1<<40 || abs(ny) > 1<<40 {
					return errTooLarge
				}
				M[r][j], M[r][k] = nx, ny
			}
		}
		return nil
	}
	piv := 0
	for r := 0; r < p && piv < n; r++ {
		for k := piv + 1; k < n; k++ {
			if B[r][k] == 0 {
				continue
			}
			x, y := B[r][piv], B[r][k]
			g, s, t := extGCD(x, y)
			// [s t; -y/g x/g] has determinant (s·x + t·y)/g = 1.
			if err := colOp(piv, k, s, t, -y/g, x/g); err != nil {
				return nil, err
			}
		}
		if B[r][piv] != 0 {
			piv++
		}
	}
	var out []Vector
	for j := piv; j < n; j++ {
		v := make(Vector, n)
		for i := range n {
			v[i] = U[i][j]
		}
		out = append(out, v)
	}
	// Check: every basis vector is in the kernel.
	for _, v := range out {
		for r := range A {
			var s int64
			for i := range v {
				s += A[r][i] * v[i]
			}
			if s != 0 {
				return nil, fmt.Errorf("constraints: internal error: kernel basis vector not in the kernel")
			}
		}
	}
	return out, nil
}

// extGCD returns g = gcd(x, y) > 0 and s, t with s·x + t·y = g.
func extGCD(x, y int64) (g, s, t int64) {
	oldR, r := x, y
	oldS, s1 := int64(1), int64(0)
	oldT, t1 := int64(0), int64(1)
	for r != 0 {
		q := oldR / r
		oldR, r = r, oldR-q*r
		oldS, s1 = s1, oldS-q*s1
		oldT, t1 = t1, oldT-q*t1
	}
	if oldR < 0 {
		oldR, oldS, oldT = -oldR, -oldS, -oldT
	}
	return oldR, oldS, oldT
}

// graverBasis computes the Graver basis of A (the ⊑-minimal non-zero
// elements of its integer kernel) by the completion procedure of Pottier
// (Hemmecke 2002, Algorithm 2.1 with conformal normal forms), starting
// from a symmetric lattice basis. It gives up with errTooLarge after
// maxWork normal-form steps.
func graverBasis(A [][]int64, n, maxWork int) ([]Vector, error) {
	basis, err := kernelBasis(A, n)
	if err != nil {
		return nil, err
	}
	var G []Vector
	for _, b := range basis {
		G = append(G, b, neg(b))
	}
	var C []Vector
	for i := range G {
		for j := i; j < len(G); j++ {
			C = append(C, add(G[i], G[j]))
		}
	}
	work := 0
	for len(C) > 0 {
		s := C[len(C)-1]
		C = C[:len(C)-1]
		f := slicesClone(s)
		for reduced := true; reduced && !f.isZero(); {
			reduced = false
			for _, g := range G {
				work++
				if work > maxWork {
					return nil, errTooLarge
				}
				if conformal(g, f) {
					for i := range f {
						f[i] -= g[i]
					}
					reduced = true
					break
				}
			}
		}
		if f.isZero() {
			continue
		}
		for _, g := range G {
			C = append(C, add(f, g))
		}
		C = append(C, add(f, f))
		G = append(G, f)
		if len(C) > maxWork {
			return nil, errTooLarge
		}
	}
	// Keep the ⊑-minimal elements.
	var out []Vector
	for i, g := range G {
		if g.isZero() {
			continue
		}
		minimal := true
		for j, h := range G {
			if i != j && !h.isZero() && conformal(h, g) && !equal(h, g) {
				minimal = false
				break
			}
		}
		if minimal && !containsVec(out, g) {
			out = append(out, g)
		}
	}
	return out, nil
}

func neg(v Vector) Vector {
	out := make(Vector, len(v))
	for i, x := range v {
		out[i] = -x
	}
	return out
}

func add(u, v Vector) Vector {
	out := make(Vector, len(u))
	for i := range u {
		out[i] = u[i] + v[i]
	}
	return out
}

func slicesClone(v Vector) Vector { return append(Vector(nil), v...) }

func equal(u, v Vector) bool {
	for i := range u {
		if u[i] != v[i] {
			return false
		}
	}
	return true
}

func containsVec(vs []Vector, v Vector) bool {
	for _, u := range vs {
		if equal(u, v) {
			return true
		}
	}
	return false
}

// graverStats returns the largest L1 norm and the largest max(‖g⁺‖₁,
// ‖g⁻‖₁) over a Graver basis.
func graverStats(gs []Vector) (l1, half int64) {
	for _, g := range gs {
		var pos, negs int64
		for _, x := range g {
			if x > 0 {
				pos += x
			} else {
				negs -= x
			}
		}
		l1 = max(l1, pos+negs)
		half = max(half, pos, negs)
	}
	return l1, half
}

var _ = math.MaxInt64
