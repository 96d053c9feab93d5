package ir

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestBind(t *testing.T) {
	q := &Query{
		From:   TableRef{Name: "people"},
		Select: []SelectItem{{Agg: AggCount}},
		Where: And{
			L: Compare{Op: OpGt, L: ColumnRef{Name: "age"}, R: Param{Index: 1}},
			R: In{X: ColumnRef{Name: "sex"}, List: []Expr{Param{Index: 2}, Literal{Value: String("x")}}},
		},
		Having: Compare{Op: OpGt, L: Aggregate{Func: AggCount}, R: Param{Index: 3}},
	}
	if n := q.NumParams(); n != 3 {
		t.Fatalf("NumParams = %d, want 3", n)
	}
	b, err := q.Bind([]Value{Int(30), String("F"), Int(10)})
	if err != nil {
		t.Fatal(err)
	}
	want := `(("age" > 30) AND ("sex" IN ('F', 'x')))`
	if got := FormatExpr(b.Where); got != want {
		t.Fatalf("bound WHERE %s, want %s", got, want)
	}
	if got := FormatExpr(b.Having); got != "(count(*) > 10)" {
		t.Fatalf("bound HAVING %s", got)
	}
	// The original is untouched (plans are cached per prepared statement).
	if got := FormatExpr(q.Where); got != `(("age" > $1) AND ("sex" IN ($2, 'x')))` {
		t.Fatalf("Bind modified the query: %s", got)
	}
	var be *BindError
	if _, err := q.Bind([]Value{Int(1)}); !errors.As(err, &be) || be.Index != 2 {
		t.Fatalf("missing parameter: %v", err)
	}
}

// TestBindAggregateArguments: a parameter inside an aggregate's argument
// in the select list is counted and bound like one in WHERE.
func TestBindAggregateArguments(t *testing.T) {
	q := &Query{
		From:   TableRef{Name: "people"},
		Select: []SelectItem{{Agg: AggSum, ArgExpr: Arith{Op: OpMul, L: ColumnRef{Name: "age"}, R: Param{Index: 2}}}},
		Where:  Compare{Op: OpGt, L: ColumnRef{Name: "age"}, R: Param{Index: 1}},
	}
	if n := q.NumParams(); n != 2 {
		t.Fatalf("NumParams = %d, want 2", n)
	}
	b, err := q.Bind([]Value{Int(30), Int(52)})
	if err != nil {
		t.Fatal(err)
	}
	if got := FormatExpr(b.Select[0].ArgExpr); got != `("age" * 52)` {
		t.Fatalf("bound argument %s", got)
	}
	if got := FormatExpr(q.Select[0].ArgExpr); got != `("age" * $2)` {
		t.Fatalf("Bind modified the query: %s", got)
	}
}

func TestCanonicalDistinguishes(t *testing.T) {
	col := &ColumnRef{Qualifier: "t0", Name: "age"}
	base := BackendQuery{
		From:           TableRef{Name: "people", Alias: "t0"},
		Where:          Compare{Op: OpGt, L: *col, R: Literal{Value: Int(1)}},
		Unit:           ColumnRef{Qualifier: "t0", Name: "id"},
		MaxRowsPerUnit: 1,
		Aggs:           []BackendAgg{{Kind: SumClamped, Column: col, Lo: 0, Hi: 100}},
	}
	join := Join{Table: TableRef{Name: "cells", Alias: "t1"}, Left: ColumnRef{Qualifier: "t0", Name: "cell"}, Right: ColumnRef{Qualifier: "t1", Name: "cell"}}
	variants := []func(q *BackendQuery){
		func(q *BackendQuery) { q.Where = Compare{Op: OpGt, L: *col, R: Literal{Value: Float(1)}} },
		func(q *BackendQuery) { q.Where = Compare{Op: OpGt, L: *col, R: Literal{Value: String("1")}} },
		func(q *BackendQuery) { q.MaxRowsPerUnit = 2 },
		func(q *BackendQuery) { q.Aggs = []BackendAgg{{Kind: SumClamped, Column: col, Lo: 0, Hi: 99}} },
		func(q *BackendQuery) {
			q.Aggs = []BackendAgg{{Kind: SumClamped, Column: col, Lo: 0, Hi: 100, Quantum: 0.5}}
		},
		func(q *BackendQuery) { q.Aggs = []BackendAgg{{Kind: CountValues, Column: col}} },
		func(q *BackendQuery) { q.Aggs = []BackendAgg{{Kind: CountDistinct, Column: col}} },
		func(q *BackendQuery) {
			q.Aggs = []BackendAgg{{Kind: CountDistinct, Expr: Cast{X: *col, To: CastText}}}
		},
		func(q *BackendQuery) { q.GroupBy = []Expr{*col} },
		func(q *BackendQuery) { q.From.Schema = "other" },
		func(q *BackendQuery) { q.Where = nil },
		func(q *BackendQuery) { q.Joins = []Join{join} },
		func(q *BackendQuery) {
			q.Joins = []Join{{Table: join.Table, Left: join.Left, Right: join.Right, Outer: true}}
		},
		func(q *BackendQuery) {
			q.Joins = []Join{{Table: join.Table, Left: join.Left, Right: join.Right, NullSafe: true}}
		},
		// Aggregates over expressions: the expression is part of the text.
		func(q *BackendQuery) {
			q.Aggs = []BackendAgg{{Kind: SumClamped, Expr: Arith{Op: OpMul, L: Clamp{X: *col, Lo: Int(0), Hi: Int(100)}, R: Literal{Value: Int(1)}}, Lo: 0, Hi: 100}}
		},
		func(q *BackendQuery) {
			q.Aggs = []BackendAgg{{Kind: SumClamped, Expr: Arith{Op: OpMul, L: Clamp{X: *col, Lo: Int(0), Hi: Int(100)}, R: Literal{Value: Int(2)}}, Lo: 0, Hi: 100}}
		},
		func(q *BackendQuery) {
			q.Aggs = []BackendAgg{{Kind: CountValues, Expr: Arith{Op: OpAdd, L: *col, R: Literal{Value: Int(2)}}}}
		},
	}
	seen := map[string]int{base.Canonical(): -1}
	for i, v := range variants {
		q := base
		v(&q)
		c := q.Canonical()
		if j, dup := seen[c]; dup {
			t.Errorf("variant %d has the same canonical text as %d: %s", i, j, c)
		}
		seen[c] = i
	}
}

func TestCompareValues(t *testing.T) {
	ordered := []Value{Null(), Int(-3), Float(-2.5), Int(0), Float(0.5), Int(1), String("A"), String("a"), Bool(false), Bool(true)}
	for i := range ordered {
		for j := range ordered {
			got := CompareValues(ordered[i], ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("CompareValues(%v, %v) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	if CompareValues(Int(2), Float(2)) != 0 {
		t.Error("2 and 2.0 must compare equal")
	}
}

func TestQuoteString(t *testing.T) {
	if got := QuoteString("it's"); got != "'it''s'" {
		t.Fatalf("QuoteString = %s", got)
	}
}

// TestAppendSQL: AppendSQL appends exactly SQL() for values of every kind
// (release and cache keys are built with it and must not change).
func TestAppendSQL(t *testing.T) {
	values := []Value{Null(), Int(0), Int(-42), Int(math.MaxInt64), Float(0), Float(math.Copysign(0, -1)), Float(1.5), Float(1e300),
		Float(math.Inf(1)), Float(math.Inf(-1)), Float(math.NaN()), String(""), String("it's"), String("''"), Bool(true), Bool(false),
		Date(0), Date(-1), Timestamp(1_234_567_890_123), TimestampTZ(-5), {Kind: Kind(250)}}
	for _, v := range values {
		if got, want := string(v.AppendSQL([]byte("x"))), "x"+v.SQL(); got != want {
			t.Errorf("AppendSQL(%#v) = %q, want %q", v, got, want)
		}
	}
}

// TestQuoteIsStrconv: formatted names are quoted exactly as strconv.Quote
// quotes them (fingerprints and release keys contain them), for every
// single byte and for names around the plain-ASCII fast path.
func TestQuoteIsStrconv(t *testing.T) {
	names := []string{"", "age", "Age", "t0", "a b", `a"b`, `a\b`, "tab\there", "é", "日本", "\x7f", "\x00", "\xff", "x~", "~ ", " "}
	for c := 0; c < 256; c++ {
		names = append(names, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"z")
	}
	for _, s := range names {
		var b strings.Builder
		quote(&b, s)
		if got, want := b.String(), strconv.Quote(s); got != want {
			t.Errorf("quote(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestNullsOrderHigh: NULLS LAST sorts NULL above every value ascending
// and below every value descending (last both ways); NULLS FIRST the
// reverse; no clause leaves the dialect's default.
func TestNullsOrderHigh(t *testing.T) {
	for _, c := range []struct {
		n          NullsOrder
		desc, dflt bool
		want       bool
	}{
		{NullsLast, false, false, true}, {NullsLast, true, true, false},
		{NullsFirst, false, true, false}, {NullsFirst, true, false, true},
		{NullsDefault, false, true, true}, {NullsDefault, true, false, false},
	} {
		if got := c.n.High(c.desc, c.dflt); got != c.want {
			t.Errorf("%d.High(desc %v, default %v) = %v, want %v", c.n, c.desc, c.dflt, got, c.want)
		}
	}
}
