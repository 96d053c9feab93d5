package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// explain, check --connect and serve's preparation read the dependence
// structure from the backend; without one, explain refuses ddp queries
// with the reason.
func TestDDPExplainAndCheck(t *testing.T) {
	t.Setenv("DDP_TEST_DDP_PW", "pw")
	dir := t.TempDir()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "d.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"CREATE TABLE checkins (user_id INTEGER, cell INTEGER)",
		"CREATE TABLE friendships (user_a INTEGER, user_b INTEGER)",
		// user 1 has friends 2, 3, 4; others fewer.
		"INSERT INTO friendships VALUES (1,2),(1,3),(4,1),(2,3)",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	pol := filepath.Join(dir, "p.yaml")
	os.WriteFile(pol, []byte(`version: 1
backend: {driver: sqlite, dsn: d.db}
users: [{name: a, password_env: DDP_TEST_DDP_PW, budgets: {social: {epsilon: 10}}, max_epsilon: 5}]
datasets:
  social:
    model: ddp
    dependence:
      edges: {table: friendships, columns: [user_a, user_b], rho: 0.25}
    tables:
      checkins:
        unit: user_id
        max_rows_per_unit: 3
        columns:
          cell: {type: integer, domain: {range: [0, 9]}}
`), 0o600)

	// Histogram, k = 3: ΔQ = 2k = 6 (value change); m = 1 + 3·0.25 = 1.75;
	// DS = 10.5; L = 4, baseline 24; scale DS/ε = 5.25.
	out, errOut, code := runCmd(t, "explain", "--json", "--policy", pol, "--epsilon", "2", "SELECT cell, COUNT(*) FROM checkins GROUP BY cell")
	if code != 0 {
		t.Fatalf("explain: exit %d\n%s", code, errOut)
	}
	var x planner.Explanation
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	json.Unmarshal([]byte(out), &raw)
	dep, ok := raw["dependence"].(map[string]any)
	if !ok {
		t.Fatalf("no dependence object in %s", out)
	}
	for _, k := range []string{"kind", "L", "max_dependent_sensitivity", "multiplier", "rho_method", "rho_summary", "baseline_sensitivity"} {
		if _, ok := dep[k]; !ok {
			t.Errorf("dependence lacks %s: %s", k, out)
		}
	}
	d := x.Dependence
	if d.Kind != "edges" || d.L != 4 || d.Multiplier != 1.75 || d.MaxDependentSensitivity != 10.5 || d.BaselineSensitivity != 24 || d.RhoMethod != "declared" {
		t.Errorf("dependence %+v", d)
	}
	if len(x.Columns) < 2 || x.Columns[1].Sensitivity != 10.5 || x.Columns[1].Scale != 5.25 {
		t.Errorf("columns %+v", x.Columns)
	}

	out, errOut, code = runCmd(t, "check", "--connect", pol)
	if code != 0 || !strings.Contains(out, "dataset social: dependence edges, L = 4") {
		t.Fatalf("check --connect: exit %d\n%s%s", code, out, errOut)
	}

	// No backend: refused with the reason, never planned.
	os.Remove(filepath.Join(dir, "d.db"))
	os.WriteFile(filepath.Join(dir, "d.db"), nil, 0o600)
	out, errOut, code = runCmd(t, "explain", "--json", "--policy", pol, "SELECT COUNT(*) FROM checkins")
	if code != 0 {
		t.Fatalf("explain without structure: exit %d\n%s", code, errOut)
	}
	json.Unmarshal([]byte(out), &x)
	t.Logf("refusal: %s / %s", x.Reason, x.Hint)
	if !x.Refused || !strings.Contains(x.Reason, "dependence structure is not available") || !strings.Contains(x.Reason, "friendships") {
		t.Errorf("want a refusal naming the missing structure, got %+v\nstderr %s", x, errOut)
	}
}

// End to end through the PostgreSQL front end: serve reads the structure
// at startup, the answer's notice carries the dependent noise scale, and
// the ddp answer is charged like any other.
func TestDDPServe(t *testing.T) {
	t.Setenv("DDP_TEST_DDP_PW", "pw")
	dir := t.TempDir()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "d.db"))
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{
		"CREATE TABLE checkins (user_id INTEGER, cell INTEGER)",
		"CREATE TABLE friendships (user_a INTEGER, user_b INTEGER)",
		"INSERT INTO friendships VALUES (1,2),(1,3),(4,1),(2,3)",
	}
	for u := 1; u <= 50; u++ {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO checkins VALUES (%d, %d)", u, u%3))
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	polPath := filepath.Join(dir, "p.yaml")
	os.WriteFile(polPath, []byte(`version: 1
backend: {driver: sqlite, dsn: d.db}
listen: {postgres: "127.0.0.1:0", mysql: "off", auth: trust}
users: [{name: a, password_env: DDP_TEST_DDP_PW, budgets: {social: {epsilon: 10}}, max_epsilon: 5}]
datasets:
  social:
    model: ddp
    dependence:
      edges: {table: friendships, columns: [user_a, user_b], rho: 0.25}
    tables:
      checkins:
        unit: user_id
        columns:
          cell: {type: integer, domain: {range: [0, 2]}}
`), 0o600)
	pol, err := policies.Load(polPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := startProxy(ctx, pol, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); p.wait(ctx) }()
	if pol.Datasets["social"].Dependence.Structure == nil {
		t.Fatal("serve did not read the dependence structure")
	}
	cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://a:x@%s/d?sslmode=disable", p.pgAddr))
	if err != nil {
		t.Fatal(err)
	}
	var notices []string
	var mu sync.Mutex
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { mu.Lock(); notices = append(notices, n.Message); mu.Unlock() }
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SET ddp.epsilon = 2"); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, "SELECT cell, COUNT(*) FROM checkins GROUP BY cell", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil || n != 3 {
		t.Fatalf("rows %d err %v", n, err)
	}
	// Histogram, k = 1: ΔQ = 2, m = 1 + 3·0.25 = 1.75, DS = 3.5, ε = 2:
	// scale 1.75.
	mu.Lock()
	defer mu.Unlock()
	if len(notices) == 0 || !strings.Contains(notices[len(notices)-1], "noise scale 1.75") || !strings.Contains(notices[len(notices)-1], "spent ε") {
		t.Errorf("notices %q: want the dependent noise scale 1.75 and the cost", notices)
	}
}
