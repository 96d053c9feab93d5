package pgledger

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// TestOnCommit: every statement that changes the ledger (a reservation, a
// commit, a refund) is reported once, as one write with its duration; a
// reservation refused for the budget changed nothing and is not.
func TestOnCommit(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	var mu sync.Mutex
	var writes []int
	var took []time.Duration
	l, err := Open(context.Background(), dsn, Options{Schema: schema, Replica: "r1", OnCommit: func(w int, d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		writes = append(writes, w)
		took = append(took, d)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	reported := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(writes)
	}
	ctx := context.Background()
	limit := budget.Budget{Epsilon: 1}
	var r1, r2 *Reservation
	steps := []struct {
		name string
		do   func() error
		want int // reports after the step
	}{
		{"reserve", func() (err error) { r1, err = l.Reserve(ctx, "u", "d", budget.Budget{Epsilon: 0.5}, limit); return err }, 1},
		{"commit", func() error { _, err := r1.Commit("k", []byte("x")); return err }, 2},
		{"reserve", func() (err error) {
			r2, err = l.Reserve(ctx, "u", "d", budget.Budget{Epsilon: 0.25}, limit)
			return err
		}, 3},
		{"refund", func() error { return r2.Refund() }, 4},
		{"over the limit", func() error {
			if _, err := l.Reserve(ctx, "u", "d", budget.Budget{Epsilon: 0.75}, limit); err == nil {
				t.Error("a reservation over the limit succeeded")
			}
			return nil
		}, 4},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := reported(); got != s.want {
			t.Errorf("after %s: %d writes reported, want %d", s.name, got, s.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range writes {
		if writes[i] != 1 || took[i] <= 0 {
			t.Errorf("report %d: %d writes in %v, want 1 write in a positive time", i, writes[i], took[i])
		}
	}
}
