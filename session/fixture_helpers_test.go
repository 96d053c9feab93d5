package session

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	_ "github.com/ncruces/go-sqlite3/driver"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/postgres"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlite"
	"github.com/ddp-proxy/ddp-proxy/internal/pgtest"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// sqliteBackend creates the SQLite database file path, runs stmts in it
// and opens the backend over it. The caller hands it to seededProxy,
// which closes it when the test ends.
func sqliteBackend(t testing.TB, path string, stmts ...string) *sqlite.Backend {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			db.Close()
			t.Fatalf("%s: %v", s, err)
		}
	}
	db.Close()
	be, err := sqlite.Open(context.Background(), path, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return be
}

// seededProxy loads the policy text (its users' password_env is
// DDP_TEST_SESSION_PASSWORD, set to "pw"; relative paths are read against
// dir), opens its ledger and builds a Proxy over be with a release engine
// whose noise is seeded (seed 1), so that runs repeat. cfg gives the
// Config's other fields. The ledger and be close when the test ends.
func seededProxy(t testing.TB, dir, text string, be Backend, cfg Config) (*Proxy, *policies.Policy, *ledger.Ledger) {
	t.Helper()
	t.Setenv("DDP_TEST_SESSION_PASSWORD", "pw")
	pol, err := policies.LoadBytes(filepath.Join(dir, "p.yaml"), []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	led, err := ledger.Open(pol.Ledger.Path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { led.Close(); be.Close() })
	cfg.Policy, cfg.Backend, cfg.Ledger = pol, be, led
	cfg.Engine = release.New(be, led, release.Options{Source: noise.SeededSource(1)})
	return New(cfg), pol, led
}

// postgresBackend opens the PostgreSQL backend on DDP_TEST_POSTGRES_DSN:
// without it t skips saying what, with it and no server t fails (Open
// pings). The caller closes it, or hands it to seededProxy, which does.
func postgresBackend(t testing.TB, what string) (string, *postgres.Backend) {
	t.Helper()
	dsn := pgtest.DSN(t, what)
	be, err := postgres.Open(context.Background(), dsn, backends.Options{})
	if err != nil {
		t.Fatalf("DDP_TEST_POSTGRES_DSN is set but the backend does not open: %v", err)
	}
	return dsn, be
}
