package ledger

import (
	"fmt"
	"math/big"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Budget leases: one fdatasync for many charges.
//
// Without leases every charge waits for an fdatasync of the log before its
// query runs (group commit shares it among concurrent charges, but one
// client pays it on every fresh answer). With Options.Lease, a charge to
// (user, dataset) first takes a lease: a pending reservation of the
// charge plus Lease × the dataset's limit (never past the limit), whose
// log record is fdatasynced like any charge. The charges that fit in what
// is left of the lease are then logged as carves — the charge's own
// pending reservation and audit entry, its cost moved out of the lease's —
// and written to the log without an fdatasync before the query runs. The
// spent total never moves for a carve: the lease already charged it.
//
// What a crash can do:
//   - a killed process: every carve was written to the kernel before its
//     answer could leave, so nothing is lost; the lease's unused rest
//     stays charged, as any reservation a crash leaves behind.
//   - a power loss: it may cut the log's unsynced tail (always a suffix:
//     see wal). A carve cut off leaves its cost in its lease, which is
//     durable, so the budget still holds every answer that left; lost are
//     the carve's audit entry and release (a repeat is charged and drawn
//     afresh).
//
// Either way an unclean stop charges at most Lease × the limit per
// (user, dataset) that was not used — like PostgreSQL's sequence cache,
// which logs values ahead and skips them after a crash. Close returns the
// unused rest of every lease (a refund, fdatasynced). Open settles what a
// stopped process left (settleLeases): the rest becomes a committed
// charge with an audit entry of its own, so the audit history still adds
// up to what was spent.
//
// The leases held are in memory (state.leases); their pending records
// are rewritten with their remaining cost at checkpoints.

// liveLease is a lease this process holds: its reservation id and what is
// left of it.
type liveLease struct {
	id   uint64
	left exact
}

// fits says whether cost c fits in what is left of the lease.
func (ls *liveLease) fits(c exact) bool {
	return ls != nil && c.eps.Cmp(ls.left.eps) <= 0 && c.delta.Cmp(ls.left.delta) <= 0
}

// leaseSize is the lease taken for a charge of c when used of limit lim
// is spent (the lease's own rest excluded) and newUsed = used + c fits:
// c + min(frac × lim, lim − newUsed) in ε and δ.
func leaseSize(frac *big.Rat, c, newUsed, lim exact) exact {
	extra := func(lim, used *big.Rat) *big.Rat {
		x := new(big.Rat).Mul(frac, lim)
		room := new(big.Rat).Sub(lim, used)
		if room.Cmp(x) < 0 {
			x = room
		}
		if x.Sign() < 0 {
			x.SetInt64(0)
		}
		return x
	}
	return c.add(exact{extra(lim.eps, newUsed.eps), extra(lim.delta, newUsed.delta)})
}

// used is what account a has spent on charges, without the unused rest of
// the lease ls held on it (nil: none). state.mu held.
func used(a *account, ls *liveLease) exact {
	if ls == nil {
		return a.spent
	}
	return a.spent.sub(ls.left)
}

// takeLease logs the return of the account's old lease (if any) and a
// new lease of size, and records both in memory (state.mu held). The
// lease record asks for an fdatasync: every carve of it is written after
// it, so no carve's answer leaves before the lease is durable.
func (l *Ledger) takeLease(key []byte, a *account, size exact, now time.Time) (*liveLease, error) {
	st := &l.state
	if old := st.leases[string(key)]; old != nil {
		if err := l.endLease(key, a, old, now); err != nil {
			return nil, err
		}
	}
	dec := &pending{accountKey: key, cost: size, time: now, replica: l.replica, lease: true}
	pend, err := dec.encode()
	if err != nil {
		return nil, err
	}
	id := st.seq + 1
	if _, err := l.wal.append(&logRecord{kind: logReserve, id: id, time: now, pending: pend, decoded: dec}, syncNow); err != nil {
		return nil, err
	}
	st.seq = id
	a.spent = a.spent.add(size)
	ls := &liveLease{id: id, left: size}
	st.leases[string(key)] = ls
	return ls, nil
}

// endLease logs the refund of what is left of lease ls and forgets it
// (state.mu held). The refund needs no fdatasync of its own: if a power
// loss cuts it off, the rest stays charged.
func (l *Ledger) endLease(key []byte, a *account, ls *liveLease, now time.Time) error {
	if _, err := l.wal.append(&logRecord{kind: logRefund, id: ls.id, time: now}, written); err != nil {
		return err
	}
	a.spent = a.spent.sub(ls.left)
	delete(l.state.leases, string(key))
	return nil
}

// returnLeases ends every lease this process holds and stops taking new
// ones (Close): the refunds are fdatasynced, so a clean stop charges only
// what was used.
func (l *Ledger) returnLeases() error {
	st := &l.state
	st.mu.Lock()
	st.noLeases = true
	if len(st.leases) == 0 {
		st.mu.Unlock()
		return nil
	}
	var err error
	for key, ls := range st.leases {
		var a *account
		if a, err = l.loadAccount([]byte(key)); err == nil {
			err = l.endLease([]byte(key), a, ls, l.now())
		}
		if err != nil {
			break
		}
	}
	st.mu.Unlock()
	if err != nil {
		return fmt.Errorf("ledger: return the budget leases: %w", err)
	}
	return l.wal.sync()
}

// LeaseAuditQuery begins the query text of the audit entry that Open
// writes for the unused rest of a lease left by an unclean stop.
const LeaseAuditQuery = "(budget lease not returned"

// settleLeases turns the leases an earlier process left pending (it
// stopped without Close: every lease in the file is one, the file being
// locked to this process) into committed charges of their unused rest,
// each with an audit entry that says so. Nothing changes in what is
// spent: it only stops being pending, so that the audit history adds up
// to the spent totals. Open calls it once the log is replayed, so the
// file holds every change.
func (l *Ledger) settleLeases() error {
	var settled []any
	err := l.writes.update(func(tx *bolt.Tx) error {
		settled = settled[:0]
		type left struct {
			id uint64
			p  pending
		}
		var leases []left
		err := tx.Bucket(bucketPending).ForEach(func(k, v []byte) error {
			p, err := decodePending(v)
			if err == nil && p.lease && len(k) == 8 {
				leases = append(leases, left{idFromKey(k), p})
			}
			return err
		})
		if err != nil {
			return err
		}
		accounts := tx.Bucket(bucketAccounts)
		for _, ls := range leases {
			a, err := l.memo.getAccount(accounts, ls.p.accountKey)
			if err != nil {
				return err
			}
			a.committed = a.committed.add(ls.p.cost)
			if err := l.memo.putAccount(tx, ls.p.accountKey, a); err != nil {
				return err
			}
			if err := budgetDelete(tx, bucketPending, idKey(ls.id)); err != nil {
				return err
			}
			rec := auditRecord{Time: ls.p.time, Account: ls.p.accountKey, Cost: ls.p.cost, Replica: ls.p.replica,
				Query: fmt.Sprintf("%s: replica %s stopped without returning it)", LeaseAuditQuery, ls.p.replica)}
			if err := putAudit(tx, ls.id, rec); err != nil {
				return err
			}
			user, dataset, _ := splitAccountKey(ls.p.accountKey)
			settled = append(settled, fmt.Sprintf("%s/%s ε %s δ %s (replica %s)", user, dataset,
				fmtRat(ls.p.cost.eps), fmtRat(ls.p.cost.delta), ls.p.replica))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("settle budget leases: %w", err)
	}
	if len(settled) > 0 {
		l.log.Warn("budget leases left by an unclean stop stay charged (their unused rest is in the audit history)",
			"count", len(settled), "leases", settled)
	}
	return nil
}

// liveLeases returns the reservation ids of the leases this process
// holds (Pending leaves them out: they are not left behind).
func (l *Ledger) liveLeases() map[uint64]bool {
	st := &l.state
	st.mu.Lock()
	defer st.mu.Unlock()
	ids := make(map[uint64]bool, len(st.leases))
	for _, ls := range st.leases {
		ids[ls.id] = true
	}
	return ids
}
