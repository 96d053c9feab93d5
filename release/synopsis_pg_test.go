package release_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/postgres"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// TestSynopsisPostgres runs the synopsis release on PostgreSQL (the
// histogram query rendered in its dialect, NULLs and out-of-domain values
// included, a unit with two rows bounded to one) and checks charge-once
// and the exact total.
func TestSynopsisPostgres(t *testing.T) {
	dsn := os.Getenv("DDP_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("DDP_TEST_POSTGRES_DSN is not set: skipping the PostgreSQL synopsis test")
	}
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	schema := fmt.Sprintf("ddp_synopsis_%d_%d", os.Getpid(), rand.Uint32())
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE SCHEMA %s; CREATE TABLE %s.staff (id INTEGER, salary INTEGER); INSERT INTO %s.staff VALUES ", schema, schema, schema)
	for i := range synStaff {
		if i > 0 {
			b.WriteString(", ")
		}
		if v, ok := synSalary(i); ok {
			fmt.Fprintf(&b, "(%d, %d)", i, v)
		} else {
			fmt.Fprintf(&b, "(%d, NULL)", i)
		}
	}
	// Unit 1 has a second row: bounded to one row per unit, so it adds
	// nothing to the total.
	b.WriteString(", (1, 150)")
	if _, err := db.Exec(b.String()); err != nil {
		t.Fatalf("PostgreSQL at DDP_TEST_POSTGRES_DSN: %v", err)
	}
	t.Cleanup(func() { db.Exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE") })

	t.Setenv("DDP_TEST_RELEASE_PASSWORD", "pw")
	dir := t.TempDir()
	text := fmt.Sprintf(synPolicy, dsn, filepath.Join(dir, "ledger.db"), 10)
	text = strings.Replace(text, "driver: sqlite", "driver: postgres", 1)
	text = strings.Replace(text, "      staff:\n", "      staff:\n        schema: "+schema+"\n", 1)
	pol, err := policies.LoadBytes(filepath.Join(dir, "policy.yaml"), []byte(text))
	if err != nil {
		t.Fatalf("policy: %v", err)
	}
	be, err := postgres.Open(context.Background(), dsn, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	led, err := ledger.Open(pol.Ledger.Path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := led.Check(); err != nil {
			t.Errorf("ledger check: %v", err)
		}
		led.Close()
		be.Close()
	})
	e := release.New(be, led, release.Options{Source: noise.SeededSource(5)})
	p := planner.New(pol)
	run := func(q string) *release.Result {
		t.Helper()
		q = strings.Replace(q, "FROM staff", "FROM "+schema+".staff", 1)
		stmts, err := parser.Parse(parser.Postgres, q)
		if err != nil {
			t.Fatal(err)
		}
		u := pol.User("alice")
		pl, err := p.Plan(planner.Request{User: u, Epsilon: 2, Dialect: "postgres", Statement: &stmts[0]})
		if err != nil || pl.Synopsis == nil {
			t.Fatalf("%s: %v (synopsis %v)", q, err, pl != nil && pl.Synopsis != nil)
		}
		res, err := e.Run(context.Background(), u, pl)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return res
	}
	first := run("SELECT COUNT(*) FROM staff WHERE salary <= 100")
	rest := run("SELECT COUNT(*) FROM staff WHERE salary > 100")
	if first.Cached || first.Charged.Epsilon != 2 || !rest.Cached || rest.Charged.Epsilon != 0 {
		t.Fatalf("charges: first %v/%+v, second %v/%+v", first.Cached, first.Charged, rest.Cached, rest.Charged)
	}
	if got, want := first.Rows[0][0].Int+rest.Rows[0][0].Int, synTruth(0, 199); got != want {
		t.Errorf("≤100 + >100 = %d, want the exact total %d", got, want)
	}
}
