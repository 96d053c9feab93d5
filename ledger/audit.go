package ledger

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// The audit history keeps one entry per charge, keyed by its reservation
// id: when, who, on which dataset, how much, the statement's fingerprint
// and text, the release it was for and the replica that charged. The
// entry is written by the transaction that charges (no write of its own,
// no fsync of its own), and a refund marks it in the refund's
// transaction. Cached answers charge nothing and add no entry.
//
// Entries are not covered by the budget digest and do not take part in the
// budget arithmetic: the accounts are the budget, the audit explains it.
// They hold query text, which may hold literals the analyst typed: the
// file is readable by its owner only (0600), and the audit is served only
// to the DBA (README, "Audit").
var bucketAudit = []byte("audit")

// maxAuditQuery caps the query text kept per entry; a longer text is cut
// (on a rune boundary) and marked, so one huge statement cannot bloat
// every transaction.
const maxAuditQuery = 16 << 10

// auditRecord is an audit entry as stored (binary: codec.go; JSON in
// files from before it). Account is the accountKey (user and dataset, any
// bytes); the cost is exact.
type auditRecord struct {
	Time        time.Time
	Account     []byte
	Cost        exact
	Fingerprint string
	Query       string
	Release     string
	Replica     string
	Refunded    time.Time
}

func auditOf(c budget.Charge, key []byte, cost exact, now time.Time, replica string) auditRecord {
	q := c.Query
	if len(q) > maxAuditQuery {
		cut := maxAuditQuery
		for cut > 0 && !utf8.RuneStart(q[cut]) {
			cut--
		}
		q = q[:cut] + fmt.Sprintf("… [%d bytes cut]", len(c.Query)-cut)
	}
	return auditRecord{Time: now, Account: key, Cost: cost,
		Fingerprint: c.Fingerprint, Query: q, Release: c.Release, Replica: replica}
}

func (r auditRecord) encode() ([]byte, error) {
	e := newEnc(96 + len(r.Account) + len(r.Fingerprint) + len(r.Query) + len(r.Release) + len(r.Replica))
	if err := e.time(r.Time); err != nil {
		return nil, err
	}
	e.bytes(r.Account)
	e.rat(r.Cost.eps)
	e.rat(r.Cost.delta)
	e.string(r.Fingerprint)
	e.string(r.Query)
	e.string(r.Release)
	e.string(r.Replica)
	if err := e.time(r.Refunded); err != nil {
		return nil, err
	}
	return e.b, nil
}

// decodeAuditRecord reads either form; the account key is copied.
func decodeAuditRecord(v []byte) (auditRecord, error) {
	if isJSONRecord(v) {
		return decodeAuditJSON(v)
	}
	d := newDec(v)
	r := auditRecord{Time: d.time()}
	r.Account = append([]byte(nil), d.bytes()...)
	r.Cost = exact{d.rat(), d.rat()}
	r.Fingerprint = d.string()
	r.Query = d.string()
	r.Release = d.string()
	r.Replica = d.string()
	r.Refunded = d.time()
	return r, d.end()
}

func putAudit(tx *bolt.Tx, id uint64, rec auditRecord) error {
	v, err := rec.encode()
	if err != nil {
		return fmt.Errorf("encode audit entry: %w", err)
	}
	return tx.Bucket(bucketAudit).Put(idKey(id), v)
}

// markRefunded records a refund on the charge's entry (a charge made by a
// version without the audit history has none: nothing to mark).
func markRefunded(tx *bolt.Tx, id uint64, now time.Time) error {
	b := tx.Bucket(bucketAudit)
	v := b.Get(idKey(id))
	if v == nil {
		return nil
	}
	rec, err := decodeAuditRecord(v)
	if err != nil {
		return fmt.Errorf("audit entry %d: %w", id, err)
	}
	rec.Refunded = now
	return putAudit(tx, id, rec)
}

func decodeAudit(k, v []byte) (budget.AuditEntry, error) {
	if len(k) != 8 {
		return budget.AuditEntry{}, fmt.Errorf("malformed audit key %x", k)
	}
	id := idFromKey(k)
	rec, err := decodeAuditRecord(v)
	if err != nil {
		return budget.AuditEntry{}, fmt.Errorf("audit entry %d: %w", id, err)
	}
	user, dataset, err := splitAccountKey(rec.Account)
	if err != nil {
		return budget.AuditEntry{}, fmt.Errorf("audit entry %d: %w", id, err)
	}
	return budget.AuditEntry{Reservation: id, Time: rec.Time, User: user, Dataset: dataset,
		Cost: rec.Cost.budget(), Fingerprint: rec.Fingerprint, Query: rec.Query,
		Release: rec.Release, Replica: rec.Replica, Refunded: rec.Refunded}, nil
}

// auditPage is how many entries one read transaction reads: fn runs
// outside the transaction, so that a slow reader (a client of the admin
// listener) never holds one open — an open read transaction stops bbolt
// from growing the file, and so every charge.
const auditPage = 512

// Audit calls fn for every entry f selects, in charge order (reservation
// id), until fn returns an error (returned as is).
func (l *Ledger) Audit(ctx context.Context, f budget.AuditFilter, fn func(budget.AuditEntry) error) error {
	// The entries of the latest charges may be in the log only.
	if err := l.checkpoint(); err != nil {
		return fmt.Errorf("ledger audit: %w", err)
	}
	var after []byte
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var page []budget.AuditEntry
		last := after
		err := l.db.View(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketAudit)
			if b == nil {
				return nil
			}
			c := b.Cursor()
			k, v := c.First()
			if after != nil {
				if k, v = c.Seek(after); k != nil && string(k) == string(after) {
					k, v = c.Next()
				}
			}
			for n := 0; k != nil && n < auditPage; k, v = c.Next() {
				n++
				last = append([]byte(nil), k...)
				e, err := decodeAudit(k, v)
				if err != nil {
					return err
				}
				if f.Match(e) {
					page = append(page, e)
				}
			}
			if k == nil {
				last = nil // done
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("ledger audit: %w", err)
		}
		for _, e := range page {
			if err := fn(e); err != nil {
				return err
			}
		}
		if last == nil {
			return nil
		}
		after = last
	}
}

// checkAudit returns every audit entry that does not decode.
func checkAudit(tx *bolt.Tx) []error {
	b := tx.Bucket(bucketAudit)
	if b == nil {
		return nil // created by Open; Check on a file it has not opened yet
	}
	var errs []error
	_ = b.ForEach(func(k, v []byte) error {
		if _, err := decodeAudit(k, v); err != nil {
			errs = append(errs, err)
		}
		return nil
	})
	return errs
}
