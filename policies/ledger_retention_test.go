package policies

import (
	"strings"
	"testing"
)

// TestRetentionNeedsBBolt: the PostgreSQL ledger evicts nothing, so a
// retention bound on it is refused rather than ignored (the DBA would
// believe releases are deleted); on bbolt it loads.
func TestRetentionNeedsBBolt(t *testing.T) {
	const base = "version: 1\nbackend: {driver: postgres, dsn: 'postgres://h/db'}\ndatasets: {d: {tables: {t: {unit: id}}}}\n"
	ps := problemsOf(t, base+"ledger: {driver: postgres, dsn: 'postgres://h/ledger', retention: {max_age_hours: 24}}\n")
	if !strings.Contains(ps.Error(), "ledger.retention") {
		t.Errorf("problems %v, want one about ledger.retention", ps)
	}
	p := mustLoad(t, "p.yaml", base+"ledger: {path: l.db, retention: {max_age_hours: 24}}\n")
	if p.Ledger.Retention.MaxAgeHours != 24 {
		t.Errorf("bbolt retention %+v", p.Ledger.Retention)
	}
}

// TestLedgerLease: ledger.lease defaults to DefaultLedgerLease on bbolt,
// an explicit 0 turns it off, and it is refused out of [0, 1] or on the
// PostgreSQL ledger (which has no leases: it would be ignored).
func TestLedgerLease(t *testing.T) {
	const base = "version: 1\nbackend: {driver: postgres, dsn: 'postgres://h/db'}\ndatasets: {d: {tables: {t: {unit: id}}}}\n"
	for src, want := range map[string]float64{
		"ledger: {path: l.db}\n":              DefaultLedgerLease,
		"ledger: {path: l.db, lease: 0}\n":    0,
		"ledger: {path: l.db, lease: 0.25}\n": 0.25,
	} {
		if p := mustLoad(t, "p.yaml", base+src); p.Ledger.Lease != want {
			t.Errorf("%s: lease %v, want %v", src, p.Ledger.Lease, want)
		}
	}
	if p := mustLoad(t, "p.yaml", base+"ledger: {driver: postgres, dsn: 'postgres://h/ledger'}\n"); p.Ledger.Lease != 0 {
		t.Errorf("postgres ledger: lease %v, want 0", p.Ledger.Lease)
	}
	for _, src := range []string{
		"ledger: {path: l.db, lease: -0.1}\n",
		"ledger: {path: l.db, lease: 1.5}\n",
		"ledger: {path: l.db, lease: .nan}\n",
		"ledger: {driver: postgres, dsn: 'postgres://h/ledger', lease: 0.01}\n",
	} {
		if ps := problemsOf(t, base+src); !strings.Contains(ps.Error(), "ledger.lease") {
			t.Errorf("%s: problems %v, want one about ledger.lease", src, ps)
		}
	}
}
