package main

import (
	"math"
	"runtime"
	"sync"
)

// The inference attack of liu2016 §IV-C against the released histogram Q1:
// a Bayesian adversary computes the posterior of a target user's home cell
// from the noisy histogram and auxiliary knowledge, and the leaked
// information is the entropy drop from the prior of Eq. 8 (the home cells
// of the users it knows) to that posterior, Eq. 11, in bits. Three
// adversaries:
//
//   - independent (Attack 1): knows every tuple except the target's and its
//     friends', and treats the friends' tuples as independent draws from
//     the prior, as plain DP assumes;
//   - dependent (Attack 2, the DDP adversary of Def. 4): the same knowledge,
//     plus the friendship graph and the dependence model P(x_j | x_i)
//     (the fitted Eq. 26): the friends' unknown tuples in the release are
//     weighted by where the target would put them. This is the adversary
//     DDP defends against: it learns about the target through the
//     dependent tuples' share of the answer;
//   - friends-known (Eq. 9 read literally): knows every tuple but the
//     target's, friends included, and weights its prior by the friends'
//     cells through the model. Most of what it learns comes from the
//     friends' own data, not from the release, so no noise calibration can
//     remove it; it shows how much of the leak is the mechanism's.
//
// The likelihood of the residual r = released − known part is exact per
// cell (a binomial number of friends in the cell plus discrete Laplace
// noise); cells are treated as independent, which ignores the small
// negative correlation between a multinomial's cells.

type attackKind int

const (
	attackIndependent attackKind = iota
	attackDependent
	attackFriendsKnown
)

func (k attackKind) String() string {
	return [...]string{"independent", "dependent", "friends-known"}[k]
}

// userLeak is the outcome of one attack on one user.
type userLeak struct {
	user   int
	bits   float64 // H(prior) − H(posterior)
	hit    bool    // the posterior's mode is the true cell
	errKm  float64 // distance between the mode and the true cell
	degree int
}

// attackRelease runs one adversary against every target on one released
// histogram with noise scale t. cond[g][c] = P(friend in c | user in g).
func attackRelease(d *socialData, cond [][]float64, hist, released []int64, t float64, targets []int, kind attackKind) []userLeak {
	out := make([]userLeak, len(targets))
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				out[k] = attackUser(d, cond, hist, released, t, targets[k], kind)
			}
		}()
	}
	for k := range targets {
		next <- k
	}
	close(next)
	wg.Wait()
	return out
}

func attackUser(d *socialData, cond [][]float64, hist, released []int64, t float64, i int, kind attackKind) userLeak {
	G := d.grid.Size()
	friends := d.friends[i]
	// The known part of the histogram and the prior of Eq. 8 come from
	// the users the adversary knows: everyone but i and, unless they are
	// known, i's friends. The prior is smoothed by half a user per cell
	// so that no cell is impossible.
	known := make([]int64, G)
	copy(known, hist)
	known[d.home[i]]--
	if kind != attackFriendsKnown {
		for _, j := range friends {
			known[d.home[j]]--
		}
	}
	prior := make([]float64, G)
	var n float64
	for c := range G {
		prior[c] = float64(known[c]) + 0.5
		n += prior[c]
	}
	for c := range prior {
		prior[c] /= n
	}
	r := make([]int64, G)
	for c := range G {
		r[c] = released[c] - known[c]
	}
	logC := math.Log((1 - math.Exp(-1/t)) / (1 + math.Exp(-1/t)))
	logDL := func(k int64) float64 { return logC - math.Abs(float64(k))/t }

	logPost := make([]float64, G)
	m := len(friends)
	switch kind {
	case attackFriendsKnown:
		// r = e_g + noise; the prior is weighted by the friends' cells.
		for g := range G {
			v := math.Log(prior[g]) + logDL(r[g]-1) - logDL(r[g])
			for _, j := range friends {
				v += math.Log(cond[g][d.home[j]])
			}
			logPost[g] = v
		}
	case attackIndependent:
		// Friends' cells ~ prior, whatever g is: only cell g's term
		// depends on g.
		base := make([]float64, G)
		shifted := make([]float64, G)
		total := 0.0
		for c := range G {
			base[c] = binomLaplace(m, prior[c], r[c], logDL)
			shifted[c] = binomLaplace(m, prior[c], r[c]-1, logDL)
			total += base[c]
		}
		for g := range G {
			logPost[g] = math.Log(prior[g]) + total - base[g] + shifted[g]
		}
	case attackDependent:
		for g := range G {
			v := math.Log(prior[g])
			for c := range G {
				k := r[c]
				if c == g {
					k--
				}
				v += binomLaplace(m, cond[g][c], k, logDL)
			}
			logPost[g] = v
		}
	}
	post := normalizeLog(logPost)
	mode := 0
	for g := range post {
		if post[g] > post[mode] {
			mode = g
		}
	}
	return userLeak{
		user:   i,
		bits:   entropyBits(prior) - entropyBits(post),
		hit:    mode == d.home[i],
		errKm:  kmBetween(d.grid, mode, d.home[i]),
		degree: m,
	}
}

// binomLaplace is log Σ_s Binomial(s; m, p)·DL(k − s): the probability that
// a cell whose residual is k holds s of m friends (each there with
// probability p) and noise k − s, to a relative precision of 10⁻¹⁶.
func binomLaplace(m int, p float64, k int64, logDL func(int64) float64) float64 {
	if m == 0 || p <= 0 {
		return logDL(k)
	}
	if p >= 1 {
		return logDL(k - int64(m))
	}
	logP, log1P := math.Log(p), math.Log1p(-p)
	lb := float64(m) * log1P // log Binomial(0)
	mean := float64(m) * p
	maxDL := logDL(0)
	// Streaming log-sum-exp: best is the largest term so far, sum the
	// terms' total relative to it.
	best, sum := math.Inf(-1), 0.0
	for s := 0; s <= m; s++ {
		if s > 0 {
			lb += math.Log(float64(m-s+1)/float64(s)) + logP - log1P
		}
		v := lb + logDL(k-int64(s))
		if v > best {
			sum = sum*math.Exp(best-v) + 1
			best = v
		} else {
			sum += math.Exp(v - best)
		}
		// Past the mean the binomial only falls, so every later term is
		// below lb + max DL: stop once that is negligible (e^−37 ≈ 10⁻¹⁶)
		// against the largest term so far.
		if float64(s) > mean && lb+maxDL < best-37 {
			break
		}
	}
	return best + math.Log(sum)
}

func logSumExp(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = max(m, x)
	}
	if math.IsInf(m, -1) {
		return m
	}
	s := 0.0
	for _, x := range xs {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}

func normalizeLog(l []float64) []float64 {
	z := logSumExp(l)
	p := make([]float64, len(l))
	for i, v := range l {
		p[i] = math.Exp(v - z)
	}
	return p
}

func entropyBits(p []float64) float64 {
	h := 0.0
	for _, v := range p {
		if v > 0 {
			h -= v * math.Log2(v)
		}
	}
	return h
}
