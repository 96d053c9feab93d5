package release_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/release"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// memLedger is a second release.Ledger, in memory, written only from the
// interface's contract: it shows the engine needs nothing of package
// ledger (a database ledger drops in the same way). Amounts are float64
// here; real ledgers sum exactly.
type memLedger struct {
	mu       sync.Mutex
	spent    map[[2]string]budget.Budget
	releases map[string][]byte
	audit    []budget.AuditEntry
}

var _ release.Ledger = (*memLedger)(nil)

func newMemLedger() *memLedger {
	return &memLedger{spent: map[[2]string]budget.Budget{}, releases: map[string][]byte{}}
}

type memReservation struct {
	l    *memLedger
	c    budget.Charge
	i    int // audit index
	done bool
}

func (l *memLedger) Charge(_ context.Context, c budget.Charge, limit budget.Budget) (budget.Reservation, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := [2]string{c.User, c.Dataset}
	s := l.spent[k]
	if s.Epsilon+c.Cost.Epsilon > limit.Epsilon || s.Delta+c.Cost.Delta > limit.Delta {
		return nil, sqlerr.New(sqlerr.BudgetExhausted, "budget exhausted")
	}
	l.spent[k] = budget.Budget{Epsilon: s.Epsilon + c.Cost.Epsilon, Delta: s.Delta + c.Cost.Delta}
	l.audit = append(l.audit, budget.AuditEntry{Reservation: uint64(len(l.audit) + 1), User: c.User, Dataset: c.Dataset,
		Cost: c.Cost, Query: c.Query, Fingerprint: c.Fingerprint, Release: c.Release})
	return &memReservation{l: l, c: c, i: len(l.audit) - 1}, nil
}

func (r *memReservation) Commit(key string, rel []byte) ([]byte, error) {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	if r.done {
		return nil, errors.New("resolved")
	}
	r.done = true
	if key == "" {
		return rel, nil
	}
	if prev, ok := r.l.releases[key]; ok {
		return prev, nil // first writer wins
	}
	r.l.releases[key] = append([]byte(nil), rel...)
	return rel, nil
}

func (r *memReservation) CommitDeferred(key string, rel []byte) ([]byte, error) {
	return r.Commit(key, rel)
}

func (r *memReservation) Refund() error {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	if r.done {
		return errors.New("resolved")
	}
	r.done = true
	k := [2]string{r.c.User, r.c.Dataset}
	s := r.l.spent[k]
	r.l.spent[k] = budget.Budget{Epsilon: s.Epsilon - r.c.Cost.Epsilon, Delta: s.Delta - r.c.Cost.Delta}
	return nil
}

func (l *memLedger) Release(_ context.Context, key string) ([]byte, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.releases[key]
	return v, ok, nil
}

func (l *memLedger) Account(_ context.Context, user, dataset string) (budget.Account, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return budget.Account{User: user, Dataset: dataset, Spent: l.spent[[2]string{user, dataset}]}, nil
}

func (l *memLedger) Remaining(ctx context.Context, user, dataset string, limit budget.Budget) (budget.Budget, error) {
	a, _ := l.Account(ctx, user, dataset)
	return budget.Budget{Epsilon: max(limit.Epsilon-a.Spent.Epsilon, 0), Delta: max(limit.Delta-a.Spent.Delta, 0)}, nil
}

func (l *memLedger) Accounts(context.Context) ([]budget.Account, error) { return nil, nil }

func (l *memLedger) Reservations(context.Context) ([]budget.Pending, error) { return nil, nil }

func (l *memLedger) Audit(_ context.Context, f budget.AuditFilter, fn func(budget.AuditEntry) error) error {
	l.mu.Lock()
	es := append([]budget.AuditEntry(nil), l.audit...)
	l.mu.Unlock()
	for _, e := range es {
		if f.Match(e) {
			if err := fn(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// The engine runs on another Ledger implementation: charged once, repeats
// served identically for free, exhaustion refused.
func TestEngineOnAnotherLedger(t *testing.T) {
	f := newFixture(t, t.TempDir())
	l := newMemLedger()
	e := release.New(f.be, l, release.Options{})
	ctx := context.Background()
	u, pl := f.plan(t, "alice", "SELECT COUNT(*) FROM people", 1)
	first, err := e.RunQuery(ctx, u, pl, release.Query{Text: "q"})
	if err != nil || first.Cached {
		t.Fatalf("first: %v", err)
	}
	again, err := e.RunQuery(ctx, u, pl, release.Query{Text: "q"})
	if err != nil || !again.Cached || again.Rows[0][0] != first.Rows[0][0] {
		t.Fatalf("repeat: %v, cached %v, %v vs %v", err, again != nil && again.Cached, again, first)
	}
	if len(l.audit) != 1 || l.audit[0].Release != pl.CacheKey {
		t.Errorf("audit = %+v, want one charge for the plan's release", l.audit)
	}
	// bob has ε 0.3: two queries at 0.15, the third is refused.
	bob, _ := f.plan(t, "bob", "SELECT COUNT(*) FROM people", 0.15)
	for i, q := range []string{"SELECT COUNT(*) FROM people WHERE age > 40", "SELECT COUNT(*) FROM people WHERE age > 41", "SELECT COUNT(*) FROM people WHERE age > 42"} {
		_, pl := f.plan(t, "bob", q, 0.15)
		_, err := e.RunQuery(ctx, bob, pl, release.Query{})
		if exhausted := sqlerr.HasCode(err, sqlerr.BudgetExhausted); exhausted != (i == 2) || err != nil && !exhausted {
			t.Fatalf("bob's query %d: %v", i, err)
		}
	}
	if a, _ := l.Account(ctx, "bob", "census"); a.Spent.Epsilon > 0.3+1e-12 {
		t.Errorf("bob spent %v over the limit 0.3", a.Spent.Epsilon)
	}
}
