package session

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// reloadPolicy loads testPolicy for the fixture's SQLite file with edit
// applied to its text, as serve's SIGHUP does, and swaps it in.
func reloadPolicy(t *testing.T, f *fixture, edit func(string) string) {
	t.Helper()
	old := f.p.Policy()
	text := edit(fmt.Sprintf(testPolicy, old.Backend.Driver, old.Backend.DSN, old.Ledger.Path, ""))
	pol, err := policies.LoadBytes(filepath.Join(t.TempDir(), "p.yaml"), []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	f.p.SetPolicy(pol)
}

// TestReloadAppliesToOpenSessions: after SetPolicy an open session uses the
// new policy from its next statement (budget), a prepared statement whose
// result shape changed is refused instead of sending rows the client was
// not told about, one whose shape did not change keeps working, and a user
// removed by the reload can run nothing more.
func TestReloadAppliesToOpenSessions(t *testing.T) {
	f := sqliteFixture(t)
	ctx := context.Background()
	same, err := f.s.Prepare(ctx, "SELECT sex, COUNT(*) AS n FROM people GROUP BY sex", nil)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := f.s.Prepare(ctx, "SELECT sex, SUM(age) AS s FROM people GROUP BY sex", nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Columns[1].Type != TypeInt8 {
		t.Fatalf("SUM of an integer column described as %v", sum.Columns[1].Type)
	}
	mustQuery(t, f.s, "SELECT COUNT(*) FROM people")

	// 1. Lower alice's budget below what she spent: refused now.
	reloadPolicy(t, f, func(s string) string {
		return strings.Replace(s, "census: {epsilon: 5}", "census: {epsilon: 0.15}", 1)
	})
	if _, err := query(f.s, ctx, "SELECT COUNT(*) FROM people WHERE age > 30"); !sqlerr.HasCode(err, sqlerr.BudgetExhausted) {
		t.Fatalf("after lowering the budget: %v, want budget exhausted", err)
	}

	// 2. Age becomes real: SUM(age) is now float8, COUNT unchanged.
	reloadPolicy(t, f, func(s string) string {
		return strings.Replace(s, "age: {type: integer", "age: {type: real", 1)
	})
	if _, err := execute(f.s, ctx, sum, nil); !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) || !strings.Contains(err.Error(), "cached plan must not change result type") {
		t.Fatalf("prepared SUM after its type changed: %v, want 0A000", err)
	}
	if _, err := execute(f.s, ctx, same, nil); err != nil {
		t.Fatalf("prepared COUNT after an unrelated change: %v", err)
	}

	// 3. alice is removed: every statement of her open session fails.
	reloadPolicy(t, f, func(s string) string { return strings.Replace(s, "name: alice", "name: bob", 1) })
	if _, err := query(f.s, ctx, "SHOW ddp.budget"); !sqlerr.HasCode(err, sqlerr.InvalidAuthorization) {
		t.Fatalf("removed user: %v, want 28000", err)
	}
	if _, ok := f.p.PGHandler().LookupUser("alice"); ok {
		t.Fatal("a removed user can still log in")
	}
}
