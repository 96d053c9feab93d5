package policies

import (
	"strings"
	"testing"
)

// TestPreparedStatements: backend.prepared_statements defaults to
// DefaultPreparedStatements for the postgres driver and stays 0 for the
// others, an explicit 0 turns it off, and it is refused — not ignored —
// out of range or for a driver that has no statement cache.
func TestPreparedStatements(t *testing.T) {
	const tail = "datasets: {d: {tables: {t: {unit: id}}}}\n"
	pg := func(extra string) string {
		return "version: 1\nbackend: {driver: postgres, dsn: 'postgres://h/db'" + extra + "}\n" + tail
	}
	if p := mustLoad(t, "p.yaml", pg("")); p.Backend.PreparedStatements != DefaultPreparedStatements {
		t.Errorf("default prepared_statements = %d, want %d", p.Backend.PreparedStatements, DefaultPreparedStatements)
	}
	if p := mustLoad(t, "p.yaml", pg(", prepared_statements: 0")); p.Backend.PreparedStatements != 0 {
		t.Errorf("prepared_statements: 0 loaded as %d, want 0 (off)", p.Backend.PreparedStatements)
	}
	for _, other := range []string{"backend: {driver: mysql, dsn: 'root@tcp(h)/db'}", "backend: {driver: sqlite, dsn: 'x.db'}"} {
		if p := mustLoad(t, "p.yaml", "version: 1\n"+other+"\n"+tail); p.Backend.PreparedStatements != 0 {
			t.Errorf("%s: prepared_statements = %d, want 0 (postgres only)", other, p.Backend.PreparedStatements)
		}
	}
	if p := mustLoad(t, "p.yaml", pg(", prepared_statements: 256")); p.Backend.PreparedStatements != 256 {
		t.Errorf("prepared_statements = %d, want 256", p.Backend.PreparedStatements)
	}
	for _, src := range []string{
		pg(", prepared_statements: -1"),
		pg(", prepared_statements: 10001"),
		"version: 1\nbackend: {driver: mysql, dsn: 'root@tcp(h)/db', prepared_statements: 8}\n" + tail,
		"version: 1\nbackend: {driver: sqlite, dsn: 'x.db', prepared_statements: 8}\n" + tail,
	} {
		if ps := problemsOf(t, src); !strings.Contains(ps.Error(), "backend.prepared_statements") {
			t.Errorf("%s: problems %v, want one about backend.prepared_statements", src, ps)
		}
	}
}
