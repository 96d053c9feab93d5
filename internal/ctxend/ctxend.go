// Package ctxend tells whether a caller's context has ended, deadline
// included, before its timer fires.
package ctxend

import (
	"context"
	"time"
)

// Err returns ctx's error, or context.DeadlineExceeded once ctx's
// deadline has passed though its timer has not fired yet. A network call
// bounded by that deadline (a dial, a read) can fail first with an i/o
// timeout that is the caller's deadline — a client's statement timeout —
// and not an unreachable server; callers that classify such failures ask
// here rather than ctx.Err.
func Err(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}
