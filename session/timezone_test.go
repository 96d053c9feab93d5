package session

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

const zonePolicy = `
version: 1
backend: {driver: sqlite, dsn: %q}
ledger: {path: %q}
users:
  - name: alice
    password_env: DDP_TEST_SESSION_PASSWORD
    budgets: {shop: {epsilon: 1000}}
    max_epsilon: 1
datasets:
  shop:
    tables:
      orders:
        unit: id
        columns:
          placed: {type: timestamp, bounds: ['2024-01-01 00:00:00', '2024-12-31 23:59:59']}
          paid_at: {type: timestamptz, bounds: ['2024-01-01 00:00:00Z', '2024-12-31 23:59:59Z']}
          n: {type: integer, bounds: [0, 10]}
`

// TestZonedValuesInAnotherTimeZone: a session whose time zone is not UTC
// is refused (0A000, before any charge) what PostgreSQL and MySQL would
// compute on that zone's clock — a timestamptz column (its day, its hour,
// its comparison with a zoneless literal, its text), a cast to
// timestamptz, AT TIME ZONE — and answered what does not depend on the
// zone (a timestamp without time zone, a count). Back in UTC all of it is
// answered. The proxy used to answer them in UTC whatever the zone said.
func TestZonedValuesInAnotherTimeZone(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.db")
	be := sqliteBackend(t, path, "CREATE TABLE orders (id INTEGER, placed TEXT, paid_at TEXT, n INTEGER)",
		"INSERT INTO orders VALUES (1, '2024-03-01 23:30:00', '2024-03-01 23:30:00', 1)")
	p, pol, _ := seededProxy(t, dir, fmt.Sprintf(zonePolicy, path, filepath.Join(dir, "ledger.db")), be, Config{})
	ctx := context.Background()

	zoned := []string{
		"SELECT date_trunc('day', paid_at) AS d, COUNT(*) FROM orders GROUP BY 1",
		"SELECT COUNT(*) FROM orders WHERE paid_at >= '2024-03-02'",
		"SELECT CAST(paid_at AS date), COUNT(*) FROM orders GROUP BY 1",
		"SELECT extract(hour from paid_at) AS h, COUNT(*) FROM orders GROUP BY 1",
		"SELECT COUNT(*) FROM orders WHERE placed::timestamptz >= '2024-03-02'",
		"SELECT COUNT(*) FROM orders WHERE placed >= TIMESTAMPTZ '2024-03-02 00:00:00+00'",
		"SELECT date_trunc('day', placed AT TIME ZONE 'UTC') AS d, COUNT(*) FROM orders GROUP BY 1",
		"SELECT MAX(paid_at) FROM orders",
		"SELECT COUNT(*) FROM orders o WHERE o.PAID_AT < '2024-06-01'",
	}
	free := []string{
		"SELECT COUNT(*) FROM orders",
		"SELECT date_trunc('day', placed) AS d, COUNT(*) FROM orders GROUP BY 1",
		"SELECT COUNT(*) FROM orders WHERE placed >= '2024-03-02'",
		"SELECT SUM(n) FROM orders",
	}
	for _, zone := range []struct {
		dialect  parser.Dialect
		set, utc string // SET statements; MySQL's reach the core as SetTimeZone (mySession)
		names    string // what the refusal must name
	}{
		{parser.Postgres, "SET TIME ZONE 'Europe/Paris'", "SET TIME ZONE 'UTC'", "Europe/Paris"},
		{parser.MySQL, "+02:00", "+00:00", "+02:00"},
	} {
		s := p.Open(pol.User("alice"), zone.dialect, nil)
		run := func(sql string) error {
			if zone.dialect == parser.MySQL {
				sql = strings.NewReplacer("date_trunc('day', paid_at)", "DATE(paid_at)", "date_trunc('day', placed AT TIME ZONE 'UTC')", "DATE(CONVERT_TZ(placed, '+00:00', 'UTC'))",
					"date_trunc('day', placed)", "DATE(placed)", "placed::timestamptz", "CAST(placed AS DATETIME)",
					"TIMESTAMPTZ '2024-03-02 00:00:00+00'", "TIMESTAMP '2024-03-02 00:00:00'").Replace(sql)
			}
			var c Collector
			return s.Query(ctx, sql, &c)
		}
		spent := func() ir.Value {
			var c Collector
			if err := s.Query(ctx, "SELECT epsilon_spent FROM ddp.budget", &c); err != nil {
				t.Fatal(err)
			}
			return c.Results[0].Rows[0][0]
		}
		setZone := func(z string) {
			if zone.dialect == parser.MySQL {
				s.SetTimeZone(z)
			} else if err := run(z); err != nil {
				t.Fatal(err)
			}
		}
		setZone(zone.set)
		for _, q := range zoned {
			before := spent()
			err := run(q)
			if zone.dialect == parser.MySQL && strings.Contains(q, "placed") {
				// MySQL has no timestamptz cast, literal or AT TIME
				// ZONE: the rewritten statement reads a DATETIME
				// (CONVERT_TZ(t, '+00:00', 'UTC') is t), answered.
				if err != nil {
					t.Errorf("%v %s: %v", zone.dialect, q, err)
				}
				continue
			}
			if !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) || !strings.Contains(err.Error(), zone.names) {
				t.Errorf("%v in %s, %s: %v, want 0A000 naming the zone", zone.dialect, zone.names, q, err)
			}
			if after := spent(); after != before {
				t.Errorf("%v, %s: ε spent %v after the refusal, was %v", zone.dialect, q, after, before)
			}
		}
		for _, q := range free {
			if err := run(q); err != nil {
				t.Errorf("%v in %s, %s: %v, want it answered (no time zone in it)", zone.dialect, zone.names, q, err)
			}
		}
		setZone(zone.utc)
		for _, q := range append(zoned, free...) {
			if zone.dialect == parser.Postgres && strings.Contains(q, "placed::timestamptz") {
				continue // refused in any zone: a cast the proxy does not compute
			}
			if err := run(q); err != nil {
				t.Errorf("%v back in UTC, %s: %v", zone.dialect, q, err)
			}
		}
	}
}
