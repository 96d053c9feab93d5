package synopsis

import "math"

// Infer post-processes a measurement (constrained inference, package
// documentation): weighted least squares over the S chain and the H trees,
// then isotonic regression of the cumulative counts. It reads only the
// noisy nodes, so it is free post-processing.
func (l *Layout) Infer(m *Measurement, eps float64) *Synopsis {
	l.nodes()
	vs, vh := Variance(m.ScaleS), Variance(m.ScaleH)
	total := m.S[l.blocks-1]

	// Bottom-up: z[i] is the best estimate of H node i's count from the
	// measurements in its subtree, u[i] its variance. Children come after
	// their parents in Layout.h (Layout.split), so a reverse scan sees
	// children first.
	z := make([]float64, len(l.h))
	u := make([]float64, len(l.h))
	for i := len(l.h) - 1; i >= 0; i-- {
		nd := l.h[i]
		y := float64(m.H[i])
		if nd.nkid == 0 {
			z[i], u[i] = y, vh
			continue
		}
		zc, uc := sumOver(span{nd.kid0, nd.nkid}, z, u)
		z[i] = (y/vh + zc/uc) / (1/vh + 1/uc)
		u[i] = 1 / (1/vh + 1/uc)
	}
	// Block totals as seen by the H trees (no information for width-1
	// blocks: infinite variance, weight 0).
	zb := make([]float64, l.blocks)
	wb := make([]float64, l.blocks) // 1/variance
	for b, kids := range l.roots {
		if kids.n == 0 {
			continue
		}
		s, v := sumOver(kids, z, u)
		zb[b], wb[b] = s, 1/v
	}

	// The S chain: cumulative counts C_0..C_{K−2} (C_{K−1} = total, exact),
	// minimising Σ_b (y_b − C_b)²/vs + Σ_b (zb_b − (C_b − C_{b−1}))²·wb_b.
	// Setting the gradient to zero gives a tridiagonal system:
	//   C_b(1/vs + wb_b + wb_{b+1}) − wb_b·C_{b−1} − wb_{b+1}·C_{b+1}
	//     = y_b/vs + wb_b·zb_b − wb_{b+1}·zb_{b+1}  (+ wb_{K−1}·total for b = K−2).
	c := make([]float64, l.blocks)
	c[l.blocks-1] = float64(total)
	if k := l.blocks - 1; k > 0 {
		diag := make([]float64, k)
		off := make([]float64, k) // off[b] couples C_b and C_{b+1}: −wb_{b+1}
		rhs := make([]float64, k)
		for b := range k {
			diag[b] = 1/vs + wb[b] + wb[b+1]
			off[b] = -wb[b+1]
			rhs[b] = float64(m.S[b])/vs + wb[b]*zb[b] - wb[b+1]*zb[b+1]
		}
		rhs[k-1] += wb[k] * float64(total)
		solveTridiagonal(diag, off, rhs, c[:k])
	}

	// Top-down: split every estimated total among its subtrees in
	// proportion to their variances (the least-squares correction).
	x := make([]float64, len(l.h))
	leaf := make([]float64, l.n)
	spread := func(total float64, kids span) {
		zc, uc := sumOver(kids, z, u)
		for k := kids.first; k < kids.first+kids.n; k++ {
			x[k] = z[k] + u[k]/uc*(total-zc)
		}
	}
	prev := 0.0
	for b, kids := range l.roots {
		bt := c[b] - prev
		prev = c[b]
		if kids.n == 0 {
			leaf[b*l.width] = bt
			continue
		}
		spread(bt, kids)
	}
	for i, nd := range l.h { // parents before children
		if nd.nkid == 0 {
			leaf[nd.lo] = x[i]
			continue
		}
		spread(x[i], span{nd.kid0, nd.nkid})
	}

	// Monotone cumulative counts in [0, total] with F(N−1) = total.
	f := make([]float64, l.n)
	acc := 0.0
	for j, v := range leaf {
		acc += v
		f[j] = acc
	}
	isotonic(f[:l.n-1])
	cum := make([]int64, l.n)
	for j := 0; j < l.n-1; j++ {
		cum[j] = int64(math.Round(min(max(f[j], 0), float64(total))))
	}
	cum[l.n-1] = total
	return &Synopsis{
		Mechanism:   l.cfg.Mechanism,
		Lo:          l.cfg.Lo,
		Theta:       l.cfg.Theta,
		Fanout:      l.cfg.Fanout,
		RowsPerUnit: l.cfg.RowsPerUnit,
		Epsilon:     eps,
		EpsilonS:    m.EpsilonS,
		EpsilonH:    m.EpsilonH,
		ScaleS:      m.ScaleS.Float64(),
		ScaleH:      m.ScaleH.Float64(),
		cum:         cum,
	}
}

func sumOver(sp span, z, u []float64) (zs, us float64) {
	for i := sp.first; i < sp.first+sp.n; i++ {
		zs += z[i]
		us += u[i]
	}
	return zs, us
}

// solveTridiagonal solves the symmetric tridiagonal system with diagonal d
// and off-diagonal e (e[i] couples i and i+1; e[len−1] is unused) by the
// Thomas algorithm. The system is strictly diagonally dominant (the 1/vs
// term), so no pivoting is needed.
func solveTridiagonal(d, e, r, out []float64) {
	n := len(d)
	cp := make([]float64, n)
	dp := make([]float64, n)
	cp[0] = e[0] / d[0]
	dp[0] = r[0] / d[0]
	for i := 1; i < n; i++ {
		den := d[i] - e[i-1]*cp[i-1]
		cp[i] = e[i] / den
		dp[i] = (r[i] - e[i-1]*dp[i-1]) / den
	}
	out[n-1] = dp[n-1]
	for i := n - 2; i >= 0; i-- {
		out[i] = dp[i] - cp[i]*out[i+1]
	}
}

// isotonic replaces f by its least-squares non-decreasing fit (pool
// adjacent violators, equal weights).
func isotonic(f []float64) {
	type block struct {
		sum float64
		n   int
	}
	var st []block
	for _, v := range f {
		st = append(st, block{v, 1})
		for len(st) > 1 {
			a, b := st[len(st)-2], st[len(st)-1]
			if a.sum/float64(a.n) <= b.sum/float64(b.n) {
				break
			}
			st = st[:len(st)-2]
			st = append(st, block{a.sum + b.sum, a.n + b.n})
		}
	}
	i := 0
	for _, b := range st {
		m := b.sum / float64(b.n)
		for range b.n {
			f[i] = m
			i++
		}
	}
}
