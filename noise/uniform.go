package noise

import (
	"encoding/binary"
	"math/big"
	"math/bits"
)

// Uniform returns an integer uniformly distributed on [0, n). It panics if
// n == 0. It uses Lemire's multiply-and-reject method: the 128-bit product
// of a random word and n is uniform on [0, n·2^64), and rejecting the
// (2^64 mod n) low values that would be over-represented leaves every high
// word with exactly ⌊2^64/n⌋ preimages, so the result is unbiased (unlike
// Uint64() % n).
func Uniform(src Source, n uint64) uint64 {
	if n == 0 {
		panic("noise: Uniform with n == 0")
	}
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n // (2^64 − n) mod n = 2^64 mod n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// UniformBig returns an integer uniformly distributed on [0, n). It panics
// if n ≤ 0. It draws bitlen(n−1) random bits and rejects values ≥ n; each
// try succeeds with probability > 1/2.
func UniformBig(src Source, n *big.Int) *big.Int {
	return uniformBig(new(big.Int), src, n)
}

// uniformBig sets z to a uniform integer on [0, n) and returns z.
func uniformBig(z *big.Int, src Source, n *big.Int) *big.Int {
	if n.Sign() <= 0 {
		panic("noise: UniformBig with n <= 0")
	}
	if n.IsUint64() {
		return z.SetUint64(Uniform(src, n.Uint64()))
	}
	// n > 2^64 here, so n−1 has at least 64 bits.
	nbits := new(big.Int).Sub(n, big.NewInt(1)).BitLen()
	nbytes := (nbits + 7) / 8
	buf := make([]byte, (nbytes+7)/8*8)
	// Mask of the bits of the most significant byte that are in range.
	topMask := byte(0xff >> (uint(nbytes*8-nbits) % 8))
	for {
		for i := 0; i < len(buf); i += 8 {
			binary.BigEndian.PutUint64(buf[i:], src.Uint64())
		}
		b := buf[len(buf)-nbytes:]
		b[0] &= topMask
		z.SetBytes(b)
		if z.Cmp(n) < 0 {
			return z
		}
	}
}

// Bit returns a fair coin flip.
func Bit(src Source) bool {
	return src.Uint64()>>63 == 1
}

// Bernoulli returns true with probability a/b exactly. It panics unless
// 0 < b and a ≤ b.
func Bernoulli(src Source, a, b uint64) bool {
	if b == 0 || a > b {
		panic("noise: Bernoulli needs 0 <= a <= b, b > 0")
	}
	return Uniform(src, b) < a
}

// bernoulliBig returns true with probability a/b exactly, for 0 ≤ a ≤ b,
// b > 0. scratch is overwritten.
func bernoulliBig(src Source, a, b, scratch *big.Int) bool {
	return uniformBig(scratch, src, b).Cmp(a) < 0
}
