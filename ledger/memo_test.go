package ledger

import (
	"context"
	"errors"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// The account memo never answers with an account that is not the one
// stored: a write that was rolled back (a group member failed, the
// transaction was re-run) or a change made behind the ledger's back is
// read from the file, not from the memo.
func TestMemoFollowsTheFile(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if _, err := h.l.Reserve(ctx, "ann", "census", eps(0.25), eps(1)); err != nil {
		t.Fatal(err)
	}
	key := accountKey("ann", "census")
	errRollback := errors.New("roll back")
	err := h.l.db.Update(func(tx *bolt.Tx) error {
		a, err := h.l.memo.getAccount(tx.Bucket(bucketAccounts), key)
		if err != nil {
			return err
		}
		a.spent = a.spent.add(exact{rat(t, "1/2"), rat(t, "0")})
		if err := h.l.memo.putAccount(tx, key, a); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatalf("Update = %v", err)
	}
	if got := h.spentExact("ann", "census"); got.eps.RatString() != "1/4" {
		t.Fatalf("spent %s after a rolled-back write, want 1/4 (the memo answered)", got.eps.RatString())
	}
	// 1/4 + 3/4 = 1 fits exactly; with the rolled-back 1/2 it would not.
	if _, err := h.l.Reserve(ctx, "ann", "census", eps(0.75), eps(1)); err != nil {
		t.Fatalf("charging the rest after a rolled-back write: %v", err)
	}
	// Behind the memo's back: a write with a fresh memo (another writer),
	// seen after a reopen (while open, the ledger's own state decides: the
	// file is locked).
	if err := h.l.checkpoint(); err != nil {
		t.Fatal(err)
	}
	if err := h.l.db.Update(func(tx *bolt.Tx) error {
		a, err := newMemo().getAccount(tx.Bucket(bucketAccounts), key)
		if err != nil {
			return err
		}
		a.queries = 99
		return newMemo().putAccount(tx, key, a)
	}); err != nil {
		t.Fatal(err)
	}
	h.reopen()
	if a, err := h.l.account("ann", "census"); err != nil || a.queries != 99 {
		t.Fatalf("account after an outside write = %+v, %v; want 99 queries", a, err)
	}
	h.checkAndClose()
}

// Costs read through the decimal memo are the exact decimals, and the
// shared rationals are never changed by the arithmetic on them.
func TestMemoDecimals(t *testing.T) {
	m := newMemo()
	a, err := m.exactOf(eps(0.1))
	if err != nil {
		t.Fatal(err)
	}
	sum := a.add(a).add(a)
	if sum.eps.RatString() != "3/10" || a.eps.RatString() != "1/10" {
		t.Fatalf("0.1+0.1+0.1 = %s (and 0.1 reads %s), want 3/10 and 1/10", sum.eps.RatString(), a.eps.RatString())
	}
	b, _ := m.exactOf(eps(0.1))
	if b.eps.RatString() != "1/10" {
		t.Fatalf("0.1 from the memo = %s", b.eps.RatString())
	}
	if _, err := m.exactOf(eps(-1)); err == nil {
		t.Fatal("a negative cost read as an exact decimal")
	}
}
