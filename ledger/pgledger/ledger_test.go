package pgledger

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

var ctx = context.Background()

func eps(e float64) budget.Budget { return budget.Budget{Epsilon: e} }

// spentText reads the stored NUMERIC totals as PostgreSQL prints them.
func spentText(t *testing.T, dsn, schema, user, dataset string) (string, string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var e, d string
	err = conn.QueryRow(ctx, fmt.Sprintf(`SELECT spent_epsilon::text, spent_delta::text FROM %s.budgets WHERE user_name=$1 AND dataset=$2`, schema),
		user, dataset).Scan(&e, &d)
	if err != nil {
		t.Fatal(err)
	}
	return e, d
}

func TestReserveCommitLookup(t *testing.T) {
	l, _, _ := newTest(t)
	r, err := l.Reserve(ctx, "alice", "census", budget.Budget{Epsilon: 0.5, Delta: 1e-6}, budget.Budget{Epsilon: 2, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	if r.Left != (budget.Budget{Epsilon: 1.5, Delta: 9e-6}) {
		t.Errorf("Left = %+v, want 1.5, 9e-6", r.Left)
	}
	if _, ok, _ := l.Lookup("k"); ok {
		t.Fatal("a release before commit")
	}
	p, err := l.Pending()
	if err != nil || len(p) != 1 || p[0].Replica != "r1" || p[0].User != "alice" || p[0].Cost.Epsilon != 0.5 {
		t.Fatalf("Pending = %+v, %v; want one of alice by r1", p, err)
	}
	out, err := r.Commit("k", []byte("noisy"))
	if err != nil || string(out) != "noisy" {
		t.Fatalf("Commit = %q, %v", out, err)
	}
	got, ok, err := l.Lookup("k")
	if err != nil || !ok || string(got) != "noisy" {
		t.Fatalf("Lookup = %q, %v, %v", got, ok, err)
	}
	if _, err := r.Commit("k", []byte("again")); !errors.Is(err, ledger.ErrResolved) {
		t.Errorf("second Commit: %v, want ErrResolved", err)
	}
	if err := r.Refund(); !errors.Is(err, ledger.ErrResolved) {
		t.Errorf("Refund after Commit: %v, want ErrResolved", err)
	}
	if s, _ := l.Spent("alice", "census"); s != (budget.Budget{Epsilon: 0.5, Delta: 1e-6}) {
		t.Errorf("Spent = %+v", s)
	}
	if p, _ := l.Pending(); len(p) != 0 {
		t.Errorf("pending after commit: %+v", p)
	}
	all, err := l.All()
	if err != nil || len(all) != 1 || all[0].Queries != 1 {
		t.Errorf("All = %+v, %v", all, err)
	}
}

// TestExactDecimals: amounts are exact decimals, as in the bbolt ledger:
// three charges of 0.1 fit a limit of 0.3 (in float64 they would not:
// 0.1+0.1+0.1 > 0.3), and a fourth of the smallest positive float64 does
// not fit.
func TestExactDecimals(t *testing.T) {
	l, dsn, schema := newTest(t)
	tenth := 0.1 // a variable: constant arithmetic in Go is exact
	if tenth+tenth+tenth <= 0.3 {
		t.Fatal("the premise of this test: float64 sums overshoot")
	}
	limit := budget.Budget{Epsilon: 0.3, Delta: 3e-7}
	for i := range 3 {
		r, err := l.Reserve(ctx, "bob", "d", budget.Budget{Epsilon: 0.1, Delta: 1e-7}, limit)
		if err != nil {
			t.Fatalf("charge %d of 0.1: %v", i+1, err)
		}
		if _, err := r.Commit("", nil); err != nil {
			t.Fatal(err)
		}
	}
	e, d := spentText(t, dsn, schema, "bob", "d")
	if re, _ := new(big.Rat).SetString(e); re.Cmp(big.NewRat(3, 10)) != 0 {
		t.Errorf("spent ε stored as %s, want exactly 0.3", e)
	}
	if rd, _ := new(big.Rat).SetString(d); rd.Cmp(big.NewRat(3, 10_000_000)) != 0 {
		t.Errorf("spent δ stored as %s, want exactly 3e-7", d)
	}
	_, err := l.Reserve(ctx, "bob", "d", eps(5e-324), limit)
	if !sqlerr.HasCode(err, sqlerr.BudgetExhausted) {
		t.Fatalf("a charge past the exact limit: %v, want BudgetExhausted", err)
	}
	if s, _ := l.Spent("bob", "d"); s.Epsilon != 0.3 {
		t.Errorf("a refused charge changed the total: %+v", s)
	}
}

func TestRefund(t *testing.T) {
	l, _, _ := newTest(t)
	limit := eps(1)
	r, err := l.Reserve(ctx, "u", "d", eps(0.7), limit)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Reserve(ctx, "u", "d", eps(0.7), limit); !sqlerr.HasCode(err, sqlerr.BudgetExhausted) {
		t.Fatalf("second 0.7 of 1: %v, want BudgetExhausted", err)
	}
	if err := r.Refund(); err != nil {
		t.Fatal(err)
	}
	if err := r.Refund(); !errors.Is(err, ledger.ErrResolved) {
		t.Errorf("second Refund: %v", err)
	}
	if s, _ := l.Spent("u", "d"); s.Epsilon != 0 {
		t.Errorf("Spent after refund = %v", s)
	}
	if _, err := l.Reserve(ctx, "u", "d", eps(0.7), limit); err != nil {
		t.Fatalf("after the refund: %v", err)
	}
}

// TestFirstWriterWins: two replicas that commit the same cache key
// answer with the first release.
func TestFirstWriterWins(t *testing.T) {
	l1, dsn, schema := newTest(t)
	l2 := openTest(t, dsn, schema, "r2")
	r1, err := l1.Reserve(ctx, "u", "d", eps(0.1), eps(1))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := l2.Reserve(ctx, "u", "d", eps(0.1), eps(1))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := r2.CommitDeferred("same", []byte("second-replica")); err != nil || string(out) != "second-replica" {
		t.Fatalf("first commit: %q %v", out, err)
	}
	out, err := r1.Commit("same", []byte("first-replica"))
	if err != nil || string(out) != "second-replica" {
		t.Fatalf("later commit answered %q (%v), want the published release", out, err)
	}
	for _, l := range []*Ledger{l1, l2} {
		if got, ok, _ := l.Lookup("same"); !ok || string(got) != "second-replica" {
			t.Errorf("Lookup = %q", got)
		}
	}
}

// TestConcurrentReplicasNeverOverspend: two ledgers (replicas) with 32
// goroutines each charge 0.1 to a budget with 0.45 of 1 left: exactly 4
// charges fit, and the stored total is exactly 0.95.
func TestConcurrentReplicasNeverOverspend(t *testing.T) {
	l1, dsn, schema := newTest(t)
	l2 := openTest(t, dsn, schema, "r2")
	limit := eps(1)
	r, err := l1.Reserve(ctx, "u", "d", eps(0.55), limit)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit("", nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, exhausted := 0, 0
	for i := range 64 {
		l := []*Ledger{l1, l2}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := l.Reserve(ctx, "u", "d", eps(0.1), limit)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
				if _, err := r.Commit(fmt.Sprint("k", i), []byte("x")); err != nil {
					t.Error(err)
				}
			case sqlerr.HasCode(err, sqlerr.BudgetExhausted):
				exhausted++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok != 4 || exhausted != 60 {
		t.Errorf("%d charged, %d refused; want 4 and 60", ok, exhausted)
	}
	e, _ := spentText(t, dsn, schema, "u", "d")
	if re, _ := new(big.Rat).SetString(e); re.Cmp(big.NewRat(95, 100)) != 0 {
		t.Errorf("spent = %s, want exactly 0.95", e)
	}
}

// TestCrashedReplicaStaysCharged: a replica that reserved and went away
// without committing leaves its reservation pending, named after it and
// charged; other replicas see the charge and cannot settle it.
func TestCrashedReplicaStaysCharged(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	dead, err := Open(ctx, dsn, Options{Schema: schema, Replica: "dead"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := dead.Reserve(ctx, "u", "d", eps(0.4), eps(1))
	if err != nil {
		t.Fatal(err)
	}
	dead.Close() // no commit: the process is gone
	live := openTest(t, dsn, schema, "live")
	p, err := live.Pending()
	if err != nil || len(p) != 1 || p[0].Replica != "dead" || p[0].ID != r.ID {
		t.Fatalf("Pending = %+v, %v", p, err)
	}
	if _, err := live.Reserve(ctx, "u", "d", eps(0.7), eps(1)); !sqlerr.HasCode(err, sqlerr.BudgetExhausted) {
		t.Fatalf("the dead replica's 0.4 is not charged: %v", err)
	}
	// Even a reservation object of the dead replica cannot be settled by
	// another process's ledger.
	r.l = live
	if err := r.Refund(); err == nil {
		t.Fatal("a live replica refunded a dead replica's reservation")
	}
	if s, _ := live.Spent("u", "d"); s.Epsilon != 0.4 {
		t.Errorf("Spent = %v, want 0.4", s)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	l, dsn, schema := newTest(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, fmt.Sprintf(`UPDATE %s.meta SET value = $1 WHERE key = 'schema_version'`, schema), fmt.Sprint(SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	_ = l
	_, err = Open(ctx, dsn, Options{Schema: schema})
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Open on a newer schema: %v, want ErrNewerSchema", err)
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf(`UPDATE %s.meta SET value = 'something else' WHERE key = 'format'`, schema)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, dsn, Options{Schema: schema}); err == nil {
		t.Fatal("Open adopted a foreign meta table")
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf(`UPDATE %s.meta SET value = $1 WHERE key = 'format'`, schema), formatName); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf(`UPDATE %s.meta SET value = $1 WHERE key = 'schema_version'`, schema), fmt.Sprint(SchemaVersion)); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentOpenCreatesOnce: replicas starting together on an empty
// schema all open it.
func TestConcurrentOpenCreatesOnce(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := Open(ctx, dsn, Options{Schema: schema})
			if err == nil {
				l.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// TestFlightSerialisesReplicas: while one replica holds a cache key,
// another waits for it.
func TestFlightSerialisesReplicas(t *testing.T) {
	l1, dsn, schema := newTest(t)
	l2 := openTest(t, dsn, schema, "r2")
	unlock, err := l1.Flight(ctx, "key")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{})
	go func() {
		u, err := l2.Flight(ctx, "key")
		if err != nil {
			t.Error(err)
			close(got)
			return
		}
		close(got)
		u()
	}()
	other, err := l2.Flight(ctx, "another key")
	if err != nil {
		t.Fatal(err)
	}
	other()
	select {
	case <-got:
		t.Fatal("the second replica took a held key")
	case <-time.After(200 * time.Millisecond):
	}
	unlock()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the key was not handed over")
	}
}

func TestNamesRefused(t *testing.T) {
	l, _, _ := newTest(t)
	for _, name := range []string{"a\x00b", "\xff"} {
		if _, err := l.Reserve(ctx, name, "d", eps(0.1), eps(1)); !sqlerr.HasCode(err, sqlerr.InvalidParameterValue) {
			t.Errorf("user %q: %v", name, err)
		}
	}
	if _, err := l.Reserve(ctx, "u", "d", eps(-1), eps(1)); !sqlerr.HasCode(err, sqlerr.InvalidParameterValue) {
		t.Errorf("negative cost: %v", err)
	}
}

func TestRatText(t *testing.T) {
	for _, tc := range []struct {
		in      *big.Rat
		want    string
		wantErr bool
	}{
		{big.NewRat(3, 10), "0.3", false},
		{big.NewRat(7, 1), "7", false},
		{big.NewRat(1, 8), "0.125", false},
		{big.NewRat(1, 3), "", true},
	} {
		got, err := ratText(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ratText(%s) = %q, %v", tc.in, got, err)
		}
		if err == nil {
			back, _ := new(big.Rat).SetString(got)
			if back.Cmp(tc.in) != 0 {
				t.Errorf("ratText(%s) = %s does not read back", tc.in, got)
			}
		}
	}
}
