package ledger

import (
	"bytes"
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestReserveExactArithmetic charges sequences of costs and checks which
// ones fit. Expected outcomes are worked out by hand in decimal.
func TestReserveExactArithmetic(t *testing.T) {
	// The reason for exact accounting: in float64 the third 0.1 overshoots.
	// (Variables, because Go's constant arithmetic is exact.)
	tenth, threeTenths := 0.1, 0.3
	if tenth+tenth+tenth <= threeTenths {
		t.Fatal("float64 sums unexpectedly exact; the cases below would not test anything")
	}
	type step struct {
		cost policies.Budget
		ok   bool
	}
	repeat := func(n int, c policies.Budget, ok bool) []step {
		return slices.Repeat([]step{{c, ok}}, n)
	}
	tests := []struct {
		name      string
		limit     policies.Budget
		steps     []step
		wantSpent string // exact ε spent afterwards
		wantDelta string // exact δ spent afterwards
	}{
		{
			name:      "ten tenths fill 1.0, the eleventh fails",
			limit:     eps(1.0),
			steps:     append(repeat(10, eps(0.1), true), step{eps(0.1), false}),
			wantSpent: "1", wantDelta: "0",
		},
		{
			name:      "three tenths fill 0.3",
			limit:     eps(0.3),
			steps:     append(repeat(3, eps(0.1), true), step{eps(0.1), false}),
			wantSpent: "3/10", wantDelta: "0",
		},
		{
			name:      "0.1 then 0.2 fill 0.3",
			limit:     eps(0.3),
			steps:     []step{{eps(0.1), true}, {eps(0.2), true}, {eps(1e-9), false}},
			wantSpent: "3/10", wantDelta: "0",
		},
		{
			name:      "a failed charge leaves room for a smaller one",
			limit:     eps(0.5),
			steps:     []step{{eps(0.3), true}, {eps(0.3), false}, {eps(0.2), true}, {eps(0), true}},
			wantSpent: "1/2", wantDelta: "0",
		},
		{
			name:  "delta runs out while epsilon is left",
			limit: policies.Budget{Epsilon: 10, Delta: 3e-6},
			steps: append(repeat(3, policies.Budget{Epsilon: 0.1, Delta: 1e-6}, true),
				step{policies.Budget{Epsilon: 0.1, Delta: 1e-6}, false},
				step{policies.Budget{Epsilon: 0.1}, true}),
			wantSpent: "2/5", wantDelta: "3/1000000",
		},
		{
			name:      "zero limit refuses any positive cost",
			limit:     policies.Budget{},
			steps:     []step{{eps(1e-300), false}, {policies.Budget{Delta: 1e-300}, false}},
			wantSpent: "0", wantDelta: "0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			for i, s := range tt.steps {
				r, err := h.l.Reserve(context.Background(), "ann", "census", s.cost, tt.limit)
				if s.ok {
					if err != nil {
						t.Fatalf("step %d (%+v): %v", i, s.cost, err)
					}
					if _, err := r.Commit("", nil); err != nil {
						t.Fatalf("step %d commit: %v", i, err)
					}
					continue
				}
				if !sqlerr.HasCode(err, sqlerr.BudgetExhausted) {
					t.Fatalf("step %d (%+v): got %v, want BudgetExhausted", i, s.cost, err)
				}
			}
			got := h.spentExact("ann", "census")
			if got.eps.Cmp(rat(t, tt.wantSpent)) != 0 || got.delta.Cmp(rat(t, tt.wantDelta)) != 0 {
				t.Errorf("spent = (ε %v, δ %v), want (ε %s, δ %s)", got.eps, got.delta, tt.wantSpent, tt.wantDelta)
			}
		})
	}
}

func TestBudgetExhaustedMessage(t *testing.T) {
	tests := []struct {
		name  string
		limit policies.Budget
		first policies.Budget
		ask   policies.Budget
		want  string
	}{
		{
			name:  "epsilon",
			limit: eps(0.3), first: eps(0.25), ask: eps(0.1),
			want: "budget exhausted for dataset census: 0.05 ε left, this query needs 0.1; ask the DBA for more or lower SET ddp.epsilon",
		},
		{
			name:  "delta",
			limit: policies.Budget{Epsilon: 1, Delta: 1e-5}, first: policies.Budget{Epsilon: 0.1, Delta: 1e-5},
			ask:  policies.Budget{Epsilon: 0.1, Delta: 1e-6},
			want: "budget exhausted for dataset census: 0 δ left, this query needs 1e-06; ask the DBA for more δ, or declare a domain for the GROUP BY columns so that no δ is needed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			r, err := h.l.Reserve(context.Background(), "ann", "census", tt.first, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			_, err = h.l.Reserve(context.Background(), "ann", "census", tt.ask, tt.limit)
			var se *sqlerr.Error
			if !errors.As(err, &se) || se.Code != sqlerr.BudgetExhausted {
				t.Fatalf("got %v, want a BudgetExhausted *sqlerr.Error", err)
			}
			if se.Message != tt.want {
				t.Errorf("message\n got %q\nwant %q", se.Message, tt.want)
			}
			// The refused query charged nothing: only the first is there.
			if got, _ := h.l.Spent("ann", "census"); got != tt.first {
				t.Errorf("spent = %+v, want %+v", got, tt.first)
			}
			if p, _ := h.l.Pending(); len(p) != 1 || p[0].ID != r.ID {
				t.Errorf("pending = %+v, want only reservation %d", p, r.ID)
			}
		})
	}
}

func TestCommitIsOneShot(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	release := []byte("noisy rows \x00\xff")
	r, err := h.l.Reserve(ctx, "ann", "census", eps(0.2), eps(1))
	if err != nil {
		t.Fatal(err)
	}
	if r.Left != eps(0.8) {
		t.Errorf("Left = %+v, want ε 0.8", r.Left)
	}
	out, err := r.Commit("q1", release)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, release) {
		t.Errorf("Commit returned %q, want %q", out, release)
	}
	release[0] = 'X' // the ledger must have copied it
	if _, err := r.Commit("q1", []byte("other")); !errors.Is(err, ErrResolved) {
		t.Errorf("second Commit: %v, want ErrResolved", err)
	}
	if err := r.Refund(); !errors.Is(err, ErrResolved) {
		t.Errorf("Refund after Commit: %v, want ErrResolved", err)
	}
	if got, _ := h.l.Spent("ann", "census"); got != eps(0.2) {
		t.Errorf("spent = %+v, want ε 0.2", got)
	}
	got, ok, err := h.l.Lookup("q1")
	if err != nil || !ok || string(got) != "noisy rows \x00\xff" {
		t.Errorf("Lookup = %q, %v, %v; want the first release", got, ok, err)
	}
	if p, _ := h.l.Pending(); len(p) != 0 {
		t.Errorf("pending after commit: %+v", p)
	}
}

func TestRefundIsOneShot(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	r, err := h.l.Reserve(ctx, "ann", "census", eps(0.2), eps(0.3))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Refund(); err != nil {
		t.Fatal(err)
	}
	if err := r.Refund(); !errors.Is(err, ErrResolved) {
		t.Errorf("second Refund: %v, want ErrResolved", err)
	}
	if _, err := r.Commit("q1", []byte("rows")); !errors.Is(err, ErrResolved) {
		t.Errorf("Commit after Refund: %v, want ErrResolved", err)
	}
	if _, ok, _ := h.l.Lookup("q1"); ok {
		t.Error("Commit after Refund stored a release")
	}
	if got := h.spentExact("ann", "census"); got.eps.Sign() != 0 {
		t.Errorf("spent after refund = %v, want 0", got.eps)
	}
	// The whole limit is available again.
	if _, err := h.l.Reserve(ctx, "ann", "census", eps(0.3), eps(0.3)); err != nil {
		t.Errorf("reserve full limit after refund: %v", err)
	}
	all, _ := h.l.All()
	if len(all) != 1 || all[0].Queries != 1 {
		t.Errorf("accounts = %+v, want one with 1 query (the refunded one not counted)", all)
	}
}

func TestConcurrentCommitsServeFirstRelease(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	r1, err1 := h.l.Reserve(ctx, "ann", "census", eps(0.1), eps(1))
	r2, err2 := h.l.Reserve(ctx, "bob", "census", eps(0.1), eps(1))
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	if out, err := r1.Commit("same query", []byte("first")); err != nil || string(out) != "first" {
		t.Fatalf("first Commit = %q, %v", out, err)
	}
	out, err := r2.Commit("same query", []byte("second"))
	if err != nil || string(out) != "first" {
		t.Errorf("second Commit = %q, %v; want the first release", out, err)
	}
	// Both were charged: both backends ran.
	for _, u := range []string{"ann", "bob"} {
		if got, _ := h.l.Spent(u, "census"); got != eps(0.1) {
			t.Errorf("%s spent %+v, want ε 0.1", u, got)
		}
	}
}

func TestCommitValidation(t *testing.T) {
	h := newHarness(t)
	r, err := h.l.Reserve(context.Background(), "ann", "census", eps(0.1), eps(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit("q", nil); err == nil {
		t.Error("Commit with an empty release succeeded")
	}
	if _, err := r.Commit(string(make([]byte, 40000)), []byte("x")); err == nil {
		t.Error("Commit with an oversized key succeeded")
	}
	// Rejected arguments do not consume the reservation.
	if _, err := r.Commit("q", []byte("x")); err != nil {
		t.Errorf("Commit after rejected arguments: %v", err)
	}
}

func TestLookupMiss(t *testing.T) {
	h := newHarness(t)
	for _, key := range []string{"", "never stored"} {
		if got, ok, err := h.l.Lookup(key); ok || got != nil || err != nil {
			t.Errorf("Lookup(%q) = %q, %v, %v; want a miss", key, got, ok, err)
		}
	}
}

func TestReserveValidation(t *testing.T) {
	tests := []struct {
		name          string
		user, dataset string
		cost, limit   policies.Budget
		ctx           func() context.Context
		wantCode      *sqlerr.Code // nil: a context error
	}{
		{name: "NaN cost", user: "ann", dataset: "d", cost: eps(math.NaN()), limit: eps(1), wantCode: &sqlerr.InvalidParameterValue},
		{name: "negative cost", user: "ann", dataset: "d", cost: eps(-0.1), limit: eps(1), wantCode: &sqlerr.InvalidParameterValue},
		{name: "infinite delta", user: "ann", dataset: "d", cost: policies.Budget{Epsilon: 0.1, Delta: math.Inf(1)}, limit: eps(1), wantCode: &sqlerr.InvalidParameterValue},
		{name: "infinite limit", user: "ann", dataset: "d", cost: eps(0.1), limit: eps(math.Inf(1)), wantCode: &sqlerr.Internal},
		{name: "no user", user: "", dataset: "d", cost: eps(0.1), limit: eps(1), wantCode: &sqlerr.Internal},
		{name: "no dataset", user: "ann", dataset: "", cost: eps(0.1), limit: eps(1), wantCode: &sqlerr.Internal},
		{name: "canceled", user: "ann", dataset: "d", cost: eps(0.1), limit: eps(1), ctx: func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx()
			}
			_, err := h.l.Reserve(ctx, tt.user, tt.dataset, tt.cost, tt.limit)
			switch {
			case err == nil:
				t.Fatal("Reserve succeeded")
			case tt.wantCode == nil && !errors.Is(err, context.Canceled):
				t.Errorf("got %v, want context.Canceled", err)
			case tt.wantCode != nil && !sqlerr.HasCode(err, *tt.wantCode):
				t.Errorf("got %v, want code %s", err, tt.wantCode.Name)
			}
			if all, _ := h.l.All(); len(all) != 0 {
				t.Errorf("a refused reservation created accounts %+v", all)
			}
		})
	}
}

func TestPersistenceAcrossReopen(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	limit := policies.Budget{Epsilon: 1, Delta: 1e-5}
	r1, err := h.l.Reserve(ctx, "ann", "census", policies.Budget{Epsilon: 0.1, Delta: 1e-6}, limit)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r1.Commit("q1", []byte("rows 1")); err != nil {
		t.Fatal(err)
	}
	r2, err := h.l.Reserve(ctx, "ann", "census", eps(0.2), limit)
	if err != nil {
		t.Fatal(err)
	}

	h.reopen()

	if got := h.spentExact("ann", "census"); got.eps.Cmp(rat(t, "3/10")) != 0 || got.delta.Cmp(rat(t, "1/1000000")) != 0 {
		t.Errorf("spent after reopen = (ε %v, δ %v), want (3/10, 1/1000000)", got.eps, got.delta)
	}
	if got, ok, _ := h.l.Lookup("q1"); !ok || string(got) != "rows 1" {
		t.Errorf("Lookup after reopen = %q, %v", got, ok)
	}
	p, err := h.l.Pending()
	if err != nil {
		t.Fatal(err)
	}
	want := []PendingReservation{{ID: r2.ID, User: "ann", Dataset: "census", Cost: eps(0.2), Time: testClock, Replica: testReplica}}
	if !slices.EqualFunc(p, want, func(a, b PendingReservation) bool { return a == b && a.Time.Equal(b.Time) }) {
		t.Errorf("Pending = %+v, want %+v", p, want)
	}
	all, err := h.l.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Queries != 2 || !all[0].LastCharge.Equal(testClock) ||
		all[0].Spent != (policies.Budget{Epsilon: 0.3, Delta: 1e-6}) {
		t.Errorf("All = %+v, want ann/census, 2 queries, ε 0.3, δ 1e-6, last charge %v", all, testClock)
	}
	if left, _ := h.l.Left("ann", "census", limit); left != (policies.Budget{Epsilon: 0.7, Delta: 9e-6}) {
		t.Errorf("Left = %+v, want ε 0.7, δ 9e-6", left)
	}
	// IDs are never reused, even across restarts.
	r3, err := h.l.Reserve(ctx, "ann", "census", eps(0.1), limit)
	if err != nil {
		t.Fatal(err)
	}
	if r3.ID <= r2.ID {
		t.Errorf("new reservation ID %d after %d", r3.ID, r2.ID)
	}
}

func TestAccountKeysDoNotCollide(t *testing.T) {
	h := newHarness(t)
	// Pairs whose naive concatenation collides, and names that are not
	// valid UTF-8. Each gets a distinct cost i/100.
	accounts := []struct{ user, dataset string }{
		{"a", "bc"}, {"ab", "c"}, {"abc", "x"}, {"a\x00", "b"}, {"a", "\x00b"},
		{"\xff\xfe", "d"}, {"\x01", "\x01\x01"}, {"\x01\x01", "\x01"},
	}
	for i, a := range accounts {
		if _, err := h.l.Reserve(context.Background(), a.user, a.dataset, eps(float64(i+1)/100), eps(1)); err != nil {
			t.Fatalf("%q/%q: %v", a.user, a.dataset, err)
		}
	}
	all, err := h.l.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(accounts) {
		t.Fatalf("All has %d accounts, want %d", len(all), len(accounts))
	}
	for i, a := range accounts {
		if got, _ := h.l.Spent(a.user, a.dataset); got != eps(float64(i+1)/100) {
			t.Errorf("%q/%q spent %+v, want ε %v", a.user, a.dataset, got, float64(i+1)/100)
		}
	}
	p, _ := h.l.Pending()
	for i, a := range accounts {
		if p[i].User != a.user || p[i].Dataset != a.dataset {
			t.Errorf("pending %d is %q/%q, want %q/%q", i, p[i].User, p[i].Dataset, a.user, a.dataset)
		}
	}
}

// TestConcurrentReserve races 50 reservations of 0.01 against a limit of
// 0.25: exactly 25 fit, and the total is exactly 1/4.
func TestConcurrentReserve(t *testing.T) {
	h := newHarness(t)
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		ok, full  int
		unexpects []error
	)
	for range 50 {
		wg.Go(func() {
			_, err := h.l.Reserve(context.Background(), "ann", "census", eps(0.01), eps(0.25))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case sqlerr.HasCode(err, sqlerr.BudgetExhausted):
				full++
			default:
				unexpects = append(unexpects, err)
			}
		})
	}
	wg.Wait()
	if len(unexpects) > 0 || ok != 25 || full != 25 {
		t.Fatalf("%d succeeded, %d exhausted, errors %v; want 25, 25, none", ok, full, unexpects)
	}
	if got := h.spentExact("ann", "census"); got.eps.Cmp(rat(t, "1/4")) != 0 {
		t.Errorf("spent = %v, want exactly 1/4", got.eps)
	}
	if p, _ := h.l.Pending(); len(p) != 25 {
		t.Errorf("%d pending, want 25", len(p))
	}
}
