package ledger

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// On-disk layout (format version 2). Every bucket is top level:
//
//	meta      format → formatName, version → formatVersion, created → time,
//	          budget_digest → 16 bytes (digest.go)
//	accounts  accountKey(user, dataset) → accountRecord (JSON)
//	pending   8-byte big-endian reservation id → pendingRecord (JSON)
//	releases  cache key → release bytes (opaque to the ledger)
//	audit     8-byte big-endian reservation id → auditRecord (JSON, audit.go);
//	          created by Open in files that predate it
//
// Records are JSON so that a DBA can inspect the file with `bbolt get`; the
// fsync per transaction dominates the cost of encoding them.
var (
	bucketMeta     = []byte("meta")
	bucketAccounts = []byte("accounts")
	bucketPending  = []byte("pending")
	bucketReleases = []byte("releases")

	keyFormat  = []byte("format")
	keyVersion = []byte("version")
	keyCreated = []byte("created") // RFC 3339 time of creation (informational)
)

const (
	formatName = "ddp-proxy budget ledger"
	// formatVersion 2 adds the budget digest (digest.go) to version 1;
	// Open upgrades a version 1 file in place.
	formatVersion  = "2"
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

// accountRecord is the stored state of one (user, dataset).
//
// Invariant (checked by Check): Spent == Committed + Σ cost of the account's
// pending reservations, exactly, and nothing is negative.
type accountRecord struct {
	// Spent is everything charged, pending reservations included, as
	// big.Rat strings.
	SpentEpsilon string `json:"spent_epsilon"`
	SpentDelta   string `json:"spent_delta"`
	// Committed is the part of Spent whose answers were committed.
	CommittedEpsilon string `json:"committed_epsilon"`
	CommittedDelta   string `json:"committed_delta"`
	// Queries counts charged queries (pending included, refunds excluded).
	Queries uint64 `json:"queries"`
	// LastCharge is the time of the latest Reserve that charged.
	LastCharge time.Time `json:"last_charge"`
}

// account is a decoded accountRecord.
type account struct {
	spent, committed exact
	queries          uint64
	lastCharge       time.Time
}

func newAccount() account { return account{spent: zeroExact(), committed: zeroExact()} }

func (a account) encode() ([]byte, error) {
	return json.Marshal(accountRecord{
		SpentEpsilon:     a.spent.eps.String(),
		SpentDelta:       a.spent.delta.String(),
		CommittedEpsilon: a.committed.eps.String(),
		CommittedDelta:   a.committed.delta.String(),
		Queries:          a.queries,
		LastCharge:       a.lastCharge,
	})
}

func decodeAccount(v []byte) (account, error) {
	var rec accountRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return account{}, fmt.Errorf("decode account: %w", err)
	}
	var a account
	var errs [4]error
	a.spent.eps, errs[0] = parseRat(rec.SpentEpsilon)
	a.spent.delta, errs[1] = parseRat(rec.SpentDelta)
	a.committed.eps, errs[2] = parseRat(rec.CommittedEpsilon)
	a.committed.delta, errs[3] = parseRat(rec.CommittedDelta)
	if err := errors.Join(errs[:]...); err != nil {
		return account{}, fmt.Errorf("decode account: %w", err)
	}
	a.queries = rec.Queries
	a.lastCharge = rec.LastCharge
	return a, nil
}

// getAccount reads an account, or a zero one if it does not exist yet.
func getAccount(b *bolt.Bucket, key []byte) (account, error) {
	v := b.Get(key)
	if v == nil {
		return newAccount(), nil
	}
	return decodeAccount(v)
}

func putAccount(tx *bolt.Tx, key []byte, a account) error {
	v, err := a.encode()
	if err != nil {
		return err
	}
	return budgetPut(tx, bucketAccounts, key, v)
}

// pendingRecord is a reservation that was charged but neither committed nor
// refunded yet. Account is the accountKey as bytes (JSON base64), so that
// names that are not valid UTF-8 survive the round trip.
type pendingRecord struct {
	Account []byte    `json:"account"`
	Epsilon string    `json:"epsilon"`
	Delta   string    `json:"delta"`
	Time    time.Time `json:"time"`
	// Replica is the serving process that reserved (absent before the
	// audit history existed).
	Replica string `json:"replica,omitempty"`
}

type pending struct {
	accountKey []byte
	cost       exact
	time       time.Time
	replica    string
}

func (p pending) encode() ([]byte, error) {
	return json.Marshal(pendingRecord{
		Account: p.accountKey,
		Epsilon: p.cost.eps.String(),
		Delta:   p.cost.delta.String(),
		Time:    p.time,
		Replica: p.replica,
	})
}

func decodePending(v []byte) (pending, error) {
	var rec pendingRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return pending{}, fmt.Errorf("decode reservation: %w", err)
	}
	p := pending{accountKey: rec.Account, time: rec.Time, replica: rec.Replica}
	var e1, e2 error
	p.cost.eps, e1 = parseRat(rec.Epsilon)
	p.cost.delta, e2 = parseRat(rec.Delta)
	if err := errors.Join(e1, e2); err != nil {
		return pending{}, fmt.Errorf("decode reservation: %w", err)
	}
	if _, _, err := splitAccountKey(p.accountKey); err != nil {
		return pending{}, fmt.Errorf("decode reservation: %w", err)
	}
	return p, nil
}

func idKey(id uint64) []byte { return binary.BigEndian.AppendUint64(nil, id) }

func idFromKey(k []byte) uint64 { return binary.BigEndian.Uint64(k) }
