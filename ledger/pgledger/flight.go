package pgledger

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
)

// Flight serialises the release of cacheKey across replicas: it returns
// once this process holds a session advisory lock on the key, and the
// returned function releases it. The caller looks the key up after
// Flight, so an identical query on another replica waits for the first
// one's release and answers with it, free, instead of being charged
// again. A replica that dies releases its locks with its connection.
//
// The lock holds a connection of a pool of its own (so at most
// pool_max_conns fresh queries per replica wait on the backend at once). Two
// keys whose hashes collide (64 bits) are only serialised needlessly.
// An error means the ledger is unreachable: the caller must run nothing.
func (l *Ledger) Flight(ctx context.Context, cacheKey string) (func(), error) {
	if cacheKey == "" {
		return func() {}, nil
	}
	sum := sha256.Sum256([]byte("ddp-proxy release " + l.schema + "\x00" + cacheKey))
	key := int64(binary.BigEndian.Uint64(sum[:8]))
	wctx, cancel := context.WithTimeout(ctx, flightTimeout)
	defer cancel()
	conn, err := l.locks.Acquire(wctx)
	if err != nil {
		return nil, l.failure(ctx, "lock release", err)
	}
	if _, err := conn.Exec(wctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		// The lock may or may not be held: drop the connection, which
		// releases it in any case.
		_ = conn.Conn().Close(context.Background())
		conn.Release()
		return nil, l.failure(ctx, "lock release", err)
	}
	// The unlock runs in the background: the answer need not wait for it
	// (Close waits for the connection to come back).
	return func() {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
			defer cancel()
			if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, key); err != nil {
				_ = conn.Conn().Close(context.Background())
			}
			conn.Release()
		}()
	}, nil
}
