package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/lib/pq"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// startDemo builds the demo in a temp dir and serves it on a free port.
func startDemo(t *testing.T) (addr string, stop func() error) {
	p, stop := serveDemo(t)
	return p.pgAddr, stop
}

// startDemoBoth serves the demo on free ports and returns the PostgreSQL
// and MySQL front ends' addresses.
func startDemoBoth(t *testing.T) (pgAddr, myAddr string) {
	p, _ := serveDemo(t)
	return p.pgAddr, p.myAddr
}

// serveDemo builds the demo in a temp dir and serves both front ends on
// free ports until the test ends (or stop is called).
func serveDemo(t *testing.T) (p *proxy, stop func() error) {
	t.Helper()
	_, pol := demoPolicy(t)
	pol.Listen.Postgres = "127.0.0.1:0"
	pol.Listen.MySQL = "127.0.0.1:0"
	return servePolicy(t, pol)
}

// servePolicy serves pol on the addresses it names (tests name free
// ports, 127.0.0.1:0) until the test ends or stop is called.
func servePolicy(t testing.TB, pol *policies.Policy) (p *proxy, stop func() error) {
	t.Helper()
	return servePolicyLog(t, pol, slog.New(slog.DiscardHandler))
}

// servePolicyLog is servePolicy logging to log.
func servePolicyLog(t testing.TB, pol *policies.Policy, log *slog.Logger) (p *proxy, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p, err := startProxy(ctx, pol, log)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var once sync.Once
	var werr error
	stop = func() error {
		once.Do(func() { cancel(); werr = p.wait(ctx) })
		return werr
	}
	t.Cleanup(func() { stop() })
	return p, stop
}

func TestServeWithPgx(t *testing.T) {
	addr, stop := startDemo(t)
	// Each mode asks about another age: the same value is the same query
	// (a quoted '30' and a bound 30 are both the integer 30), which the
	// release cache answers for free instead of charging again.
	for i, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		minAge := 30 + i
		t.Run(mode.String(), func(t *testing.T) {
			cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", addr))
			if err != nil {
				t.Fatal(err)
			}
			cfg.DefaultQueryExecMode = mode
			var mu sync.Mutex
			var notices []string
			cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
				mu.Lock()
				notices = append(notices, n.Message)
				mu.Unlock()
			}
			ctx := context.Background()
			conn, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			rows, err := conn.Query(ctx, "SELECT sex, COUNT(*) FROM people WHERE age > $1 GROUP BY sex", minAge)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for rows.Next() {
				var sex string
				var n int64
				if err := rows.Scan(&sex, &n); err != nil {
					t.Fatal(err)
				}
				got[sex] = n
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got["Male"] < 1500 || got["Female"] < 500 {
				t.Fatalf("histogram %v", got)
			}
			mu.Lock()
			if len(notices) == 0 || !strings.Contains(notices[len(notices)-1], "spent ε") {
				t.Errorf("notices %q: want the cost of the answer", notices)
			}
			mu.Unlock()
			// A refused query: 42501, and the connection stays usable.
			_, err = conn.Exec(ctx, "SELECT * FROM people")
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
				t.Fatalf("SELECT *: %v", err)
			}
			var eps string
			if err := conn.QueryRow(ctx, "SHOW ddp.epsilon").Scan(&eps); err != nil || eps != "0.1" {
				t.Fatalf("SHOW ddp.epsilon after an error: %q %v", eps, err)
			}
		})
	}
	if err := stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

func TestServeWithLibPQAndBudgetExhaustion(t *testing.T) {
	addr, _ := startDemo(t)
	db, err := sql.Open("postgres", fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("SET ddp.epsilon = 1"); err != nil {
		t.Fatal(err)
	}
	// The demo user has ε = 10 on census: ten distinct queries at ε = 1
	// succeed, the eleventh is refused with 53400, and repeats stay free.
	for i := 0; i < 10; i++ {
		var n int64
		if err := db.QueryRow(fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age > %d", 20+i)).Scan(&n); err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
	}
	var n int64
	err = db.QueryRow("SELECT COUNT(*) FROM people WHERE age > 99").Scan(&n)
	if err == nil || !strings.Contains(err.Error(), "53400") && !strings.Contains(err.Error(), "budget exhausted") {
		t.Fatalf("eleventh query: %v", err)
	}
	if err := db.QueryRow("SELECT COUNT(*) FROM people WHERE age > 20").Scan(&n); err != nil {
		t.Fatalf("a repeated query after exhaustion must be free: %v", err)
	}
	var left float64
	if err := db.QueryRow("SELECT epsilon_left FROM ddp.budget WHERE dataset = 'census'").Scan(&left); err != nil || left != 0 {
		t.Fatalf("epsilon_left %g, %v; want 0 after exhaustion", left, err)
	}
}

func TestServeWithPsql(t *testing.T) {
	psql := clientBinary(t, "postgresql-client", "psql")
	addr, _ := startDemo(t)
	host, port, _ := strings.Cut(addr, ":")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, psql, "-X", "-h", host, "-p", port, "-U", "analyst", "-d", "demo",
		"-c", "SELECT sex, COUNT(*) FROM people GROUP BY sex", "-c", "SELECT * FROM people", "-c", `\dt`)
	cmd.Env = append(os.Environ(), "PGPASSWORD=demo", "PGSSLMODE=disable")
	out, _ := cmd.CombinedOutput()
	s := string(out)
	for _, want := range []string{"Female", "Male", "(2 rows)", "NOTICE:  ddp: spent", "ERROR:  table people is private",
		" public | checkins ", " public | venue_categories "} {
		if !strings.Contains(s, want) {
			t.Errorf("psql output lacks %q:\n%s", want, s)
		}
	}
}

// TestPsqlClientMinMessages: psql started with PGOPTIONS="-c
// client_min_messages=warning" (a script that wants a quiet stderr) gets
// the answer without the cost notice, and the answer is still charged;
// SET client_min_messages = notice brings the notice back, as on
// PostgreSQL. An invalid level in PGOPTIONS refuses the connection.
func TestPsqlClientMinMessages(t *testing.T) {
	psql := clientBinary(t, "postgresql-client", "psql")
	addr, _ := startDemo(t)
	host, port, _ := strings.Cut(addr, ":")
	run := func(options string, cmds ...string) (stdout, stderr string, err error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		args := []string{"-X", "-A", "-t", "-h", host, "-p", port, "-U", "analyst", "-d", "demo"}
		for _, c := range cmds {
			args = append(args, "-c", c)
		}
		cmd := exec.CommandContext(ctx, psql, args...)
		cmd.Env = append(os.Environ(), "PGPASSWORD=demo", "PGSSLMODE=disable", "PGOPTIONS="+options)
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err = cmd.Run()
		return o.String(), e.String(), err
	}
	out, errOut, err := run("-c client_min_messages=warning",
		"SELECT COUNT(*) FROM people WHERE age > 21", "SHOW ddp.budget")
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, errOut)
	}
	if strings.Contains(errOut, "NOTICE") {
		t.Errorf("client_min_messages=warning: psql still printed a notice:\n%s", errOut)
	}
	// SHOW ddp.budget: dataset|ε total|ε spent|...; the census row must
	// show the default ε 0.1 spent.
	if !strings.Contains(out, "\ncensus|10|0.1|9.9|") {
		t.Errorf("psql output %q: want a count, then census with ε 0.1 spent (the quiet answer is charged)", out)
	}
	// ε from the connection options too (a BI tool that cannot run SET).
	_, errOut, err = run("-c client_min_messages=warning -c ddp.epsilon=0.5", "SET client_min_messages = notice", "SELECT COUNT(*) FROM people WHERE age > 22")
	if err != nil || !strings.Contains(errOut, "NOTICE:  ddp: spent ε = 0.5 on census") {
		t.Errorf("after SET client_min_messages = notice, with -c ddp.epsilon=0.5: %v, stderr %q; want the cost notice of ε 0.5", err, errOut)
	}
	if _, errOut, err = run("-c client_min_messages=shouting", "SELECT 1"); err == nil || !strings.Contains(errOut, "client_min_messages") {
		t.Errorf("an invalid level at startup: %v, stderr %q; want the connection refused naming the parameter", err, errOut)
	}
}

// TestServeWithPsycopg2AndSQLAlchemy runs testdata/python_client.py with
// Debian's python3 (psycopg2 and SQLAlchemy); .ci/run installs them.
func TestServeWithPsycopg2AndSQLAlchemy(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import psycopg2, sqlalchemy").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI: python3-psycopg2 and python3-sqlalchemy must be installed by .ci/run: %v", err)
		}
		t.Skip("python3 with psycopg2 and sqlalchemy is not installed (apt-get install python3-psycopg2 python3-sqlalchemy)")
	}
	addr, _ := startDemo(t)
	host, port, _ := strings.Cut(addr, ":")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, "testdata/python_client.py", host, port).CombinedOutput()
	if err != nil {
		t.Fatalf("python client: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "sqlalchemy ok") {
		t.Fatalf("python client output:\n%s", out)
	}
}

// TestServeWithPgJDBC compiles and runs testdata/JdbcClient.java against
// the demo with Debian's pgjdbc; .ci/run installs it.
func TestServeWithPgJDBC(t *testing.T) {
	jar := "/usr/share/java/postgresql.jar"
	_, errJ := os.Stat(jar)
	_, errC := exec.LookPath("javac")
	if errJ != nil || errC != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI: javac and libpostgresql-jdbc-java must be installed by .ci/run (%v, %v)", errJ, errC)
		}
		t.Skip("javac or pgjdbc (libpostgresql-jdbc-java) is not installed")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "javac", "-cp", jar, "-d", dir, "testdata/JdbcClient.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	addr, _ := startDemo(t)
	host, port, _ := strings.Cut(addr, ":")
	out, err := exec.CommandContext(ctx, "java", "-cp", jar+":"+dir, "JdbcClient", host, port).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "jdbc ok") {
		t.Fatalf("JDBC client: %v\n%s", err, out)
	}
}

// pgxModes are pgx's two ways of sending a query: the simple protocol, and
// the extended one with a described, cached statement.
var pgxModes = []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement}

// connectPgx connects pgx to the demo at addr in the given mode, closed
// when the test ends.
func connectPgx(t *testing.T, addr string, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	return connectPgxURL(t, fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", addr), mode)
}
