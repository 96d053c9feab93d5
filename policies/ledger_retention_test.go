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
