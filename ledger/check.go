package ledger

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Check verifies the ledger's invariants and returns every violation found
// (nil when consistent):
//   - the bbolt file structure is sound (pages reachable, keys ordered);
//   - the format marker and all buckets are present;
//   - the account and pending records match the budget digest (digest.go);
//   - every record decodes;
//   - no spent, committed or pending amount is negative;
//   - every pending reservation belongs to an existing account, and each
//     account's spent equals, exactly, its committed total plus the cost of
//     its pending reservations (so every pending cost is charged);
//   - an account has charged at least as many queries as it has pending;
//   - every audit entry decodes;
//   - every record of the release log decodes, no cache key is stored
//     twice, and the byte total is right.
//
// Open runs the same checks and refuses a ledger that fails them; tests run
// it after every test.
//
// It runs in a write transaction it rolls back: bbolt's structural check
// compares the transaction's pages with the database's current free list,
// so in a read transaction a commit running concurrently (a deferred
// group commit) would show its freed pages as "reachable freed".
func (l *Ledger) Check() error {
	if err := l.checkpoint(); err != nil {
		return fmt.Errorf("ledger check: %w", err)
	}
	return l.checkNoCheckpoint()
}

// checkNoCheckpoint is Check of the bbolt file as it is.
func (l *Ledger) checkNoCheckpoint() error {
	var errs []error
	err := l.db.Update(func(tx *bolt.Tx) error {
		if err := checkMeta(tx); err != nil {
			errs = append(errs, err)
		}
		errs = append(errs, check(tx)...)
		// Not part of Open's verification: Open moves an older file's
		// releases into the log and recounts their bytes, so this
		// checks what ran since.
		errs = append(errs, checkReleases(tx)...)
		return errCheckRollback
	})
	if err != nil && !errors.Is(err, errCheckRollback) {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("ledger check: %w", err)
	}
	return nil
}

// check returns every violation of the file structure and the budget
// invariants Check lists, other than the format marker's.
func check(tx *bolt.Tx) []error {
	var errs []error
	for err := range tx.Check() {
		errs = append(errs, fmt.Errorf("bbolt: %w", err))
	}
	for _, name := range [][]byte{bucketMeta, bucketAccounts, bucketPending} {
		if tx.Bucket(name) == nil {
			return append(errs, damaged("bucket %q is missing", name))
		}
	}
	if err := checkDigest(tx); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, checkAudit(tx)...)

	type sums struct {
		pending exact
		n       uint64
	}
	perAccount := map[string]*sums{}
	_ = tx.Bucket(bucketPending).ForEach(func(k, v []byte) error {
		if len(k) != 8 {
			errs = append(errs, fmt.Errorf("malformed reservation key %x", k))
			return nil
		}
		id := idFromKey(k)
		p, err := decodePending(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("reservation %d: %w", id, err))
			return nil
		}
		if p.cost.negative() {
			errs = append(errs, fmt.Errorf("reservation %d: negative cost", id))
		}
		s := perAccount[string(p.accountKey)]
		if s == nil {
			s = &sums{pending: zeroExact()}
			perAccount[string(p.accountKey)] = s
		}
		s.pending = s.pending.add(p.cost)
		if !p.lease {
			s.n++ // a lease is not a query
		}
		return nil
	})

	accts := tx.Bucket(bucketAccounts)
	_ = accts.ForEach(func(k, v []byte) error {
		user, dataset, err := splitAccountKey(k)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		name := fmt.Sprintf("account %q/%q", user, dataset)
		a, err := decodeAccount(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			return nil
		}
		if a.spent.negative() || a.committed.negative() {
			errs = append(errs, fmt.Errorf("%s: negative spent or committed budget", name))
		}
		s := perAccount[string(k)]
		if s == nil {
			s = &sums{pending: zeroExact()}
		}
		if want := a.committed.add(s.pending); !a.spent.equal(want) {
			errs = append(errs, fmt.Errorf("%s: spent (ε %s, δ %s) != committed + pending (ε %s, δ %s)",
				name, a.spent.eps, a.spent.delta, want.eps, want.delta))
		}
		if a.queries < s.n {
			errs = append(errs, fmt.Errorf("%s: %d queries charged but %d pending", name, a.queries, s.n))
		}
		return nil
	})
	for k := range perAccount {
		if accts.Get([]byte(k)) == nil {
			errs = append(errs, fmt.Errorf("pending reservations for missing account %x", k))
		}
	}
	return errs
}

// errCheckRollback ends Check's transaction without writing anything.
var errCheckRollback = errors.New("ledger check: rollback")
