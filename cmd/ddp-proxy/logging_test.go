package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ddp-proxy/ddp-proxy/demo"
	"github.com/ddp-proxy/ddp-proxy/internal/testlog"
)

// serveCommand runs `ddp-proxy serve` in-process on the demo with the
// given extra flags, and returns the PostgreSQL address and the log.
func serveCommand(t *testing.T, flags ...string) (addr string, log *testlog.Sink) {
	t.Helper()
	return serveEdited(t, nil, flags...)
}

// serveEdited is serveCommand on the demo policy as edit changes it.
func serveEdited(t *testing.T, edit func(policy []byte) []byte, flags ...string) (addr string, log *testlog.Sink) {
	t.Helper()
	files, err := demo.Build(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(files.Policy)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		text = edit(text)
	}
	text = bytes.Replace(text, []byte("postgres: 127.0.0.1:15432"), []byte("postgres: 127.0.0.1:0"), 1)
	text = bytes.Replace(text, []byte("mysql: 127.0.0.1:13306"), []byte("mysql: \"off\""), 1)
	if err := os.WriteFile(files.Policy, text, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	log = &testlog.Sink{}
	done := make(chan error, 1)
	go func() {
		args := append([]string{"serve", "--policy", files.Policy}, flags...)
		done <- run(ctx, args, pw, log, nil)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "ddp-proxy: PostgreSQL front end on "); ok {
			go io.Copy(io.Discard, pr)
			return a, log
		}
	}
	t.Fatalf("serve printed no address; log:\n%s", log)
	return "", nil
}

// TestQueryLogJSON: with --log-format json every answered or refused
// private query is one info line with user, dataset, fingerprint, ε, δ,
// outcome and duration, and no literal of any query (in its text or bound
// as a parameter) appears anywhere in the log.
func TestQueryLogJSON(t *testing.T) {
	addr, log := serveCommand(t, "--log-format", "json", "--log-level", "info")
	conn := connectDemo(t, addr)
	ctx := context.Background()
	var n int64
	if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM people WHERE workclass = 'Never-worked'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM people WHERE occupation = $1", "Farming-fishing").Scan(&n); err != nil {
		t.Fatal(err)
	}
	_, err := conn.Exec(ctx, "SELECT age FROM people WHERE marital_status = 'Married-AF-spouse'")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		t.Fatalf("row-level read: %v", err)
	}
	if _, err := conn.Exec(ctx, "SET application_name = 'Zanzibar-app'"); err != nil {
		t.Fatal(err)
	}

	var lines []map[string]any
	deadline := time.Now().Add(5 * time.Second)
	for len(lines) < 3 && time.Now().Before(deadline) {
		lines = lines[:0]
		for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("not a JSON line: %q", l)
			}
			if m["msg"] == "private query" {
				lines = append(lines, m)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(lines) != 3 {
		t.Fatalf("%d private query lines, want 3 (two answered, one refused; SET is not one):\n%s", len(lines), log)
	}
	for i, want := range []struct {
		outcome  string
		epsilon  float64
		sqlstate string
	}{{"fresh", 0.1, ""}, {"fresh", 0.1, ""}, {"refused", 0, pgErr.Code}} {
		l := lines[i]
		if l["level"] != "INFO" || l["user"] != "analyst" || l["dataset"] != "census" || l["outcome"] != want.outcome ||
			l["epsilon"] != want.epsilon || l["delta"] != 0.0 {
			t.Errorf("line %d: %v, want outcome %s ε %v", i, l, want.outcome, want.epsilon)
		}
		if d, ok := l["duration_ms"].(float64); !ok || d < 0 {
			t.Errorf("line %d: duration_ms %v", i, l["duration_ms"])
		}
		if fp, _ := l["fingerprint"].(string); fp == "" {
			t.Errorf("line %d: no fingerprint", i)
		}
		if got, _ := l["sqlstate"].(string); got != want.sqlstate {
			t.Errorf("line %d: sqlstate %q, want %q", i, got, want.sqlstate)
		}
	}
	if lines[0]["fingerprint"] == lines[1]["fingerprint"] {
		t.Errorf("two statements of different shape share a fingerprint")
	}
	all := log.String()
	for _, lit := range []string{"Never-worked", "Farming-fishing", "Married-AF-spouse", "Zanzibar-app", "SELECT", "people"} {
		if strings.Contains(all, lit) {
			t.Errorf("the log contains %q:\n%s", lit, all)
		}
	}
}

// TestQueryLogLevel: --log-level warn drops the per-query lines; a bad
// --log-format is a usage error.
func TestQueryLogLevel(t *testing.T) {
	addr, log := serveCommand(t, "--log-level", "warn")
	conn := connectDemo(t, addr)
	var n int64
	if err := conn.QueryRow(context.Background(), "SELECT COUNT(*) FROM people").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log.String(), "private query") {
		t.Errorf("info lines at --log-level warn:\n%s", log)
	}
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"serve", "--policy", "x.yaml", "--log-format", "xml"}, io.Discard, &stderr, nil)
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(stderr.String(), "--log-format") {
		t.Errorf("--log-format xml: %v %q", err, stderr.String())
	}
}

// TestServeWarnsOfSchemaMismatch: serve logs, at startup, where the
// policy does not match the backend (what check --connect reports), and
// serves on.
func TestServeWarnsOfSchemaMismatch(t *testing.T) {
	addr, log := serveEdited(t, func(p []byte) []byte {
		out := bytes.Replace(p, []byte("          cell:\n"), []byte("          ghost: {type: integer}\n          cell:\n"), 1)
		if bytes.Equal(out, p) {
			t.Fatal("the demo policy has no cell column to add a ghost before")
		}
		return out
	}, "--log-level", "debug")
	if addr == "" {
		t.Fatal("not serving")
	}
	if !log.HasLine("level=WARN", "the policy does not match the backend", "column ghost does not exist in backend table") {
		t.Errorf("no warning about the ghost column; log:\n%s", log)
	}
	if log.HasLine("level=WARN", "the policy does not match the backend", "column cell") {
		t.Errorf("a warning about a column that matches; log:\n%s", log)
	}
}
