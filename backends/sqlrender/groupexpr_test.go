package sqlrender

import (
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// TestRenderGroupByExpressions: an expression key is selected as the
// expression and grouped by its position in the plain form (written
// twice, its literals would be two placeholders, which PostgreSQL does
// not take for the same expression); a column key stays a column;
// width_bucket is the CASE of exprtype.FormWidthBucket with the dialect's
// integer division.
func TestRenderGroupByExpressions(t *testing.T) {
	age := ir.Clamp{X: col("t", "age"), Lo: ir.Int(17), Hi: ir.Int(90)}
	bucket := ir.Func{Name: "width_bucket", Args: []ir.Expr{age, lit(ir.Int(0)), lit(ir.Int(100)), lit(ir.Int(10))}}
	q := &ir.BackendQuery{
		From:    ir.TableRef{Name: "t"},
		GroupBy: []ir.Expr{col("t", "sex"), bucket},
		Aggs:    []ir.BackendAgg{{Kind: ir.CountRows}},
	}
	tests := []struct {
		d     *Dialect
		parts []string
	}{
		{Postgres(), []string{
			`SELECT "t"."sex", (CASE WHEN (`,
			` THEN 0 WHEN (`,
			`) / (CAST($`, // integer division: / on PostgreSQL
			` GROUP BY "t"."sex", 2`,
		}},
		{MySQL(), []string{
			"SELECT `t`.`sex`, (CASE WHEN (",
			") DIV (", // MySQL's / would be a decimal
			" GROUP BY `t`.`sex`, 2",
		}},
		{SQLite(), []string{
			`SELECT "t"."sex", (CASE WHEN (`,
			`) / (`,
			` GROUP BY "t"."sex", 2`,
		}},
	}
	for _, tt := range tests {
		st, err := tt.d.Render(q)
		if err != nil {
			t.Fatalf("%s: %v", tt.d.Name, err)
		}
		for _, p := range tt.parts {
			if !strings.Contains(st.SQL, p) {
				t.Errorf("%s: %s\nlacks %q", tt.d.Name, st.SQL, p)
			}
		}
		// x < lo, x >= hi, n + 1, (x - lo) * n, hi - lo: the literals 0,
		// 100, 10 bound as placeholders, and the 1 of n + 1 and + 1.
		if n := strings.Count(st.SQL, "LEAST(") + strings.Count(st.SQL, "MIN("); n != 3 {
			t.Errorf("%s: the operand is written %d times, want 3 (two conditions and the quotient): %s", tt.d.Name, n, st.SQL)
		}
	}
	// The bounded form groups by the inner aliases and orders the window
	// by the keys.
	q.Unit, q.MaxRowsPerUnit = col("t", "u"), 2
	st, err := Postgres().Render(q)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.SQL, `GROUP BY "ddp_g1", "ddp_g2"`) || !strings.Contains(st.SQL, `AS "ddp_g2"`) {
		t.Errorf("bounded: %s", st.SQL)
	}
}

// TestRenderExactTextKeys: a text key (a CAST to text at the top, as the
// planner writes every text key) carries the dialect's binary collation,
// in the select list, in the bounded form's inner query and in its
// window order, so a case- or pad-insensitive column collation cannot
// merge two spellings into one group.
func TestRenderExactTextKeys(t *testing.T) {
	key := ir.Cast{X: col("t", "sex"), To: ir.CastText}
	tests := []struct {
		d    *Dialect
		want string
	}{
		{Postgres(), `(CAST("t"."sex" AS TEXT) COLLATE "C")`},
		{SQLite(), `(CAST("t"."sex" AS TEXT) COLLATE BINARY)`},
		{MySQL(), "CAST(`t`.`sex` AS CHAR)"}, // the session's binary no-pad collation
	}
	for _, tt := range tests {
		for _, rows := range []int{0, 3} {
			q := &ir.BackendQuery{
				From:           ir.TableRef{Name: "t"},
				Unit:           col("t", "id"),
				MaxRowsPerUnit: rows,
				GroupBy:        []ir.Expr{key},
				Aggs:           []ir.BackendAgg{{Kind: ir.CountRows}},
			}
			st, err := tt.d.Render(q)
			if err != nil {
				t.Fatalf("%s: %v", tt.d.Name, err)
			}
			want := 1
			if rows > 0 {
				want = 2 // projected and ordered by in the window
			}
			if n := strings.Count(st.SQL, tt.want); n != want {
				t.Errorf("%s (max rows %d): %d times %s, want %d: %s", tt.d.Name, rows, n, tt.want, want, st.SQL)
			}
			if tt.d.Name == "mysql" && strings.Contains(st.SQL, "COLLATE") {
				t.Errorf("mysql: %s", st.SQL)
			}
		}
	}
}
