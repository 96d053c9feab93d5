package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ddp-proxy/ddp-proxy/admin"
	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// serveDemoAdmin serves the demo with the admin listener on a free port;
// edit may change the policy first.
func serveDemoAdmin(t *testing.T, edit func(*policies.Policy)) *proxy {
	t.Helper()
	_, pol := demoPolicy(t)
	pol.Listen.Postgres, pol.Listen.MySQL, pol.Listen.Admin = "127.0.0.1:0", policies.ListenOff, "127.0.0.1:0"
	if edit != nil {
		edit(pol)
	}
	p, _ := servePolicy(t, pol)
	return p
}

func connectDemo(t *testing.T, addr string) *pgx.Conn {
	t.Helper()
	return connectDemoUser(t, addr, "analyst")
}

// connectDemoUser connects to the demo as user (auth: trust).
func connectDemoUser(t *testing.T, addr, user string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), fmt.Sprintf("postgres://%s:demo@%s/demo?sslmode=disable", user, addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// scrape reads /metrics and parses it as Prometheus text.
func scrape(t *testing.T, adminAddr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + adminAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// sample returns the value of the family's series with exactly these
// labels (a histogram: its sample count), 0 when absent.
func sample(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
next:
	for _, m := range f.Metric {
		if len(m.Label) != len(labels) {
			continue
		}
		for _, l := range m.Label {
			if v, ok := labels[l.GetName()]; !ok || v != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return 0
}

// TestAdminMetrics scrapes /metrics after real queries over pgx: a fresh
// answer, its repeat, a refusal and a catalog query each move their
// counters by exactly one, ε spent is the ε the notice reported, and the
// ledger, backend and connection metrics are there.
func TestAdminMetrics(t *testing.T) {
	p := serveDemoAdmin(t, nil)
	conn := connectDemo(t, p.pgAddr)
	ctx := context.Background()
	before := scrape(t, p.adminAddr)
	if got := sample(before, "ddp_open_connections", map[string]string{"frontend": "postgres"}); got != 1 {
		t.Errorf("open connections with one client: %v", got)
	}

	if _, err := conn.Exec(ctx, "SET ddp.epsilon = 0.25"); err != nil {
		t.Fatal(err)
	}
	const q = "SELECT COUNT(*) FROM people WHERE age > 40"
	for range 2 { // fresh, then from the release cache
		var n int64
		if err := conn.QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	_, err := conn.Exec(ctx, "SELECT age FROM people")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		t.Fatalf("row-level read: %v, want an error", err)
	}
	if _, err := conn.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	after := scrape(t, p.adminAddr)

	delta := func(name string, labels map[string]string) float64 {
		return sample(after, name, labels) - sample(before, name, labels)
	}
	census := map[string]string{"dataset": "census"}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"ddp_statements_total", map[string]string{"class": "private", "outcome": "fresh"}, 1},
		{"ddp_statements_total", map[string]string{"class": "private", "outcome": "cached"}, 1},
		{"ddp_statements_total", map[string]string{"class": "private", "outcome": "refused"}, 1},
		{"ddp_refusals_total", map[string]string{"sqlstate": pgErr.Code}, 1},
		{"ddp_release_cache_hits_total", census, 1},
		{"ddp_epsilon_spent_total", census, 0.25},
	} {
		if got := delta(c.name, c.labels); got != c.want {
			t.Errorf("%s%v moved by %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// One fresh answer is at least one durable ledger write (its
	// reservation) and one backend aggregate.
	if got := delta("ddp_ledger_commit_seconds", nil); got < 1 {
		t.Errorf("ledger commits observed: %v", got)
	}
	if got := delta("ddp_ledger_commit_writes", nil); got < 1 {
		t.Errorf("ledger group sizes observed: %v", got)
	}
	if got := delta("ddp_backend_seconds", map[string]string{"op": "aggregate"}); got < 1 {
		t.Errorf("backend aggregates observed: %v", got)
	}
	// Per dataset only: no user label unless metrics.per_user.
	for _, m := range after["ddp_epsilon_spent_total"].GetMetric() {
		for _, l := range m.Label {
			if l.GetName() == "user" {
				t.Errorf("ε spent labelled with the user without metrics.per_user: %v", m)
			}
		}
	}
	conn.Close(ctx)
	deadline := time.Now().Add(5 * time.Second)
	for sample(scrape(t, p.adminAddr), "ddp_open_connections", map[string]string{"frontend": "postgres"}) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("open connections did not return to 0 after the client left")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAdminMetricsPGLedger: with the PostgreSQL ledger the ledger commit
// metrics move too: a fresh answer is two durable writes (its
// reservation, then its commit), each one write.
func TestAdminMetricsPGLedger(t *testing.T) {
	dsn := ledgerTestDSN(t)
	schema := ledgerTestSchema(t, dsn)
	p := serveDemoAdmin(t, func(pol *policies.Policy) {
		pol.Ledger.Driver, pol.Ledger.DSN, pol.Ledger.Schema = policies.LedgerPostgres, dsn, schema
	})
	conn := connectDemo(t, p.pgAddr)
	before := scrape(t, p.adminAddr)
	var n int64
	if err := conn.QueryRow(context.Background(), "SELECT COUNT(*) FROM people WHERE age > 50").Scan(&n); err != nil {
		t.Fatal(err)
	}
	after := scrape(t, p.adminAddr)
	for _, name := range []string{"ddp_ledger_commit_seconds", "ddp_ledger_commit_writes"} {
		if got := sample(after, name, nil) - sample(before, name, nil); got != 2 {
			t.Errorf("%s observed %v times for one fresh answer, want 2 (reserve, commit)", name, got)
		}
	}
	// Each PostgreSQL write carries one change.
	if f := after["ddp_ledger_commit_writes"]; f == nil || len(f.Metric) != 1 ||
		f.Metric[0].Histogram.GetSampleSum() != float64(f.Metric[0].Histogram.GetSampleCount()) {
		t.Errorf("ddp_ledger_commit_writes: %v, want every observation 1", f)
	}
}

// TestAdminMetricsPerUser: with metrics.per_user the ε counter carries
// the user.
func TestAdminMetricsPerUser(t *testing.T) {
	p := serveDemoAdmin(t, func(pol *policies.Policy) { pol.Metrics.PerUser = true })
	conn := connectDemo(t, p.pgAddr)
	var n int64
	if err := conn.QueryRow(context.Background(), "SELECT COUNT(*) FROM people WHERE age < 30").Scan(&n); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, p.adminAddr)
	if got := sample(fams, "ddp_epsilon_spent_total", map[string]string{"dataset": "census", "user": "analyst"}); got != 0.1 {
		t.Errorf("ε spent by analyst on census: %v, want the default 0.1", got)
	}
}

// TestAdminHealth: /healthz answers while the process runs; /readyz is
// ready with the backend up and says which check fails once the backend
// is closed, within its timeout.
func TestAdminHealth(t *testing.T) {
	p := serveDemoAdmin(t, nil)
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + p.adminAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/"); code != 200 || !strings.Contains(body, `href="/budget"`) {
		t.Errorf("/: %d %q", code, body)
	}
	if code, body := get("/healthz"); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := get("/readyz"); code != 200 || strings.TrimSpace(body) != "ready" {
		t.Errorf("/readyz: %d %q", code, body)
	}
	p.backend.Close()
	start := time.Now()
	code, body := get("/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "backend") || strings.Contains(body, "ledger") {
		t.Errorf("/readyz with the backend closed: %d %q", code, body)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("/readyz took %v", took)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz with the backend closed: %d", code)
	}
}

// TestMeteredLedger: ε spent counts the charges that stand — committed
// with an answer, or committed empty after a failure — and not refunded
// ones.
func TestMeteredLedger(t *testing.T) {
	led, err := ledger.Open(filepath.Join(t.TempDir(), "l.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	m := admin.NewMetrics(admin.MetricsOptions{})
	ml := meteredLedger{Ledger: led, m: m}
	ctx := context.Background()
	limit := budget.Budget{Epsilon: 10}
	charge := func(eps float64) budget.Reservation {
		r, err := ml.Charge(ctx, budget.Charge{User: "u", Dataset: "d", Cost: budget.Budget{Epsilon: eps}}, limit)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if _, err := charge(0.5).CommitDeferred("k1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := charge(0.25).Commit("", nil); err != nil { // a failure after the backend ran
		t.Fatal(err)
	}
	if err := charge(2).Refund(); err != nil {
		t.Fatal(err)
	}
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		byName[f.GetName()] = f
	}
	if got := sample(byName, "ddp_epsilon_spent_total", map[string]string{"dataset": "d"}); got != 0.75 {
		t.Errorf("ε spent %v, want 0.75 (0.5 answered + 0.25 failed; the refunded 2 not counted)", got)
	}
	acct, err := led.Account(ctx, "u", "d")
	if err != nil || acct.Spent.Epsilon != 0.75 {
		t.Errorf("the ledger has %v spent (%v): the metric and the ledger disagree", acct.Spent.Epsilon, err)
	}
}

// TestAdminMetricsMySQL: statements over the MySQL front end are counted
// the same way, and its open connections are exported under its name.
func TestAdminMetricsMySQL(t *testing.T) {
	p := serveDemoAdmin(t, func(pol *policies.Policy) { pol.Listen.MySQL = "127.0.0.1:0" })
	db, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo", p.myAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	before := scrape(t, p.adminAddr)
	var n int64
	if err := conn.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM people WHERE age < 25").Scan(&n); err != nil {
		t.Fatal(err)
	}
	after := scrape(t, p.adminAddr)
	fresh := map[string]string{"class": "private", "outcome": "fresh"}
	if d := sample(after, "ddp_statements_total", fresh) - sample(before, "ddp_statements_total", fresh); d != 1 {
		t.Errorf("private fresh statements moved by %v over MySQL, want 1", d)
	}
	if got := sample(after, "ddp_open_connections", map[string]string{"frontend": "mysql"}); got != 1 {
		t.Errorf("open MySQL connections: %v, want 1", got)
	}
}
