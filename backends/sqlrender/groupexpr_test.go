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
