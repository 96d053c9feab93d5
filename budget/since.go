package budget

import (
	"fmt"
	"time"
)

// ParseSince reads the start of an audit window as an operator writes it,
// for every reader of the audit history (ddp-proxy audit --since, the
// admin listener's /ledger/audit?since=): an RFC 3339 time
// (2026-11-27T10:00:00Z), a date (2026-11-27, midnight UTC) or a
// non-negative duration back from now (24h). The error lists the forms.
func ParseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q: want an RFC 3339 time (2026-11-27T10:00:00Z), a date (2026-11-27, UTC) or a duration back from now (24h)", s)
}
