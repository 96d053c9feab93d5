package sqlrender

import (
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// TestRenderCountDistinct: a text input (CAST to text, as the planner
// passes every text column) is counted in the exact collation — inside
// the bounded form the derived column carries it, and the window orders
// by it too —, the unit column bare; the bound applies before the count.
func TestRenderCountDistinct(t *testing.T) {
	q := &ir.BackendQuery{
		From: ir.TableRef{Name: "t"}, Unit: col("t", "u"), MaxRowsPerUnit: 2,
		GroupBy: []ir.Expr{col("t", "g")},
		Aggs: []ir.BackendAgg{
			{Kind: ir.CountDistinct, Expr: ir.Cast{X: col("t", "city"), To: ir.CastText}},
			{Kind: ir.CountDistinct, Column: pcol("t", "u")},
		},
	}
	plain := *q
	plain.MaxRowsPerUnit = 0
	tests := []struct {
		name    string
		dialect *Dialect
		q       *ir.BackendQuery
		want    string
	}{
		{"postgres bounded", Postgres(), q,
			`SELECT "ddp_g1", COUNT(DISTINCT "ddp_a1"), COUNT(DISTINCT "ddp_a2") FROM (SELECT "t"."g" AS "ddp_g1", (CAST("t"."city" AS TEXT) COLLATE "C") AS "ddp_a1", "t"."u" AS "ddp_a2", ` +
				`ROW_NUMBER() OVER (PARTITION BY "t"."u" ORDER BY "t"."g" NULLS FIRST, (CAST("t"."city" AS TEXT) COLLATE "C") NULLS FIRST, "t"."u" NULLS FIRST) AS "ddp_rn" FROM "t") AS "ddp_b" WHERE "ddp_rn" <= 2 GROUP BY "ddp_g1"`},
		{"postgres plain", Postgres(), &plain,
			`SELECT "t"."g", COUNT(DISTINCT (CAST("t"."city" AS TEXT) COLLATE "C")), COUNT(DISTINCT "t"."u") FROM "t" GROUP BY "t"."g"`},
		{"sqlite bounded", SQLite(), q,
			`SELECT "ddp_g1", COUNT(DISTINCT "ddp_a1"), COUNT(DISTINCT "ddp_a2") FROM (SELECT "t"."g" AS "ddp_g1", (CAST("t"."city" AS TEXT) COLLATE BINARY) AS "ddp_a1", "t"."u" AS "ddp_a2", ` +
				`ROW_NUMBER() OVER (PARTITION BY "t"."u" ORDER BY "t"."g", (CAST("t"."city" AS TEXT) COLLATE BINARY), "t"."u") AS "ddp_rn" FROM "t") AS "ddp_b" WHERE "ddp_rn" <= 2 GROUP BY "ddp_g1"`},
		{"sqlite plain", SQLite(), &plain,
			`SELECT "t"."g", COUNT(DISTINCT (CAST("t"."city" AS TEXT) COLLATE BINARY)), COUNT(DISTINCT "t"."u") FROM "t" GROUP BY "t"."g"`},
		// MySQL: CAST AS CHAR has the session's binary no-pad collation.
		{"mysql plain", MySQL(), &plain,
			"SELECT `t`.`g`, COUNT(DISTINCT CAST(`t`.`city` AS CHAR)), COUNT(DISTINCT `t`.`u`) FROM `t` GROUP BY `t`.`g`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := tt.dialect.Render(tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if st.SQL != tt.want {
				t.Errorf("SQL\n got  %s\n want %s", st.SQL, tt.want)
			}
		})
	}
	bad := &ir.BackendQuery{From: ir.TableRef{Name: "t"}, Aggs: []ir.BackendAgg{{Kind: ir.CountDistinct}}}
	if _, err := Postgres().Render(bad); err == nil {
		t.Error("a distinct count without an input rendered")
	}
}
