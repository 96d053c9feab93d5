package session

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestMinResponsePadsPrivateAnswers: with listen.min_response_ms, every
// private answer — fresh, cached, or an error raised while answering it —
// takes at least that long from the statement's arrival, while session
// statements, EXPLAIN, refusals and local answers are not held back.
func TestMinResponsePadsPrivateAnswers(t *testing.T) {
	const pad = 300 * time.Millisecond
	f := sqliteFixture(t)
	f.p.current().pol.Listen.MinResponseMS = int(pad / time.Millisecond)
	ctx := context.Background()
	timed := func(sql string) (time.Duration, error) {
		t.Helper()
		start := time.Now()
		_, err := query(f.s, ctx, sql)
		return time.Since(start), err
	}

	private := []struct{ name, sql string }{
		{"fresh", "SELECT COUNT(*) FROM people WHERE age > 30"},
		{"cached repeat", "SELECT COUNT(*) FROM people WHERE age > 30"},
		{"fresh grouped", "SELECT sex, COUNT(*) FROM people GROUP BY sex"},
	}
	for _, p := range private {
		d, err := timed("SET ddp.epsilon = 1; " + p.sql)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		if d < pad {
			t.Errorf("%s private answer took %v, want at least %v", p.name, d, pad)
		}
	}
	// Spend the rest of alice's budget (5 in all, 2 spent), then a private
	// query that fails on the budget: held back too.
	for i := range 3 {
		if _, err := timed(fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age > %d", 40+i)); err != nil {
			t.Fatal(err)
		}
	}
	d, err := timed("SELECT COUNT(*) FROM people WHERE age > 60")
	if !sqlerr.HasCode(err, sqlerr.BudgetExhausted) {
		t.Fatalf("want the budget exhausted, got %v", err)
	}
	if d < pad {
		t.Errorf("a private query's error took %v, want at least %v", d, pad)
	}

	// Not private: not held back (half the padding leaves room for a slow
	// machine; a padded answer takes all of it).
	for _, sql := range []string{
		"SET ddp.epsilon = 0.5",
		"SHOW ddp.epsilon",
		"EXPLAIN SELECT COUNT(*) FROM people",
		"SELECT 1",
		"SELECT age FROM people", // refused at plan time: no data touched
	} {
		d, _ := timed(sql)
		if d >= pad/2 {
			t.Errorf("%q took %v: a statement that is not a private answer was padded", sql, d)
		}
	}
}

// TestMinResponseCancel: a cancel that arrives while a finished answer is
// held back yields the cancel error, not the answer, and no earlier than
// the padding: the response does not tell whether the backend had
// finished when the client cancelled.
func TestMinResponseCancel(t *testing.T) {
	const pad = 300 * time.Millisecond
	f := sqliteFixture(t)
	f.p.current().pol.Listen.MinResponseMS = int(pad / time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	// The SQLite answer is ready within milliseconds; the cancel comes
	// while it is held.
	time.AfterFunc(pad/3, cancel)
	start := time.Now()
	_, err := query(f.s, ctx, "SELECT COUNT(*) FROM people WHERE age > 25")
	if d := time.Since(start); d < pad {
		t.Errorf("answered after %v, want at least %v", d, pad)
	}
	if !sqlerr.HasCode(err, sqlerr.QueryCanceled) {
		t.Fatalf("want the cancel error, got %v", err)
	}
	// It was charged: a repeat is the stored release, free.
	rs := mustQuery(t, f.s, "SELECT COUNT(*) FROM people WHERE age > 25")
	if spent, _ := f.led.Spent("alice", "census"); spent.Epsilon == 0 || len(rs) != 1 {
		t.Fatalf("spent %+v after the cancelled answer, want it charged", spent)
	}
}

// TestMinResponseBothFrontEnds: the padding lives in the session core, so
// the PostgreSQL and MySQL adapters — simple and prepared statements —
// both hold private answers back.
func TestMinResponseBothFrontEnds(t *testing.T) {
	const pad = 300 * time.Millisecond
	f := sqliteFixture(t)
	f.p.current().pol.Listen.MinResponseMS = int(pad / time.Millisecond)
	ctx := context.Background()
	held := func(name string, run func() error) {
		t.Helper()
		start := time.Now()
		if err := run(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := time.Since(start); d < pad {
			t.Errorf("%s: answered after %v, want at least %v", name, d, pad)
		}
	}

	pg, err := f.p.PGHandler().NewSession(ctx, "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	held("pg simple", func() error {
		err := pg.Query(ctx, "SELECT COUNT(*) FROM people WHERE age > 33", &Collector{})
		return err
	})
	prep, err := pg.Prepare(ctx, "SELECT COUNT(*) FROM people WHERE age > $1", nil)
	if err != nil {
		t.Fatal(err)
	}
	held("pg prepared", func() error {
		err := pg.Execute(ctx, prep, []ir.Value{ir.Int(34)}, &Collector{})
		return err
	})

	my, err := f.p.MySQLHandler().NewSession(ctx, 1, "alice", "test")
	if err != nil {
		t.Fatal(err)
	}
	held("mysql simple", func() error {
		err := my.Query(ctx, "SELECT COUNT(*) FROM people WHERE age > 35", &Collector{})
		return err
	})
	mprep, err := my.Prepare(ctx, "SELECT COUNT(*) FROM people WHERE age > ?")
	if err != nil {
		t.Fatal(err)
	}
	held("mysql prepared", func() error {
		err := my.Execute(ctx, mprep, []ir.Value{ir.Int(36)}, &Collector{})
		return err
	})
}
