package session

import (
	"context"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestCursors declares cursors over a private aggregate and over a catalog
// query, as psycopg's named cursors do, and pages through them: the
// private answer is charged once, at DECLARE, whatever FETCH does after.
func TestCursors(t *testing.T) {
	f := sqliteFixture(t)
	ctx := context.Background()
	if _, err := query(f.s, ctx, "DECLARE c CURSOR FOR SELECT sex, COUNT(*) FROM people GROUP BY sex"); !sqlerr.HasCode(err, sqlerr.NoActiveTransaction) {
		t.Fatalf("DECLARE outside a transaction: %v", err)
	}
	rs := mustQuery(t, f.s, `SET ddp.epsilon = 0.5; BEGIN; DECLARE "c" CURSOR FOR SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY sex`)
	if d := rs[2]; d.Tag != "DECLARE CURSOR" || d.Columns != nil || len(d.Notices) != 1 {
		t.Fatalf("DECLARE: %+v", d)
	}
	spent, _ := f.led.Spent("alice", "census")
	if spent.Epsilon != 0.5 {
		t.Fatalf("spent at DECLARE: %v", spent.Epsilon)
	}
	rs = mustQuery(t, f.s, "FETCH FORWARD 1 FROM c; FETCH ALL FROM c; FETCH 5 FROM c; FETCH ABSOLUTE 1 FROM c; MOVE BACKWARD ALL IN c; FETCH NEXT c")
	if rs[0].Tag != "FETCH 1" || len(rs[0].Columns) != 2 || rs[0].Columns[1].Type != TypeInt8 || rs[0].Rows[0][0].Str != "F" {
		t.Fatalf("FETCH 1: %+v", rs[0])
	}
	if rs[1].Tag != "FETCH 1" || rs[1].Rows[0][0].Str != "M" || rs[2].Tag != "FETCH 0" {
		t.Fatalf("FETCH ALL, FETCH past the end: %+v %+v", rs[1], rs[2])
	}
	if rs[3].Rows[0][0].Str != "F" || rs[4].Tag != "MOVE 0" || rs[5].Rows[0][0].Str != "F" {
		t.Fatalf("ABSOLUTE, MOVE BACKWARD, NEXT: %+v %+v %+v", rs[3], rs[4], rs[5])
	}
	if again, _ := f.led.Spent("alice", "census"); again.Epsilon != 0.5 {
		t.Fatalf("FETCH charged again: %v", again.Epsilon)
	}
	if _, err := query(f.s, ctx, "DECLARE c CURSOR FOR SELECT 1"); !sqlerr.HasCode(err, sqlerr.DuplicateCursor) {
		t.Fatalf("duplicate: %v", err)
	}
	// COMMIT closes it; a WITH HOLD cursor over the catalog survives.
	rs = mustQuery(t, f.s, "COMMIT; DECLARE k CURSOR WITH HOLD FOR SELECT relname FROM pg_catalog.pg_class WHERE relname = 'people'; FETCH 10 FROM k; CLOSE k")
	if rs[2].Tag != "FETCH 1" || rs[2].Rows[0][0].Str != "people" || rs[3].Tag != "CLOSE CURSOR" {
		t.Fatalf("catalog cursor: %+v", rs)
	}
	for _, q := range []string{"FETCH 1 FROM c", "CLOSE k"} {
		if _, err := query(f.s, ctx, q); !sqlerr.HasCode(err, sqlerr.InvalidCursorName) {
			t.Fatalf("%s after close: %v", q, err)
		}
	}
	// A row-level read is refused at DECLARE, as it is alone, and opens
	// nothing.
	if _, err := query(f.s, ctx, "BEGIN; DECLARE r CURSOR FOR SELECT age FROM people"); !sqlerr.HasCode(err, sqlerr.InsufficientPrivilege) {
		t.Fatalf("row-level cursor: %v", err)
	}
	if _, err := query(f.s, ctx, "FETCH 1 FROM r"); !sqlerr.HasCode(err, sqlerr.InvalidCursorName) {
		t.Fatalf("a refused cursor was opened: %v", err)
	}
	// psycopg2 closes the named cursor after the error: that works.
	mustQuery(t, f.s, "CLOSE r; ROLLBACK")
}
