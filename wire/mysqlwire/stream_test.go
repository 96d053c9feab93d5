package mysqlwire

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// many writes n rows of one int8 column, one at a time, as a session
// streaming from its backend does.
func (s *fakeSession) many(arg string, w ir.RowWriter) error {
	arg, fail := strings.CutSuffix(arg, " fail")
	n, err := strconv.Atoi(arg)
	if err != nil {
		return err
	}
	if err := w.Columns([]ir.Column{{Name: "n", Type: ir.TypeInt8}}); err != nil {
		return err
	}
	for i := range n {
		if err := w.Row([]ir.Value{ir.Int(int64(i))}); err != nil {
			return err
		}
	}
	if fail {
		return sqlerr.New(sqlerr.BudgetExhausted, "budget exhausted")
	}
	return w.Complete(ir.Completion{Tag: "SELECT " + arg})
}

// A 100k-row answer reaches Vitess in batches, each with its fields: a
// first batch of about holdBytes, then batches of at most spoolBatch
// rows. It is never converted whole: converting the whole answer before
// the first callback (what the front end once did) fails the bounds.
func TestSpoolHandsVitessBatches(t *testing.T) {
	const n = 100_000
	var calls []*sqltypes.Result
	sp := &spool{send: func(r *sqltypes.Result) error { calls = append(calls, r); return nil }}
	if err := sp.Columns([]ir.Column{{Name: "n", Type: ir.TypeInt8}, {Name: "s", Type: ir.TypeText}}); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 0 {
		t.Fatalf("the fields went out before the first batch: %+v", calls)
	}
	for i := range n {
		if err := sp.Row([]ir.Value{ir.Int(int64(i)), ir.String("x")}); err != nil {
			t.Fatal(err)
		}
		if held := len(sp.batch); sp.sent && held >= spoolBatch {
			t.Fatalf("row %d: %d rows held by the spool after the first batch", i, held)
		}
		if !sp.sent && sp.held >= holdBytes {
			t.Fatalf("row %d: %d bytes held before the first batch", i, sp.held)
		}
	}
	if err := sp.Complete(ir.Completion{}); err != nil {
		t.Fatal(err)
	}
	got := 0
	if len(calls) < 2 {
		t.Fatalf("%d callbacks: the answer went out whole", len(calls))
	}
	first := 0
	for _, r := range calls[0].Rows {
		first += heldSize(r)
	}
	// The first batch is what held up to holdBytes: more than a later
	// batch, and no more than holdBytes and the row that reached it.
	if len(calls[0].Rows) <= spoolBatch || first-heldSize(calls[0].Rows[0]) >= holdBytes {
		t.Fatalf("first callback: %d rows, %d bytes held", len(calls[0].Rows), first)
	}
	for i, c := range calls {
		if (i > 0 && len(c.Rows) > spoolBatch) || len(c.Rows) == 0 || len(c.Fields) != 2 {
			t.Fatalf("callback %d carries %d rows and %d fields", i+1, len(c.Rows), len(c.Fields))
		}
		for _, r := range c.Rows {
			if v := r[0].ToString(); v != strconv.Itoa(got) {
				t.Fatalf("row %d arrived as %v", got, r[0])
			}
			got++
		}
	}
	if got != n {
		t.Fatalf("%d rows reached Vitess, want %d", got, n)
	}
}

// A statement that writes no columns is an OK packet.
func TestSpoolWithoutColumnsIsOK(t *testing.T) {
	var calls []*sqltypes.Result
	sp := &spool{send: func(r *sqltypes.Result) error { calls = append(calls, r); return nil }}
	if err := sp.Complete(ir.Completion{Tag: "SET"}); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || calls[0].Fields != nil || calls[0].Rows != nil {
		t.Fatalf("want one empty result (OK packet), got %+v", calls)
	}
}

// Through a real client: 100k streamed rows arrive whole and in order.
func TestStreamedRowsThroughTheClient(t *testing.T) {
	addr, _ := startFake(t, Config{})
	db := open(t, fmt.Sprintf("trusted:x@tcp(%s)/", addr))
	rows, err := db.Query("SELECT many 100000")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		if v != i {
			t.Fatalf("row %d holds %d", i, v)
		}
		i++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if i != 100_000 {
		t.Fatalf("%d rows, want 100000", i)
	}
}

// A prepared statement's rows (binary protocol) arrive whole when they
// come in a later callback than the fields: with more than 6 columns the
// NULL bitmap takes two bytes, laid out by the batch's fields.
func TestWidePreparedRows(t *testing.T) {
	addr, _ := startFake(t, Config{})
	db := open(t, fmt.Sprintf("trusted:x@tcp(%s)/?interpolateParams=false", addr))
	st, err := db.Prepare("SELECT wide FROM t WHERE a = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	vs := make([]any, 10)
	ptrs := make([]any, 10)
	for i := range vs {
		ptrs[i] = &vs[i]
	}
	if err := st.QueryRow(1).Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if fmt.Sprint(v) != strconv.Itoa(i) {
			t.Fatalf("column %d holds %v", i, v)
		}
	}
}

// An answer without rows still describes its columns; an answer that
// fails within its first batch has sent nothing (so the client gets an
// error packet, not a cut connection).
func TestSpoolEmptyAndEarlyFailure(t *testing.T) {
	var calls []*sqltypes.Result
	sp := &spool{send: func(r *sqltypes.Result) error { calls = append(calls, r); return nil }}
	if err := sp.Columns([]ir.Column{{Name: "n", Type: ir.TypeInt8}}); err != nil {
		t.Fatal(err)
	}
	if err := sp.Complete(ir.Completion{}); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || len(calls[0].Fields) != 1 || len(calls[0].Rows) != 0 {
		t.Fatalf("an empty answer: %+v", calls)
	}
	calls = nil
	sp = &spool{send: func(r *sqltypes.Result) error { calls = append(calls, r); return nil }}
	sp.Columns([]ir.Column{{Name: "n", Type: ir.TypeInt8}})
	for i := range 10 {
		sp.Row([]ir.Value{ir.Int(int64(i))})
	}
	if len(calls) != 0 {
		t.Fatalf("10 rows went out before the answer completed: %+v", calls)
	}
}

// Through a real client: a session that fails after a few rows, or after
// thousands (more than a batch, within holdBytes: a public table's backend
// failing at row 5,000), yields the session's error as an error packet,
// and the connection stays usable: the same session (no second one
// opened) answers the next statement.
func TestEarlyFailureIsAnErrorPacket(t *testing.T) {
	addr, h := startFake(t, Config{})
	db := open(t, fmt.Sprintf("trusted:x@tcp(%s)/", addr))
	db.SetMaxOpenConns(1)
	for _, n := range []int{5, 5000} {
		rows, err := db.Query(fmt.Sprintf("SELECT many %d fail", n))
		got := 0
		if err == nil {
			for rows.Next() {
				got++
			}
			err = rows.Err()
			rows.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "budget exhausted") {
			t.Fatalf("%d rows then a failure: err = %v after %d rows, want the session's error", n, err, got)
		}
		if got != 0 {
			t.Fatalf("%d rows then a failure: the client read %d rows before the error", n, got)
		}
		var one int
		if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("after %d rows then a failure: %v", n, err)
		}
		h.mu.Lock()
		sessions := len(h.ids)
		h.mu.Unlock()
		if sessions != 1 {
			t.Fatalf("after %d rows then a failure: %d sessions opened, want the first one still serving", n, sessions)
		}
	}
}

// Past holdBytes the rows have gone out and an error can only cut the
// connection: the client must see an error, never a short answer that
// looks complete.
func TestLateFailureIsNotAShortAnswer(t *testing.T) {
	addr, _ := startFake(t, Config{})
	db := open(t, fmt.Sprintf("trusted:x@tcp(%s)/", addr))
	rows, err := db.Query("SELECT many 100000 fail")
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for rows.Next() {
		got++
	}
	if rows.Err() == nil {
		t.Fatalf("a failed answer read as complete with %d of its rows", got)
	}
	rows.Close()
	var n int
	if err := db.QueryRow("SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("a new connection after the cut one: %v", err)
	}
}
