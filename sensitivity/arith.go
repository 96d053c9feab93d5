package sensitivity

import (
	"fmt"
	"math"
	"math/bits"
)

func check(n Neighbors, k int) error {
	if !n.valid() {
		return fmt.Errorf("neighbour relation %v: %w", n, ErrInvalid)
	}
	if k < 1 {
		return fmt.Errorf("rows per unit k=%d, want k >= 1: %w", k, ErrInvalid)
	}
	return nil
}

func checkBounds(n Neighbors, k int, lo, hi int64) error {
	if err := check(n, k); err != nil {
		return err
	}
	if lo > hi {
		return fmt.Errorf("bounds [%d, %d] out of order, want lo <= hi: %w", lo, hi, ErrInvalid)
	}
	return nil
}

// abs returns |x| as a uint64, which holds |math.MinInt64| = 2^63.
func abs(x int64) uint64 {
	if x < 0 {
		return uint64(-(x + 1)) + 1
	}
	return uint64(x)
}

// maxAbs is max(|lo|, |hi|), exact for every int64 pair.
func maxAbs(lo, hi int64) uint64 { return max(abs(lo), abs(hi)) }

// width is max(hi, 0) − min(lo, 0) = max(hi−lo, |lo|, |hi|) (see Sum). It
// is at most (2^63 − 1) + 2^63 < 2^64, so it cannot wrap in a uint64, while
// hi−lo computed in int64 could.
func width(lo, hi int64) uint64 { return abs(max(hi, 0)) + abs(min(lo, 0)) }

// mul returns a·b as an int64, or ErrOverflow when it exceeds MaxInt64.
func mul(a, b uint64) (int64, error) {
	h, l := bits.Mul64(a, b)
	if h != 0 || l > math.MaxInt64 {
		return 0, ErrOverflow
	}
	return int64(l), nil
}
