package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"time"

	bolt "go.etcd.io/bbolt"
)

// DumpFormat names a ledger dump, the JSON document `ddp-proxy ledger
// export` writes and `ddp-proxy ledger import` reads, to move a ledger
// between stores (bbolt and PostgreSQL) without losing a charge.
const (
	DumpFormat = "ddp-proxy ledger dump"
	// DumpVersion is the version a dump is written with when none of its
	// pending reservations is a budget lease; one that holds a lease is
	// DumpLeaseVersion. A reader of version 1 would take a lease for a
	// query's reservation (wrong query counts, and Open would never
	// settle it), so such a dump must be refused by binaries older than
	// leases, and version 1 dumps stay readable by them.
	DumpVersion      = 1
	DumpLeaseVersion = 2
)

// Dump is a whole ledger. Amounts are exact rationals as strings ("3/10"
// or "0.3"), never floats.
type Dump struct {
	Format   string        `json:"format"`
	Version  int           `json:"version"`
	Accounts []DumpAccount `json:"accounts"`
	Pending  []DumpPending `json:"pending"`
	Releases []DumpRelease `json:"releases"`
	// Audit is the audit history (absent in ledgers older than it).
	Audit []DumpAudit `json:"audit,omitempty"`
}

// DumpAudit is one audit entry, keyed by its reservation id; amounts are
// exact.
type DumpAudit struct {
	Reservation uint64    `json:"reservation"`
	Time        time.Time `json:"time"`
	User        string    `json:"user"`
	Dataset     string    `json:"dataset"`
	Epsilon     string    `json:"epsilon"`
	Delta       string    `json:"delta"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	Query       string    `json:"query,omitempty"`
	Release     string    `json:"release,omitempty"`
	Replica     string    `json:"replica,omitempty"`
	Refunded    time.Time `json:"refunded,omitzero"`
}

// DumpAccount is one (user, dataset): spent includes its pending
// reservations.
type DumpAccount struct {
	User             string    `json:"user"`
	Dataset          string    `json:"dataset"`
	SpentEpsilon     string    `json:"spent_epsilon"`
	SpentDelta       string    `json:"spent_delta"`
	CommittedEpsilon string    `json:"committed_epsilon"`
	CommittedDelta   string    `json:"committed_delta"`
	Queries          uint64    `json:"queries"`
	LastCharge       time.Time `json:"last_charge"`
}

// DumpPending is a reservation neither committed nor refunded: it moves as
// a charge, still pending (its query may have run).
type DumpPending struct {
	ID      uint64    `json:"id"`
	User    string    `json:"user"`
	Dataset string    `json:"dataset"`
	Epsilon string    `json:"epsilon"`
	Delta   string    `json:"delta"`
	Replica string    `json:"replica,omitempty"`
	Time    time.Time `json:"time"`
	// Lease: budget a serving process held ahead for its charges
	// (lease.go), not a query (exported while it was held).
	Lease bool `json:"lease,omitempty"`
}

// DumpRelease is one published release (key and value are bytes: base64
// in JSON).
type DumpRelease struct {
	Key  []byte `json:"key"`
	Data []byte `json:"data"`
}

// Check verifies a dump before it is imported: its format, that every
// amount is an exact non-negative rational, that each account's spent is
// exactly committed + its pending reservations (so no charge is lost on
// the way), that pending reservations belong to accounts, and that
// accounts, reservation ids and release keys are unique.
func (d *Dump) Check() error {
	if d.Format != DumpFormat || d.Version != DumpVersion && d.Version != DumpLeaseVersion {
		return fmt.Errorf("not a ledger dump of version %d or %d (format %q, version %d)", DumpVersion, DumpLeaseVersion, d.Format, d.Version)
	}
	var errs []error
	if d.Version == DumpVersion {
		for _, p := range d.Pending {
			if p.Lease {
				errs = append(errs, fmt.Errorf("pending reservation %d is a budget lease, which a version %d dump cannot hold (want version %d)", p.ID, DumpVersion, DumpLeaseVersion))
			}
		}
	}
	rat := func(what, s string) *big.Rat {
		r, ok := new(big.Rat).SetString(s)
		if !ok || r.Sign() < 0 {
			errs = append(errs, fmt.Errorf("%s: %q is not an exact amount ≥ 0", what, s))
			return new(big.Rat)
		}
		return r
	}
	type sums struct{ eps, delta *big.Rat }
	pend := map[[2]string]*sums{}
	ids := map[uint64]bool{}
	for _, p := range d.Pending {
		if ids[p.ID] {
			errs = append(errs, fmt.Errorf("reservation %d appears twice", p.ID))
		}
		ids[p.ID] = true
		k := [2]string{p.User, p.Dataset}
		s := pend[k]
		if s == nil {
			s = &sums{new(big.Rat), new(big.Rat)}
			pend[k] = s
		}
		s.eps.Add(s.eps, rat(fmt.Sprintf("reservation %d epsilon", p.ID), p.Epsilon))
		s.delta.Add(s.delta, rat(fmt.Sprintf("reservation %d delta", p.ID), p.Delta))
	}
	seen := map[[2]string]bool{}
	for _, a := range d.Accounts {
		k := [2]string{a.User, a.Dataset}
		name := fmt.Sprintf("account %q/%q", a.User, a.Dataset)
		if seen[k] {
			errs = append(errs, fmt.Errorf("%s appears twice", name))
		}
		seen[k] = true
		se, sd := rat(name+" spent_epsilon", a.SpentEpsilon), rat(name+" spent_delta", a.SpentDelta)
		ce, cd := rat(name+" committed_epsilon", a.CommittedEpsilon), rat(name+" committed_delta", a.CommittedDelta)
		if s := pend[k]; s != nil {
			ce.Add(ce, s.eps)
			cd.Add(cd, s.delta)
		}
		if se.Cmp(ce) != 0 || sd.Cmp(cd) != 0 {
			errs = append(errs, fmt.Errorf("%s: spent is not committed + pending", name))
		}
	}
	for k := range pend {
		if !seen[k] {
			errs = append(errs, fmt.Errorf("pending reservations for missing account %q/%q", k[0], k[1]))
		}
	}
	audits := map[uint64]bool{}
	for _, a := range d.Audit {
		if audits[a.Reservation] {
			errs = append(errs, fmt.Errorf("audit entry %d appears twice", a.Reservation))
		}
		audits[a.Reservation] = true
		rat(fmt.Sprintf("audit entry %d epsilon", a.Reservation), a.Epsilon)
		rat(fmt.Sprintf("audit entry %d delta", a.Reservation), a.Delta)
	}
	keys := map[string]bool{}
	for _, r := range d.Releases {
		if keys[string(r.Key)] || len(r.Key) == 0 || len(r.Data) == 0 {
			errs = append(errs, fmt.Errorf("release %q is empty or appears twice", r.Key))
		}
		keys[string(r.Key)] = true
	}
	return errors.Join(errs...)
}

// Export returns the whole ledger as a dump, read in one transaction
// after making deferred commits durable.
func (l *Ledger) Export() (*Dump, error) {
	if err := l.checkpoint(); err != nil {
		return nil, err
	}
	d := &Dump{Format: DumpFormat, Version: DumpVersion}
	err := l.db.View(func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketAccounts).ForEach(func(k, v []byte) error {
			user, dataset, err := splitAccountKey(k)
			if err != nil {
				return err
			}
			a, err := decodeAccount(v)
			if err != nil {
				return err
			}
			d.Accounts = append(d.Accounts, DumpAccount{User: user, Dataset: dataset,
				SpentEpsilon: a.spent.eps.RatString(), SpentDelta: a.spent.delta.RatString(),
				CommittedEpsilon: a.committed.eps.RatString(), CommittedDelta: a.committed.delta.RatString(),
				Queries: a.queries, LastCharge: a.lastCharge})
			return nil
		})
		if err != nil {
			return err
		}
		err = tx.Bucket(bucketPending).ForEach(func(k, v []byte) error {
			p, err := decodePending(v)
			if err != nil {
				return err
			}
			user, dataset, _ := splitAccountKey(p.accountKey)
			d.Pending = append(d.Pending, DumpPending{ID: idFromKey(k), User: user, Dataset: dataset,
				Epsilon: p.cost.eps.RatString(), Delta: p.cost.delta.RatString(), Time: p.time, Lease: p.lease})
			if p.lease {
				d.Version = DumpLeaseVersion
			}
			return nil
		})
		if err != nil {
			return err
		}
		err = tx.Bucket(bucketReleaseLog).ForEach(func(k, v []byte) error {
			_, key, val, err := decodeStored(v)
			if err != nil {
				return fmt.Errorf("release %x: %w", k, err)
			}
			d.Releases = append(d.Releases, DumpRelease{Key: bytes.Clone(key), Data: bytes.Clone(val)})
			return nil
		})
		if err != nil {
			return err
		}
		ab := tx.Bucket(bucketAudit)
		if ab == nil {
			return nil
		}
		return ab.ForEach(func(k, v []byte) error {
			if len(k) != 8 {
				return fmt.Errorf("malformed audit key %x", k)
			}
			rec, err := decodeAuditRecord(v)
			if err != nil {
				return fmt.Errorf("audit entry %d: %w", idFromKey(k), err)
			}
			user, dataset, err := splitAccountKey(rec.Account)
			if err != nil {
				return err
			}
			d.Audit = append(d.Audit, DumpAudit{Reservation: idFromKey(k), Time: rec.Time, User: user, Dataset: dataset,
				Epsilon: rec.Cost.eps.String(), Delta: rec.Cost.delta.String(), Fingerprint: rec.Fingerprint, Query: rec.Query,
				Release: rec.Release, Replica: rec.Replica, Refunded: rec.Refunded})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("ledger export: %w", err)
	}
	return d, nil
}

// Import writes a dump into an empty ledger, in one durable transaction,
// and refuses a ledger that already holds anything: merging two ledgers'
// accounts is a decision for the DBA, not a side effect.
func (l *Ledger) Import(d *Dump) error {
	if err := d.Check(); err != nil {
		return fmt.Errorf("ledger import: %w", err)
	}
	now := l.now()
	if err := l.checkpoint(); err != nil {
		return fmt.Errorf("ledger import: %w", err)
	}
	// The import writes the bbolt file directly: no charge may be decided
	// meanwhile, and what the state loaded before is stale after it.
	l.state.mu.Lock()
	defer l.state.mu.Unlock()
	err := l.writes.update(func(tx *bolt.Tx) error {
		for _, name := range dataBuckets {
			if k, _ := tx.Bucket(name).Cursor().First(); k != nil {
				return fmt.Errorf("the ledger is not empty (bucket %s has records); import only into a new ledger", name)
			}
		}
		for _, a := range d.Accounts {
			key, err := checkAccount(a.User, a.Dataset)
			if err != nil {
				return err
			}
			acc := account{queries: a.Queries, lastCharge: a.LastCharge}
			acc.spent.eps, _ = parseRat(a.SpentEpsilon) // checked by d.Check
			acc.spent.delta, _ = parseRat(a.SpentDelta)
			acc.committed.eps, _ = parseRat(a.CommittedEpsilon)
			acc.committed.delta, _ = parseRat(a.CommittedDelta)
			if err := l.memo.putAccount(tx, key, acc); err != nil {
				return err
			}
		}
		pb := tx.Bucket(bucketPending)
		var maxID uint64
		for _, p := range d.Pending {
			var c exact
			c.eps, _ = parseRat(p.Epsilon)
			c.delta, _ = parseRat(p.Delta)
			v, err := pending{accountKey: accountKey(p.User, p.Dataset), cost: c, time: p.Time, lease: p.Lease}.encode()
			if err != nil {
				return err
			}
			if err := budgetPut(tx, bucketPending, idKey(p.ID), v); err != nil {
				return err
			}
			maxID = max(maxID, p.ID)
		}
		// New reservation ids continue after the imported ones.
		if err := pb.SetSequence(max(pb.Sequence(), maxID)); err != nil {
			return err
		}
		if k, _ := tx.Bucket(bucketAudit).Cursor().First(); k != nil && len(d.Audit) > 0 {
			return errors.New("the ledger's audit history is not empty; import only into a new ledger")
		}
		for _, a := range d.Audit {
			var c exact
			c.eps, _ = parseRat(a.Epsilon) // checked by d.Check
			c.delta, _ = parseRat(a.Delta)
			rec := auditRecord{Time: a.Time, Account: accountKey(a.User, a.Dataset), Cost: c,
				Fingerprint: a.Fingerprint, Query: a.Query, Release: a.Release, Replica: a.Replica, Refunded: a.Refunded}
			if err := putAudit(tx, a.Reservation, rec); err != nil {
				return err
			}
			maxID = max(maxID, a.Reservation)
		}
		// New reservation ids continue after the imported ones (audit
		// entries are keyed by them too).
		if err := pb.SetSequence(max(pb.Sequence(), maxID)); err != nil {
			return err
		}
		for _, r := range d.Releases {
			// d.Check refused empty and repeated keys.
			// Imported releases are stored now (a dump keeps no release
			// times): the age bound counts from the import.
			n, err := l.putRelease(tx, r.Key, r.Data, now)
			if err != nil {
				return err
			}
			if err := setReleaseBytes(tx, releaseBytes(tx)+n); err != nil {
				return err
			}
		}
		return nil
	})
	clear(l.state.accounts)
	if err == nil {
		err = l.db.View(func(tx *bolt.Tx) error {
			l.state.seq = tx.Bucket(bucketPending).Sequence()
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("ledger import: %w", err)
	}
	return l.checkNoCheckpoint()
}
