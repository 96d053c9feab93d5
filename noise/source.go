package noise

import (
	"crypto/rand"
	"encoding/binary"
	randv2 "math/rand/v2"
	"sync"
)

// Source is the randomness the samplers consume: independent, uniformly
// distributed 64-bit words. It is the only thing the release step injects;
// every distribution in this package is built from it exactly.
//
// Production code must use CryptoSource. *math/rand/v2.ChaCha8 and
// *math/rand/v2.PCG satisfy Source too, which is what SeededSource uses for
// reproducible tests.
type Source interface {
	Uint64() uint64
}

// cryptoBufSize is how many random bytes one crypto/rand read fetches. A
// larger buffer amortises the system call; 512 bytes serve about 64 words,
// which is a few discrete Laplace samples.
const cryptoBufSize = 512

// cryptoSource buffers crypto/rand output behind a mutex so that one value
// can be shared by all sessions.
type cryptoSource struct {
	mu  sync.Mutex
	buf [cryptoBufSize]byte
	off int // next unread byte of buf; cryptoBufSize means empty
}

// CryptoSource returns a Source backed by crypto/rand, buffered for
// throughput. It is safe for concurrent use; every call locks a mutex, so
// code that samples heavily from many goroutines should give each goroutine
// its own CryptoSource (they are cheap and independent).
func CryptoSource() Source {
	return &cryptoSource{off: cryptoBufSize}
}

func (c *cryptoSource) Uint64() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off+8 > cryptoBufSize {
		// Since Go 1.24 crypto/rand.Read never returns an error: when the
		// kernel cannot supply randomness the program crashes rather than
		// continue with weak noise, which is the failure mode we want.
		_, _ = rand.Read(c.buf[:])
		c.off = 0
	}
	v := binary.LittleEndian.Uint64(c.buf[c.off:])
	// Consumed bytes are wiped so that a later memory disclosure reveals
	// no noise that was already released.
	clear(c.buf[c.off : c.off+8])
	c.off += 8
	return v
}

// SeededSource returns a deterministic Source (ChaCha8 keyed by seed) FOR
// TESTS ONLY: anyone who learns the seed can subtract the noise from every
// answer. It is not safe for concurrent use. Nothing outside _test.go files
// and test helpers may call it.
func SeededSource(seed uint64) Source {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	return randv2.NewChaCha8(key)
}
