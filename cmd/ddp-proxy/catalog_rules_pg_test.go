package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ddp-proxy/ddp-proxy/internal/catalogtest"
	"github.com/ddp-proxy/ddp-proxy/internal/pgtest"
)

// catalogRulesPolicy declares the two tables of schema %s private.
const catalogRulesPolicy = pgAnalystPolicyHead + `    budgets: {stats: {epsilon: 1}}
datasets:
  stats:
    tables:
      %s:
        schema: %s
        unit: id
        columns:
          v: {type: integer, bounds: [0, 10000]}
      %s:
        schema: %s
        unit: id
        columns:
          v: {type: integer, bounds: [0, 10000]}
`

// pgOutcome runs q on conn and returns its rows as text, or its SQLSTATE.
func pgOutcome(t *testing.T, conn *pgx.Conn, q string) (rows, sqlstate string) {
	t.Helper()
	rs, err := conn.Query(context.Background(), q)
	if err == nil {
		var out []string
		for rs.Next() {
			vals, err := rs.Values()
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			out = append(out, fmt.Sprint(vals...))
		}
		rs.Close()
		err = rs.Err()
		rows = strings.Join(out, "\n")
	}
	if err != nil {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			t.Fatalf("%s: %v", q, err)
		}
		return "", pe.Code
	}
	return rows, ""
}

// catalogRulesPostgres is TestCatalogRules's PostgreSQL half.
func catalogRulesPostgres(t *testing.T) {
	dsn := pgtest.DSN(t, "the PostgreSQL catalog rules")
	ctx := context.Background()
	raw := pgtest.Connect(t, dsn)
	schema := pgtest.CreateSchema(t, raw, dsn, "ddp_rules_")
	names := [2]string{"rules_a", "rules_b"}
	var db string
	if err := raw.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	fx := catalogtest.Fixture{Database: schema, Tables: names}

	type outcome struct{ rows, state string }
	var proxied, direct [2]map[string]outcome
	for run := range 2 {
		sizes := [2]int{catalogtest.LargeRows, catalogtest.SmallRows}
		if run == 1 {
			sizes[0], sizes[1] = sizes[1], sizes[0]
		}
		for i, n := range names {
			q := schema + "." + n
			pgtest.Exec(t, raw,
				"DROP TABLE IF EXISTS "+q,
				"CREATE TABLE "+q+" (id bigserial PRIMARY KEY, v bigint)",
				fmt.Sprintf("INSERT INTO %s (v) SELECT g FROM generate_series(1, %d) g", q, sizes[i]),
				"ANALYZE "+q,
			)
		}
		dir := t.TempDir()
		pol := loadPolicyText(t, dir, fmt.Sprintf(catalogRulesPolicy, dsn, filepath.Join(dir, "ledger.db"), names[0], schema, names[1], schema))
		p, stop := servePolicy(t, pol)
		proxy := connectPgxURL(t, fmt.Sprintf("postgres://analyst:demo@%s/%s?sslmode=disable", p.pgAddr, db), pgx.QueryExecModeSimpleProtocol)
		proxied[run], direct[run] = map[string]outcome{}, map[string]outcome{}
		for _, c := range catalogtest.Cases {
			if c.Postgres == "" {
				continue
			}
			q := fx.Expand(c.Postgres)
			rows, state := pgOutcome(t, proxy, q)
			proxied[run][c.Name] = outcome{rows, state}
			if c.PostgresRanks {
				rows, state := pgOutcome(t, raw, q)
				direct[run][c.Name] = outcome{rows, state}
			}
		}
		proxy.Close(ctx)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	}

	wantState := map[catalogtest.Want]string{catalogtest.Refused: "42501", catalogtest.Forwarded: "", catalogtest.NotForwarded: "0A000"}
	for _, c := range catalogtest.Cases {
		p0, ok := proxied[0][c.Name]
		if !ok {
			continue
		}
		p1 := proxied[1][c.Name]
		if want := wantState[c.PostgresWant]; p0.state != want || p1.state != want {
			t.Errorf("%s: SQLSTATE %q, %q through the proxy, want %q", c.Name, p0.state, p1.state, want)
		}
		if p0 != p1 {
			t.Errorf("%s: the proxy's answer depends on the tables' sizes:\n%s\n--- after swapping them:\n%s", c.Name, p0.rows, p1.rows)
		}
		if !c.PostgresRanks {
			continue
		}
		d0, d1 := direct[0][c.Name], direct[1][c.Name]
		if d0.state != "" || d1.state != "" || d0.rows == d1.rows {
			t.Errorf("%s: sent straight to PostgreSQL the attack does not reveal the sizes (SQLSTATE %q, %q; %q, %q): the case proves nothing",
				c.Name, d0.state, d1.state, d0.rows, d1.rows)
		}
	}
}
