package ledger

import (
	"encoding/binary"
	"fmt"
	"time"
)

// On-disk layout (format version 2). Every bucket is top level:
//
//	meta      format → formatName, version → formatVersion, created → time,
//	          budget_digest → 16 bytes (digest.go)
//	accounts  accountKey(user, dataset) → account record (codec.go)
//	pending   8-byte big-endian reservation id → pending record (codec.go)
//	releases  cache key → release bytes (opaque to the ledger); since
//	          version 7 release_log instead (retention.go)
//	audit     8-byte big-endian reservation id → audit record (codec.go);
//	          created by Open in files that predate it
//
// Records were JSON up to ddp-proxy's binary record codec (codec.go); both
// forms are read, and `ddp-proxy ledger export` shows every record.
var (
	bucketMeta     = []byte("meta")
	bucketAccounts = []byte("accounts")
	bucketPending  = []byte("pending")
	bucketReleases = []byte("releases") // format version 6 and before

	keyFormat  = []byte("format")
	keyVersion = []byte("version")
	keyCreated = []byte("created") // RFC 3339 time of creation (informational)
)

const (
	formatName = "ddp-proxy budget ledger"
	// formatVersion 2 adds the budget digest (digest.go) to version 1;
	// version 3 writes binary records (codec.go) where 2 wrote JSON, so
	// that an older ddp-proxy refuses the file by its version instead of
	// calling it damaged. Open upgrades a version 1 or 2 file in place
	// (its JSON records are still read, and rewritten when they change).
	// Version 4 adds the change log (wal.go): a version 3 binary would
	// ignore the log and lose the changes in it, so it must refuse the file.
	// Version 5 splits the log into two segments written in turn (wal.go):
	// a version 4 binary would replay one of them and lose the other's
	// changes. A version 4 file is a version 5 file whose second segment
	// is missing: Open only marks it.
	// Version 6 adds budget leases (lease.go), whose log records and
	// pending records a version 5 binary would misread, and keeps one
	// release index where version 5 kept two (retention.go).
	// Version 7 keeps the releases in one log in the order they were
	// stored, indexed in memory (retention.go), where version 6 keyed
	// them by cache key: a version 6 binary would find no releases.
	formatVersion  = "7"
	formatVersion6 = "6"
	formatVersion5 = "5"
	formatVersion4 = "4"
	formatVersion3 = "3"
	formatVersion2 = "2"
	formatVersion1 = "1"
)

// accountKey encodes (user, dataset) so that no two pairs collide, whatever
// bytes the names contain: uvarint(len(user)) ‖ user ‖ dataset. The length
// fixes where user ends, so the split is unique.
func accountKey(user, dataset string) []byte {
	k := make([]byte, 0, binary.MaxVarintLen64+len(user)+len(dataset))
	k = binary.AppendUvarint(k, uint64(len(user)))
	k = append(k, user...)
	return append(k, dataset...)
}

// splitAccountKey inverts accountKey.
func splitAccountKey(k []byte) (user, dataset string, err error) {
	n, w := binary.Uvarint(k)
	if w <= 0 || n > uint64(len(k)-w) {
		return "", "", fmt.Errorf("malformed account key %x", k)
	}
	rest := k[w:]
	return string(rest[:n]), string(rest[n:]), nil
}

// account is the stored state of one (user, dataset).
//
// Invariant (checked by Check): spent == committed + Σ cost of the
// account's pending reservations, exactly, and nothing is negative.
type account struct {
	// spent is everything charged, pending reservations included;
	// committed is the part of it whose answers were committed. queries
	// counts charged queries (pending included, refunds excluded);
	// lastCharge is the time of the latest Reserve that charged.
	spent, committed exact
	queries          uint64
	lastCharge       time.Time
}

func newAccount() account { return account{spent: zeroExact(), committed: zeroExact()} }

func (a account) encode() ([]byte, error) {
	e := newEnc(64)
	e.rat(a.spent.eps)
	e.rat(a.spent.delta)
	e.rat(a.committed.eps)
	e.rat(a.committed.delta)
	e.uvarint(a.queries)
	if err := e.time(a.lastCharge); err != nil {
		return nil, fmt.Errorf("encode account: %w", err)
	}
	return e.b, nil
}

func decodeAccount(v []byte) (account, error) {
	if isJSONRecord(v) {
		return decodeAccountJSON(v)
	}
	d := newDec(v)
	a := account{spent: exact{d.rat(), d.rat()}, committed: exact{d.rat(), d.rat()}}
	a.queries = d.uvarint()
	a.lastCharge = d.time()
	if err := d.end(); err != nil {
		return account{}, fmt.Errorf("decode account: %w", err)
	}
	return a, nil
}

// pending is a reservation that was charged but neither committed nor
// refunded yet. replica is the serving process that reserved (empty in
// records from before the audit history). A lease (lease.go) is a
// pending reservation too: budget a serving process holds for charges
// it logs without an fdatasync; its cost is what is left of it.
type pending struct {
	accountKey []byte
	cost       exact
	time       time.Time
	replica    string
	lease      bool
	raw        []byte // the record as stored (set when it is known)
}

func (p pending) encode() ([]byte, error) {
	e := newEnc(48 + len(p.accountKey) + len(p.replica))
	e.bytes(p.accountKey)
	e.rat(p.cost.eps)
	e.rat(p.cost.delta)
	if err := e.time(p.time); err != nil {
		return nil, fmt.Errorf("encode reservation: %w", err)
	}
	e.string(p.replica)
	if p.lease {
		// Only leases carry the byte: other records read as before.
		e.b = append(e.b, pendingLease)
	}
	return e.b, nil
}

// pendingLease ends the record of a lease.
const pendingLease = 1

func decodePending(v []byte) (pending, error) {
	var p pending
	if isJSONRecord(v) {
		var err error
		if p, err = decodePendingJSON(v); err != nil {
			return pending{}, err
		}
	} else {
		d := newDec(v)
		p.accountKey = d.bytes()
		p.cost = exact{d.rat(), d.rat()}
		p.time = d.time()
		p.replica = d.string()
		if len(d.b) == 1 && d.b[0] == pendingLease {
			p.lease, d.b = true, nil
		}
		if err := d.end(); err != nil {
			return pending{}, fmt.Errorf("decode reservation: %w", err)
		}
	}
	if _, _, err := splitAccountKey(p.accountKey); err != nil {
		return pending{}, fmt.Errorf("decode reservation: %w", err)
	}
	return p, nil
}

func idKey(id uint64) []byte { return binary.BigEndian.AppendUint64(nil, id) }

func idFromKey(k []byte) uint64 { return binary.BigEndian.Uint64(k) }
