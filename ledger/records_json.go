package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The JSON records ddp-proxy wrote before the binary codec (codec.go).
// They are only read: a file written by an older ddp-proxy opens and
// serves, and each record moves to the binary form when it next changes.
// Rationals are big.Rat strings ("a/b" or "a").

// isJSONRecord tells the old form from the binary one by its first byte.
func isJSONRecord(v []byte) bool { return len(v) > 0 && v[0] == '{' }

type accountJSON struct {
	SpentEpsilon     string    `json:"spent_epsilon"`
	SpentDelta       string    `json:"spent_delta"`
	CommittedEpsilon string    `json:"committed_epsilon"`
	CommittedDelta   string    `json:"committed_delta"`
	Queries          uint64    `json:"queries"`
	LastCharge       time.Time `json:"last_charge"`
}

func decodeAccountJSON(v []byte) (account, error) {
	var rec accountJSON
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

// pendingJSON's Account is the accountKey as bytes (JSON base64).
type pendingJSON struct {
	Account []byte    `json:"account"`
	Epsilon string    `json:"epsilon"`
	Delta   string    `json:"delta"`
	Time    time.Time `json:"time"`
	Replica string    `json:"replica,omitempty"`
}

func decodePendingJSON(v []byte) (pending, error) {
	var rec pendingJSON
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
	return p, nil
}

// auditJSON is the old form of an audit entry.
type auditJSON struct {
	Time        time.Time `json:"time"`
	Account     []byte    `json:"account"`
	Epsilon     string    `json:"epsilon"`
	Delta       string    `json:"delta"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	Query       string    `json:"query,omitempty"`
	Release     string    `json:"release,omitempty"`
	Replica     string    `json:"replica,omitempty"`
	Refunded    time.Time `json:"refunded,omitzero"`
}

func decodeAuditJSON(v []byte) (auditRecord, error) {
	var rec auditJSON
	if err := json.Unmarshal(v, &rec); err != nil {
		return auditRecord{}, err
	}
	eps, e1 := parseRat(rec.Epsilon)
	delta, e2 := parseRat(rec.Delta)
	if e1 != nil || e2 != nil {
		return auditRecord{}, errors.New("malformed cost")
	}
	return auditRecord{Time: rec.Time, Account: rec.Account, Cost: exact{eps, delta},
		Fingerprint: rec.Fingerprint, Query: rec.Query, Release: rec.Release, Replica: rec.Replica,
		Refunded: rec.Refunded}, nil
}
