package ctxend

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestErr: nil while the context lives, its error once cancelled, and
// DeadlineExceeded as soon as the deadline has passed — before the
// context's own timer has marked it done.
func TestErr(t *testing.T) {
	if err := Err(context.Background()); err != nil {
		t.Fatalf("a live context: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Err(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled context: %v", err)
	}
	// A deadline in the past whose context is not yet done: a custom
	// context that reports only the deadline.
	past := deadlineOnly{context.Background(), time.Now().Add(-time.Millisecond)}
	if past.Err() != nil {
		t.Fatal("the fixture should not report an error itself")
	}
	if err := Err(past); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a passed deadline: %v, want DeadlineExceeded", err)
	}
	future := deadlineOnly{context.Background(), time.Now().Add(time.Hour)}
	if err := Err(future); err != nil {
		t.Fatalf("a deadline an hour away: %v", err)
	}
}

// deadlineOnly is a context whose Deadline is d and whose Err stays nil,
// as a real one's does between its deadline and its timer firing.
type deadlineOnly struct {
	context.Context
	d time.Time
}

func (c deadlineOnly) Deadline() (time.Time, bool) { return c.d, true }
