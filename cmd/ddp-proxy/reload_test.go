package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ddp-proxy/ddp-proxy/demo"
	"github.com/ddp-proxy/ddp-proxy/internal/testlog"
	"github.com/ddp-proxy/ddp-proxy/ledger"
)

// waitLog waits until the log holds want n times.
func waitLog(t *testing.T, log *testlog.Sink, want string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(log.String(), want) < n {
		if time.Now().After(deadline) {
			t.Fatalf("log never said %q %d times:\n%s", want, n, log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func censusTotal(t *testing.T, conn *pgx.Conn) (total, spent float64) {
	t.Helper()
	rows, err := conn.Query(context.Background(), "SHOW ddp.budget", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	found := false
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		if v[0] == "census" {
			total, spent, found = v[1].(float64), v[2].(float64), true
		}
	}
	if err := rows.Err(); err != nil || !found {
		t.Fatalf("SHOW ddp.budget: census found %v, err %v", found, err)
	}
	return total, spent
}

// TestServeReloadsOnSIGHUP runs `serve` in-process, then changes the
// analyst's census budget in the policy file and sends SIGHUP (directly,
// then through `ddp-proxy reload --policy`). An open session sees the new
// budget on its next statement (a query the old budget allowed is now
// refused), and a broken policy file is refused with the old policy kept.
func TestServeReloadsOnSIGHUP(t *testing.T) {
	dir := t.TempDir()
	files, err := demo.Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(files.Policy)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(orig), "postgres: 127.0.0.1:15432", "postgres: 127.0.0.1:0", 1)
	text = strings.Replace(text, "mysql: 127.0.0.1:13306", `mysql: "off"`, 1)
	const budgetLine = "census: {epsilon: 10, delta: 1.0e-5}"
	if !strings.Contains(text, budgetLine) {
		t.Fatalf("the demo policy no longer has %q", budgetLine)
	}
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(files.Policy, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(text)

	logs := &testlog.Sink{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- cmdServe(ctx, []string{"--policy", files.Policy}, pw, io.Discard, log) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	addr := strings.TrimSpace(strings.TrimPrefix(line, "ddp-proxy: PostgreSQL front end on "))
	waitLog(t, logs, "serving; SIGHUP", 1)

	conn, err := pgx.Connect(context.Background(), fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", addr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	query := func(sql string) error {
		rows, err := conn.Query(context.Background(), sql, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			return err
		}
		rows.Close()
		return rows.Err()
	}
	if err := query("SELECT sex, COUNT(*) FROM people GROUP BY sex"); err != nil {
		t.Fatal(err)
	}
	if total, spent := censusTotal(t, conn); total != 10 || spent != 0.1 {
		t.Fatalf("before reload: census total %v spent %v, want 10 and 0.1", total, spent)
	}

	// 1. Lower the budget to 0.15 and SIGHUP: 0.05 is left, so the next
	// 0.1 query of the same session is refused.
	write(strings.Replace(text, budgetLine, "census: {epsilon: 0.15, delta: 1.0e-5}", 1))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, logs, "policy reloaded", 1)
	if total, _ := censusTotal(t, conn); total != 0.15 {
		t.Fatalf("after reload: census total %v, want 0.15", total)
	}
	var pe *pgconn.PgError
	if err := query("SELECT sex, COUNT(*) FROM people WHERE age > 40 GROUP BY sex"); !errors.As(err, &pe) || pe.Code != "53400" {
		t.Fatalf("after lowering the budget: %v, want budget exhausted (53400)", err)
	}

	// 2. A broken file: `reload --policy` refuses to signal, and a direct
	// SIGHUP is logged as failed with the policy in force kept.
	write(strings.Replace(text, budgetLine, "census: {epsilon: -1, delta: 1.0e-5}", 1))
	var out, errOut bytes.Buffer
	if err := cmdReload([]string{"--policy", files.Policy}, &out, &errOut); !errors.Is(err, exitError{1}) {
		t.Fatalf("reload of a broken policy: %v (%s), want exit 1", err, errOut.String())
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, logs, "policy reload failed; keeping the policy in force", 1)
	if total, _ := censusTotal(t, conn); total != 0.15 {
		t.Fatalf("after a failed reload: census total %v, want 0.15 kept", total)
	}

	// 3. Raise it again through `ddp-proxy reload --policy` (pid file next
	// to the ledger): the refused query now runs, in the same session.
	write(text)
	out.Reset()
	errOut.Reset()
	if err := cmdReload([]string{"--policy", files.Policy}, &out, &errOut); err != nil {
		t.Fatalf("reload: %v (%s)", err, errOut.String())
	}
	waitLog(t, logs, "policy reloaded", 2)
	if err := query("SELECT sex, COUNT(*) FROM people WHERE age > 40 GROUP BY sex"); err != nil {
		t.Fatalf("after raising the budget: %v", err)
	}
	if total, spent := censusTotal(t, conn); total != 10 || spent != 0.2 {
		t.Fatalf("after the second reload: census total %v spent %v, want 10 and 0.2", total, spent)
	}
}

// TestServeSIGTERMSettlesTheLedger: serve is stopped by a real SIGTERM
// right after a fresh answer (whose commit record is deferred). serve
// returns cleanly, removes its pid file, and the reopened ledger has the
// answer's release durable and no reservation left pending: a graceful
// shutdown commits everything.
func TestServeSIGTERMSettlesTheLedger(t *testing.T) {
	dir := t.TempDir()
	files, err := demo.Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(files.Policy)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(orig), "postgres: 127.0.0.1:15432", "postgres: 127.0.0.1:0", 1)
	text = strings.Replace(text, "mysql: 127.0.0.1:13306", `mysql: "off"`, 1)
	if err := os.WriteFile(files.Policy, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &testlog.Sink{}
	pr, pw := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- cmdServe(context.Background(), []string{"--policy", files.Policy}, pw, io.Discard, slog.New(slog.NewTextHandler(logs, nil)))
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	addr := strings.TrimSpace(strings.TrimPrefix(line, "ddp-proxy: PostgreSQL front end on "))
	waitLog(t, logs, "serving; SIGHUP", 1)
	if _, err := os.Stat(files.Ledger + ".pid"); err != nil {
		t.Fatalf("no pid file next to the ledger: %v", err)
	}

	conn, err := pgx.Connect(context.Background(), fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", addr))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := conn.QueryRow(context.Background(), "SELECT COUNT(*) FROM people WHERE age > 50", pgx.QueryExecModeSimpleProtocol).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("serve after SIGTERM: %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("serve did not stop after SIGTERM")
	}
	conn.Close(context.Background())
	if _, err := os.Stat(files.Ledger + ".pid"); !os.IsNotExist(err) {
		t.Fatalf("pid file left behind: %v", err)
	}
	l, err := ledger.Open(files.Ledger, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if p, err := l.Pending(); err != nil || len(p) != 0 {
		t.Fatalf("pending after a graceful shutdown: %+v, %v; want none", p, err)
	}
	if spent, _ := l.Spent("analyst", "census"); spent.Epsilon != 0.1 {
		t.Fatalf("spent %+v, want 0.1", spent)
	}
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestReloadCommandErrors: usage, a missing pid file and a pid file
// without a process id are reported, and nothing is signalled.
func TestReloadCommandErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"reload"}, &out, &errOut, slog.New(slog.DiscardHandler)); !errors.Is(err, exitError{2}) {
		t.Fatalf("reload without flags: %v, want exit 2", err)
	}
	dir := t.TempDir()
	err := cmdReload([]string{"--pid-file", dir + "/none.pid"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "no pid file") {
		t.Fatalf("missing pid file: %v", err)
	}
	if err := os.WriteFile(dir+"/bad.pid", []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = cmdReload([]string{"--pid-file", dir + "/bad.pid"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "does not hold a process id") {
		t.Fatalf("pid 1: %v", err)
	}
}
