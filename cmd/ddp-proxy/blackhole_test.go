package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/internal/blackhole"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestSilentBackend: the network between the proxy and its backend goes
// silent (a frozen forwarder: connections stay open, no byte flows), for
// PostgreSQL and for MariaDB.
//
//   - Mid-query: the private query gets 57014 (MySQL 3024) within the
//     client deadline (statement timeout + margin) on both front ends,
//     and stays charged: it had reached the backend.
//   - Before a query: 08006 (MySQL 2013) within the deadline, refunded:
//     nothing was sent.
//   - Meanwhile other connections — open ones and new ones — get their
//     local statements (SHOW, SET, the budget view) answered at once.
//   - Once the network is back, the proxy answers private queries again.
func TestSilentBackend(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		dsn := os.Getenv("DDP_TEST_POSTGRES_DSN")
		if dsn == "" {
			t.Skip("DDP_TEST_POSTGRES_DSN is not set: skipping the silent-backend test")
		}
		ctx := context.Background()
		admin, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatalf("DDP_TEST_POSTGRES_DSN is set but unreachable: %v", err)
		}
		defer admin.Close(ctx)
		table := fmt.Sprintf("ddp_blackhole_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
		// A view that sleeps: long enough to freeze the network
		// mid-query, shorter than the 1 s statement timeout.
		for _, q := range []string{
			`CREATE TABLE ` + table + `_t (id int PRIMARY KEY, age int)`,
			`INSERT INTO ` + table + `_t SELECT i, i % 90 FROM generate_series(1, 500) i`,
			`CREATE VIEW ` + table + ` AS SELECT t.id, t.age FROM ` + table + `_t t, (SELECT pg_sleep(0.7)) s`,
		} {
			if _, err := admin.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() {
			admin.Exec(context.Background(), "DROP VIEW IF EXISTS "+table)
			admin.Exec(context.Background(), "DROP TABLE IF EXISTS "+table+"_t")
		})
		u, err := url.Parse(dsn)
		if err != nil || u.Host == "" {
			t.Fatalf("DDP_TEST_POSTGRES_DSN must be a postgres:// URL: %v", err)
		}
		fw := blackhole.Start(t, u.Host)
		u.Host = fw.Addr
		silentBackend(t, "postgres", u.String(), fw, table)
	})
	t.Run("mariadb", func(t *testing.T) {
		dsn := mariaDSN(t)
		admin, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		table := fmt.Sprintf("ddp_blackhole_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
		for _, q := range []string{
			`CREATE TABLE ` + table + `_t (id BIGINT PRIMARY KEY, age BIGINT)`,
			`INSERT INTO ` + table + `_t SELECT seq, seq % 90 FROM seq_1_to_500`,
			`CREATE VIEW ` + table + ` AS SELECT t.id, t.age FROM ` + table + `_t t JOIN (SELECT SLEEP(0.7) AS s) z`,
		} {
			if _, err := admin.Exec(q); err != nil {
				t.Fatalf("%s is set but the server is unusable: %v", mysqlDSNEnv, err)
			}
		}
		t.Cleanup(func() {
			admin.Exec("DROP VIEW IF EXISTS " + table)
			admin.Exec("DROP TABLE IF EXISTS " + table + "_t")
		})
		cfg, err := gomysql.ParseDSN(dsn)
		if err != nil || cfg.Net != "tcp" {
			t.Fatalf("%s must be a tcp(host:port) DSN: %v", mysqlDSNEnv, err)
		}
		fw := blackhole.Start(t, cfg.Addr)
		cfg.Addr = fw.Addr
		silentBackend(t, "mysql", cfg.FormatDSN(), fw, table)
	})
}

// silentBackend serves table (id, age; slow to read) through the backend
// at dsn, which reaches the database through fw, and runs the scenario.
func silentBackend(t *testing.T, driver, dsn string, fw *blackhole.Forwarder, table string) {
	ctx := context.Background()
	const timeout = time.Second
	deadline := backends.ClientTimeout(timeout)
	dir := t.TempDir()
	t.Setenv("DDP_TEST_BLACKHOLE_PW", "pw")
	pol, err := policies.LoadBytes(filepath.Join(dir, "policy.yaml"), []byte(fmt.Sprintf(`version: 1
backend: {driver: %s, dsn: %q, statement_timeout: 1s, connect_timeout: 2s, max_open_conns: 2}
listen: {postgres: "127.0.0.1:0", mysql: "off", auth: trust}
ledger: {path: ledger.db}
users:
  - name: ana
    password_env: DDP_TEST_BLACKHOLE_PW
    default_epsilon: 0.1
    budgets: {d: {epsilon: 10}}
datasets:
  d:
    tables:
      %s:
        unit: id
        columns:
          age: {type: integer, bounds: [0, 100]}
`, driver, dsn, table)))
	if err != nil {
		t.Fatal(err)
	}
	pol.Listen.MySQL = "127.0.0.1:0" // both front ends on free ports
	sctx, cancel := context.WithCancel(ctx)
	p, err := startProxy(sctx, pol, slog.New(slog.DiscardHandler))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	defer func() {
		cancel()
		p.wait(sctx)
	}()
	pgURL := fmt.Sprintf("postgres://ana:pw@%s/d?sslmode=disable", p.pgAddr)
	connect := func() *pgx.Conn {
		t.Helper()
		c, err := pgx.Connect(ctx, pgURL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	analyst, other := connect(), connect()
	my, err := sql.Open("mysql", "ana:pw@tcp("+p.myAddr+")/d")
	if err != nil {
		t.Fatal(err)
	}
	defer my.Close()
	spent := func() float64 {
		t.Helper()
		a, err := p.ledger.Account(context.Background(), "ana", "d")
		if err != nil {
			t.Fatal(err)
		}
		return a.Spent.Epsilon
	}
	count := func(where string) error {
		var n int64
		return analyst.QueryRow(ctx, "SELECT COUNT(*) FROM "+table+" WHERE "+where, pgx.QueryExecModeSimpleProtocol).Scan(&n)
	}
	// local checks that the proxy still answers what needs no backend, on
	// an open connection, a new PostgreSQL one and a MySQL one, promptly.
	local := func() {
		t.Helper()
		start := time.Now()
		var s string
		if _, err := other.Exec(ctx, "SET ddp.epsilon = 0.2", pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Errorf("SET during the silence: %v", err)
		}
		if err := other.QueryRow(ctx, "SHOW ddp.epsilon", pgx.QueryExecModeSimpleProtocol).Scan(&s); err != nil || s != "0.2" {
			t.Errorf("SHOW during the silence: %q, %v", s, err)
		}
		rows, err := connect().Query(ctx, "SELECT * FROM ddp.budget", pgx.QueryExecModeSimpleProtocol)
		if err == nil {
			_, err = pgx.CollectRows(rows, pgx.RowToMap)
		}
		if err != nil {
			t.Errorf("budget view on a new connection during the silence: %v", err)
		}
		if err := my.QueryRowContext(ctx, "SELECT @@version_comment").Scan(&s); err != nil {
			t.Errorf("MySQL local statement during the silence: %v", err)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("local statements took %v during the silence", took)
		}
	}

	if err := count("age > 1"); err != nil {
		t.Fatalf("warm-up: %v", err)
	}
	before := spent()

	// Mid-query, PostgreSQL front end.
	time.AfterFunc(300*time.Millisecond, fw.Freeze)
	localDone := make(chan struct{})
	time.AfterFunc(600*time.Millisecond, func() { defer close(localDone); local() })
	err, took := blackhole.Timed(t, deadline+10*time.Second, func() error { return count("age > 2") })
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("silent network mid-query: %v, want 57014", err)
	}
	if took > deadline+time.Second {
		t.Errorf("mid-query: answered after %v, want within the %v deadline", took, deadline)
	}
	<-localDone
	if got := spent(); got != before+0.1 {
		t.Errorf("spent %v after a query that reached the backend, want %v (charged)", got, before+0.1)
	}
	t.Logf("PostgreSQL front end, mid-query: %s after %v", pe.Message, took)

	// Before a query: still silent.
	before = spent()
	err, took = blackhole.Timed(t, deadline+10*time.Second, func() error { return count("age > 3") })
	if !errors.As(err, &pe) || pe.Code != "08006" {
		t.Fatalf("silent network before the query: %v, want 08006", err)
	}
	if took > deadline+time.Second {
		t.Errorf("before the query: answered after %v, want within %v", took, deadline)
	}
	if got := spent(); got != before {
		t.Errorf("spent %v after a query that never reached the backend, want %v (refunded)", got, before)
	}

	// MySQL front end, before a query, then mid-query.
	var n int64
	err, took = blackhole.Timed(t, deadline+10*time.Second, func() error {
		return my.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table+" WHERE age > 4").Scan(&n)
	})
	var me *gomysql.MySQLError
	if !errors.As(err, &me) || me.Number != sqlerr.BackendUnavailable.MySQLErrno {
		t.Fatalf("MySQL front end, silent before the query: %v, want %d", err, sqlerr.BackendUnavailable.MySQLErrno)
	}
	if took > deadline+time.Second {
		t.Errorf("MySQL front end, before the query: answered after %v", took)
	}
	fw.Thaw()
	if err := count("age > 5"); err != nil {
		t.Fatalf("after the network came back: %v", err)
	}
	before = spent()
	time.AfterFunc(300*time.Millisecond, fw.Freeze)
	err, took = blackhole.Timed(t, deadline+10*time.Second, func() error {
		return my.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table+" WHERE age > 6").Scan(&n)
	})
	if !errors.As(err, &me) || me.Number != sqlerr.StatementTimeout.MySQLErrno {
		t.Fatalf("MySQL front end, silent mid-query: %v, want %d", err, sqlerr.StatementTimeout.MySQLErrno)
	}
	if took > deadline+time.Second {
		t.Errorf("MySQL front end, mid-query: answered after %v", took)
	}
	if got := spent(); got != before+0.1 {
		t.Errorf("spent %v after a MySQL query that reached the backend, want %v", got, before+0.1)
	}

	fw.Thaw()
	if err := count("age > 7"); err != nil {
		t.Fatalf("after the network came back: %v", err)
	}
}
