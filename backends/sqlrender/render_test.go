package sqlrender

import (
	"fmt"
	"math"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

func col(q, n string) ir.ColumnRef   { return ir.ColumnRef{Qualifier: q, Name: n} }
func pcol(q, n string) *ir.ColumnRef { c := col(q, n); return &c }
func lit(v ir.Value) ir.Literal      { return ir.Literal{Value: v} }

// countWhere: an unbounded COUNT(*) with a comparison and an ILIKE.
var countWhere = &ir.BackendQuery{
	From: ir.TableRef{Schema: "public", Name: "visits", Alias: "v"},
	Where: ir.And{
		L: ir.Compare{Op: ir.OpGe, L: col("v", "age"), R: lit(ir.Int(18))},
		R: ir.Like{X: col("v", "name"), Pattern: lit(ir.String("O'Brien%")), CaseInsensitive: true},
	},
	Aggs: []ir.BackendAgg{{Kind: ir.CountRows}},
}

// boundedJoin: every aggregate kind, a join, GROUP BY and k = 2.
var boundedJoin = &ir.BackendQuery{
	From:           ir.TableRef{Name: "visits", Alias: "v"},
	Joins:          []ir.Join{{Table: ir.TableRef{Name: "cities", Alias: "c"}, Left: col("v", "city_id"), Right: col("c", "id")}},
	Where:          ir.IsNull{X: col("v", "note"), Not: true},
	Unit:           col("v", "uid"),
	MaxRowsPerUnit: 2,
	GroupBy:        []ir.Expr{col("c", "region")},
	Aggs: []ir.BackendAgg{
		{Kind: ir.CountRows},
		{Kind: ir.CountValues, Column: pcol("v", "age")},
		{Kind: ir.SumClamped, Column: pcol("v", "age"), Lo: 0, Hi: 100},
		{Kind: ir.SumClamped, Column: pcol("v", "spend"), Lo: -5.5, Hi: 10, Quantum: 0.25},
	},
}

// plainGroup: an unbounded GROUP BY with an integer sum.
var plainGroup = &ir.BackendQuery{
	From:    ir.TableRef{Name: "t"},
	GroupBy: []ir.Expr{col("t", "a"), col("t", "b")},
	Aggs:    []ir.BackendAgg{{Kind: ir.SumClamped, Column: pcol("t", "x"), Lo: -3, Hi: 7}},
}

// boundedExpr: COUNT and SUM over expressions (as the planner lowers
// them: columns clamped where computed with), k = 2.
var boundedExpr = &ir.BackendQuery{
	From: ir.TableRef{Name: "t"}, Unit: col("t", "u"), MaxRowsPerUnit: 2,
	Aggs: []ir.BackendAgg{
		{Kind: ir.CountValues, Expr: ir.Case{Whens: []ir.When{{Cond: ir.Compare{Op: ir.OpEq, L: col("t", "sex"), R: lit(ir.String("F"))}, Then: lit(ir.Int(1))}}}},
		{Kind: ir.SumClamped, Expr: ir.Arith{Op: ir.OpMul, L: ir.Clamp{X: col("t", "age"), Lo: ir.Int(0), Hi: ir.Int(120)}, R: lit(ir.Int(2))}, Lo: 0, Hi: 240},
	},
}

func TestRenderQuery(t *testing.T) {
	tests := []struct {
		name     string
		dialect  *Dialect
		q        *ir.BackendQuery
		wantSQL  string
		wantArgs []any
	}{
		{
			name: "postgres count", dialect: Postgres(), q: countWhere,
			wantSQL:  `SELECT COUNT(*) FROM "public"."visits" AS "v" WHERE (("v"."age" >= CAST($1 AS BIGINT)) AND (("v"."name" COLLATE "default") ILIKE CAST($2 AS TEXT)))`,
			wantArgs: []any{int64(18), "O'Brien%"},
		},
		{
			name: "sqlite count", dialect: SQLite(), q: countWhere,
			wantSQL:  `SELECT COUNT(*) FROM "public"."visits" AS "v" WHERE (("v"."age" >= ?) AND (LOWER("v"."name") LIKE LOWER(?) ESCAPE '\'))`,
			wantArgs: []any{int64(18), "O'Brien%"},
		},
		{
			name: "postgres bounded", dialect: Postgres(), q: boundedJoin,
			wantSQL: `SELECT "ddp_g1", COUNT(*), COUNT("ddp_a2"), ` +
				`CAST(LEAST(GREATEST(COALESCE(SUM(CASE WHEN "ddp_a3" IS NOT NULL THEN CAST(LEAST(GREATEST("ddp_a3", CAST($1 AS BIGINT)), CAST($2 AS BIGINT)) AS BIGINT) END), 0), -9223372036854775808), 9223372036854775807) AS BIGINT), ` +
				`CAST(LEAST(GREATEST(COALESCE(SUM(CASE WHEN "ddp_a4" IS NOT NULL THEN CAST(FLOOR(LEAST(GREATEST((CASE WHEN (CAST("ddp_a4" AS DOUBLE PRECISION) > -6.25e-02) AND (CAST("ddp_a4" AS DOUBLE PRECISION) < 6.25e-02) THEN 0 ELSE CAST("ddp_a4" AS DOUBLE PRECISION) END), CAST($3 AS DOUBLE PRECISION)), CAST($4 AS DOUBLE PRECISION)) / CAST($5 AS DOUBLE PRECISION) + 0.5) AS BIGINT) END), 0), -9223372036854775808), 9223372036854775807) AS BIGINT) ` +
				`FROM (SELECT "c"."region" AS "ddp_g1", "v"."age" AS "ddp_a2", "v"."age" AS "ddp_a3", "v"."spend" AS "ddp_a4", ` +
				`ROW_NUMBER() OVER (PARTITION BY "v"."uid" ORDER BY "c"."region" NULLS FIRST, "v"."age" NULLS FIRST, "v"."spend" NULLS FIRST) AS "ddp_rn" ` +
				`FROM "visits" AS "v" JOIN "cities" AS "c" ON "v"."city_id" = "c"."id" WHERE ("v"."note" IS NOT NULL)) AS "ddp_b" ` +
				`WHERE "ddp_rn" <= 2 GROUP BY "ddp_g1"`,
			wantArgs: []any{int64(0), int64(100), -5.5, 10.0, 0.25},
		},
		{
			name: "sqlite bounded", dialect: SQLite(), q: boundedJoin,
			wantSQL: `SELECT "ddp_g1", COUNT(*), COUNT("ddp_a2"), ` +
				`CAST(COALESCE(ddp_saturating_sum(CAST(MIN(MAX("ddp_a3", ?), ?) AS INTEGER)), 0) AS INTEGER), ` +
				`CAST(COALESCE(ddp_saturating_sum(CAST(FLOOR(MIN(MAX((CASE WHEN (CAST("ddp_a4" AS REAL) > -6.25e-02) AND (CAST("ddp_a4" AS REAL) < 6.25e-02) THEN 0 ELSE CAST("ddp_a4" AS REAL) END), ?), ?) / ? + 0.5) AS INTEGER)), 0) AS INTEGER) ` +
				`FROM (SELECT "c"."region" AS "ddp_g1", "v"."age" AS "ddp_a2", "v"."age" AS "ddp_a3", "v"."spend" AS "ddp_a4", ` +
				`ROW_NUMBER() OVER (PARTITION BY "v"."uid" ORDER BY "c"."region", "v"."age", "v"."spend") AS "ddp_rn" ` +
				`FROM "visits" AS "v" JOIN "cities" AS "c" ON "v"."city_id" = "c"."id" WHERE ("v"."note" IS NOT NULL)) AS "ddp_b" ` +
				`WHERE "ddp_rn" <= 2 GROUP BY "ddp_g1"`,
			wantArgs: []any{int64(0), int64(100), -5.5, 10.0, 0.25},
		},
		{
			name: "postgres plain group", dialect: Postgres(), q: plainGroup,
			wantSQL: `SELECT "t"."a", "t"."b", CAST(LEAST(GREATEST(COALESCE(SUM(CASE WHEN "t"."x" IS NOT NULL THEN CAST(LEAST(GREATEST("t"."x", CAST($1 AS BIGINT)), CAST($2 AS BIGINT)) AS BIGINT) END), 0), -9223372036854775808), 9223372036854775807) AS BIGINT) ` +
				`FROM "t" GROUP BY "t"."a", "t"."b"`,
			wantArgs: []any{int64(-3), int64(7)},
		},
		{
			name: "sqlite plain group", dialect: SQLite(), q: plainGroup,
			wantSQL:  `SELECT "t"."a", "t"."b", CAST(COALESCE(ddp_saturating_sum(CAST(MIN(MAX("t"."x", ?), ?) AS INTEGER)), 0) AS INTEGER) FROM "t" GROUP BY "t"."a", "t"."b"`,
			wantArgs: []any{int64(-3), int64(7)},
		},
		{
			// The argument is rendered in the inner select and again in the
			// window's ORDER BY (its literals bound twice); the outer SUM
			// reads the alias.
			name: "postgres bounded expression", dialect: Postgres(), q: boundedExpr,
			wantSQL: `SELECT COUNT("ddp_a1"), ` +
				`CAST(LEAST(GREATEST(COALESCE(SUM(CASE WHEN "ddp_a2" IS NOT NULL THEN CAST(LEAST(GREATEST("ddp_a2", CAST($1 AS BIGINT)), CAST($2 AS BIGINT)) AS BIGINT) END), 0), -9223372036854775808), 9223372036854775807) AS BIGINT) ` +
				`FROM (SELECT (CASE WHEN ("t"."sex" = CAST($3 AS TEXT)) THEN CAST($4 AS BIGINT) END) AS "ddp_a1", ((CASE WHEN "t"."age" IS NULL THEN NULL ELSE CAST(LEAST(GREATEST("t"."age", CAST($5 AS BIGINT)), CAST($6 AS BIGINT)) AS BIGINT) END) * CAST($7 AS BIGINT)) AS "ddp_a2", ` +
				`ROW_NUMBER() OVER (PARTITION BY "t"."u" ORDER BY (CASE WHEN ("t"."sex" = CAST($8 AS TEXT)) THEN CAST($9 AS BIGINT) END) NULLS FIRST, ((CASE WHEN "t"."age" IS NULL THEN NULL ELSE CAST(LEAST(GREATEST("t"."age", CAST($10 AS BIGINT)), CAST($11 AS BIGINT)) AS BIGINT) END) * CAST($12 AS BIGINT)) NULLS FIRST) AS "ddp_rn" ` +
				`FROM "t") AS "ddp_b" WHERE "ddp_rn" <= 2`,
			wantArgs: []any{int64(0), int64(240), "F", int64(1), int64(0), int64(120), int64(2), "F", int64(1), int64(0), int64(120), int64(2)},
		},
		{
			name: "sqlite plain expression", dialect: SQLite(), q: &ir.BackendQuery{From: ir.TableRef{Name: "t"}, Aggs: boundedExpr.Aggs[1:]},
			wantSQL:  `SELECT CAST(COALESCE(ddp_saturating_sum(CAST(MIN(MAX((CAST(MIN(MAX("t"."age", CAST(? AS INTEGER)), CAST(? AS INTEGER)) AS INTEGER) * ?), ?), ?) AS INTEGER)), 0) AS INTEGER) FROM "t"`,
			wantArgs: []any{int64(0), int64(120), int64(2), int64(0), int64(240)},
		},
		{
			name: "bounded count without columns orders by the unit", dialect: SQLite(),
			q:       &ir.BackendQuery{From: ir.TableRef{Name: "t"}, Unit: col("t", "u"), MaxRowsPerUnit: 1, Aggs: []ir.BackendAgg{{Kind: ir.CountRows}}},
			wantSQL: `SELECT COUNT(*) FROM (SELECT ROW_NUMBER() OVER (PARTITION BY "t"."u" ORDER BY "t"."u") AS "ddp_rn" FROM "t") AS "ddp_b" WHERE "ddp_rn" <= 1`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := tt.dialect.Render(tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if st.SQL != tt.wantSQL {
				t.Errorf("SQL\n got  %s\n want %s", st.SQL, tt.wantSQL)
			}
			if fmt.Sprintf("%#v", st.Args) != fmt.Sprintf("%#v", tt.wantArgs) && len(st.Args)+len(tt.wantArgs) > 0 {
				t.Errorf("args\n got  %#v\n want %#v", st.Args, tt.wantArgs)
			}
		})
	}
}

func TestRenderExpr(t *testing.T) {
	// Every node type: NOT, NOT BETWEEN, arithmetic, unary minus, a real
	// literal, NOT IN with NULL, OR, round (emulated on PostgreSQL).
	numeric := ir.Or{
		L: ir.Not{X: ir.Between{X: ir.Arith{Op: ir.OpMul, L: col("t", "a"), R: ir.Neg{X: lit(ir.Int(2))}}, Lo: lit(ir.Float(1.5)), Hi: lit(ir.Int(3)), Not: true}},
		R: ir.In{X: ir.Func{Name: "round", Args: []ir.Expr{col("t", "f")}}, List: []ir.Expr{lit(ir.Int(1)), lit(ir.Null())}, Not: true},
	}
	// A quoted qualifier, a boolean literal, NOT LIKE with a function
	// pattern, one-argument COALESCE, trim, two-argument COALESCE.
	text := ir.And{
		L: ir.And{
			L: ir.Compare{Op: ir.OpEq, L: col(`we"ird`, "x"), R: lit(ir.Bool(true))},
			R: ir.Like{X: ir.Func{Name: "coalesce", Args: []ir.Expr{col("t", "s")}}, Pattern: ir.Func{Name: "upper", Args: []ir.Expr{lit(ir.String("ab"))}}, Not: true},
		},
		R: ir.Compare{Op: ir.OpNe, L: ir.Func{Name: "trim", Args: []ir.Expr{col("t", "s")}}, R: ir.Func{Name: "coalesce", Args: []ir.Expr{col("t", "s"), lit(ir.String("z"))}}},
	}
	// ILIKE negated, sums and differences, ceil/floor/abs/length.
	misc := ir.And{
		L: ir.Like{X: col("t", "s"), Pattern: lit(ir.String(`a\%`)), Not: true, CaseInsensitive: true},
		R: ir.Compare{Op: ir.OpLt, L: ir.Arith{Op: ir.OpAdd, L: ir.Func{Name: "ceil", Args: []ir.Expr{col("t", "f")}}, R: ir.Func{Name: "floor", Args: []ir.Expr{col("t", "f")}}},
			R: ir.Arith{Op: ir.OpSub, L: ir.Func{Name: "abs", Args: []ir.Expr{col("t", "a")}}, R: ir.Func{Name: "length", Args: []ir.Expr{col("t", "s")}}}},
	}
	// CASE with two arms and no ELSE, and with a NULL arm and an ELSE.
	cases := ir.Or{
		L: ir.Compare{Op: ir.OpGt, L: ir.Case{Whens: []ir.When{
			{Cond: ir.Compare{Op: ir.OpGt, L: col("t", "a"), R: lit(ir.Int(5))}, Then: lit(ir.Int(1))},
			{Cond: col("t", "b"), Then: col("t", "a")},
		}}, R: lit(ir.Int(0))},
		R: ir.Compare{Op: ir.OpEq, L: ir.Case{Whens: []ir.When{{Cond: lit(ir.Bool(false)), Then: lit(ir.Null())}}, Else: col("t", "s")}, R: lit(ir.String("x"))},
	}
	// GREATEST with a literal (the fallback of each column), LEAST of
	// columns only (each in the COALESCE of the others), NULLIF.
	choose := ir.And{
		L: ir.Compare{Op: ir.OpGt, L: ir.Func{Name: "greatest", Args: []ir.Expr{col("t", "a"), lit(ir.Int(3)), col("t", "b")}},
			R: ir.Func{Name: "least", Args: []ir.Expr{col("t", "a"), col("t", "b")}}},
		R: ir.IsNull{X: ir.Func{Name: "nullif", Args: []ir.Expr{col("t", "a"), lit(ir.Int(0))}}},
	}
	// Integer and real quotients and a remainder, each over NULLIF(b, 0).
	div := ir.Or{
		L: ir.Compare{Op: ir.OpGt, L: ir.Arith{Op: ir.OpDiv, L: col("t", "a"), R: col("t", "b")}, R: ir.Arith{Op: ir.OpRealDiv, L: col("t", "a"), R: lit(ir.Int(2))}},
		R: ir.Compare{Op: ir.OpEq, L: ir.Arith{Op: ir.OpMod, L: col("t", "a"), R: lit(ir.Int(3))}, R: lit(ir.Int(1))},
	}
	// substr, left, right: PostgreSQL takes int4 positions, SQLite has
	// no LEFT or RIGHT.
	strs := ir.And{
		L: ir.Compare{Op: ir.OpEq, L: ir.Func{Name: "substr", Args: []ir.Expr{col("t", "s"), lit(ir.Int(2)), lit(ir.Int(3))}}, R: ir.Func{Name: "left", Args: []ir.Expr{col("t", "s"), lit(ir.Int(4))}}},
		R: ir.Compare{Op: ir.OpEq, L: ir.Func{Name: "right", Args: []ir.Expr{col("t", "s"), lit(ir.Int(5))}}, R: ir.Func{Name: "replace", Args: []ir.Expr{col("t", "s"), lit(ir.String("a")), lit(ir.String(""))}}},
	}
	// || and concat (NULLs skipped: each argument COALESCEd to '').
	cat := ir.Compare{Op: ir.OpEq, L: ir.Func{Name: "textcat", Args: []ir.Expr{col("t", "s"), lit(ir.String("x"))}},
		R: ir.Func{Name: "concat", Args: []ir.Expr{lit(ir.String("y")), col("t", "s")}}}
	// The three lowered casts.
	casts := ir.And{
		L: ir.Compare{Op: ir.OpEq, L: ir.Cast{X: col("t", "a"), To: ir.CastText}, R: lit(ir.String("3"))},
		R: ir.Compare{Op: ir.OpGt, L: ir.Cast{X: col("t", "f"), To: ir.CastBigint}, R: ir.Cast{X: col("t", "a"), To: ir.CastDouble}},
	}
	tests := []struct {
		name     string
		dialect  *Dialect
		e        ir.Expr
		wantSQL  string
		wantArgs []any
	}{
		{"postgres strings", Postgres(), strs,
			`((SUBSTR("t"."s", CAST(CAST($1 AS BIGINT) AS INTEGER), CAST(CAST($2 AS BIGINT) AS INTEGER)) = LEFT("t"."s", CAST(CAST($3 AS BIGINT) AS INTEGER))) AND (RIGHT("t"."s", CAST(CAST($4 AS BIGINT) AS INTEGER)) = REPLACE(("t"."s" COLLATE "default"), CAST($5 AS TEXT), CAST($6 AS TEXT))))`,
			[]any{int64(2), int64(3), int64(4), int64(5), "a", ""}},
		{"sqlite strings", SQLite(), strs,
			`((SUBSTR("t"."s", ?, ?) = SUBSTR("t"."s", 1, ?)) AND (SUBSTR("t"."s", -(?)) = REPLACE("t"."s", ?, ?)))`,
			[]any{int64(2), int64(3), int64(4), int64(5), "a", ""}},
		{"mysql strings", MySQL(), strs,
			"((SUBSTRING(`t`.`s`, ?, ?) = LEFT(`t`.`s`, ?)) AND (RIGHT(`t`.`s`, ?) = REPLACE(`t`.`s`, ?, ?)))",
			[]any{int64(2), int64(3), int64(4), int64(5), "a", ""}},
		{"postgres concat", Postgres(), cat,
			`(("t"."s" || CAST($1 AS TEXT)) = CONCAT(COALESCE(CAST($2 AS TEXT), ''), COALESCE("t"."s", '')))`,
			[]any{"x", "y"}},
		{"sqlite concat", SQLite(), cat,
			`(("t"."s" || ?) = CONCAT(COALESCE(?, ''), COALESCE("t"."s", '')))`,
			[]any{"x", "y"}},
		{"mysql concat", MySQL(), cat,
			"(CONCAT(`t`.`s`, ?) = CONCAT(COALESCE(?, ''), COALESCE(`t`.`s`, '')))",
			[]any{"x", "y"}},
		{"postgres casts", Postgres(), casts,
			`((CAST("t"."a" AS TEXT) = CAST($1 AS TEXT)) AND (CAST("t"."f" AS BIGINT) > CAST("t"."a" AS DOUBLE PRECISION)))`,
			[]any{"3"}},
		{"sqlite casts", SQLite(), casts,
			`((CAST("t"."a" AS TEXT) = ?) AND (CAST("t"."f" AS INTEGER) > CAST("t"."a" AS REAL)))`,
			[]any{"3"}},
		{"mysql casts", MySQL(), casts,
			"((CAST(`t`.`a` AS CHAR) = ?) AND (CAST(`t`.`f` AS SIGNED) > CAST(`t`.`a` AS DOUBLE)))",
			[]any{"3"}},
		{"postgres division", Postgres(), div,
			`((("t"."a" / NULLIF("t"."b", 0)) > (CAST("t"."a" AS DOUBLE PRECISION) / NULLIF(CAST(CAST($1 AS BIGINT) AS DOUBLE PRECISION), 0))) OR (("t"."a" % NULLIF(CAST($2 AS BIGINT), 0)) = CAST($3 AS BIGINT)))`,
			[]any{int64(2), int64(3), int64(1)}},
		{"sqlite division", SQLite(), div,
			`((("t"."a" / NULLIF("t"."b", 0)) > (CAST("t"."a" AS REAL) / NULLIF(CAST(? AS REAL), 0))) OR (("t"."a" % NULLIF(?, 0)) = ?))`,
			[]any{int64(2), int64(3), int64(1)}},
		{"mysql division", MySQL(), div,
			"(((`t`.`a` DIV NULLIF(`t`.`b`, 0)) > (CAST(`t`.`a` AS DOUBLE) / NULLIF(CAST(? AS DOUBLE), 0))) OR ((`t`.`a` % NULLIF(?, 0)) = ?))",
			[]any{int64(2), int64(3), int64(1)}},
		{"postgres choose", Postgres(), choose,
			`((GREATEST("t"."a", CAST($1 AS BIGINT), "t"."b") > LEAST("t"."a", "t"."b")) AND (NULLIF("t"."a", CAST($2 AS BIGINT)) IS NULL))`,
			[]any{int64(3), int64(0)}},
		{"sqlite choose", SQLite(), choose,
			`((MAX(COALESCE("t"."a", ?), ?, COALESCE("t"."b", ?)) > MIN(COALESCE("t"."a", "t"."b"), COALESCE("t"."b", "t"."a"))) AND (NULLIF("t"."a", ?) IS NULL))`,
			[]any{int64(3), int64(3), int64(3), int64(0)}},
		{"mysql choose", MySQL(), choose,
			"((GREATEST(COALESCE(`t`.`a`, ?), ?, COALESCE(`t`.`b`, ?)) > LEAST(COALESCE(`t`.`a`, `t`.`b`), COALESCE(`t`.`b`, `t`.`a`))) AND (NULLIF(`t`.`a`, ?) IS NULL))",
			[]any{int64(3), int64(3), int64(3), int64(0)}},
		{"postgres case", Postgres(), cases,
			`(((CASE WHEN ("t"."a" > CAST($1 AS BIGINT)) THEN CAST($2 AS BIGINT) WHEN "t"."b" THEN "t"."a" END) > CAST($3 AS BIGINT)) OR ((CASE WHEN CAST($4 AS BOOLEAN) THEN NULL ELSE "t"."s" END) = CAST($5 AS TEXT)))`,
			[]any{int64(5), int64(1), int64(0), false, "x"}},
		{"sqlite case", SQLite(), cases,
			`(((CASE WHEN ("t"."a" > ?) THEN ? WHEN "t"."b" THEN "t"."a" END) > ?) OR ((CASE WHEN ? THEN NULL ELSE "t"."s" END) = ?))`,
			[]any{int64(5), int64(1), int64(0), int64(0), "x"}},
		{"mysql case", MySQL(), cases,
			"(((CASE WHEN (`t`.`a` > ?) THEN ? WHEN `t`.`b` THEN `t`.`a` END) > ?) OR ((CASE WHEN ? THEN NULL ELSE `t`.`s` END) = ?))",
			[]any{int64(5), int64(1), int64(0), false, "x"}},
		{"postgres numeric", Postgres(), numeric,
			`((NOT (("t"."a" * (-CAST($1 AS BIGINT))) NOT BETWEEN CAST($2 AS DOUBLE PRECISION) AND CAST($3 AS BIGINT))) OR ((SIGN(CAST("t"."f" AS DOUBLE PRECISION)) * FLOOR(ABS(CAST("t"."f" AS DOUBLE PRECISION)) + 0.5)) NOT IN (CAST($4 AS BIGINT), NULL)))`,
			[]any{int64(2), 1.5, int64(3), int64(1)}},
		{"sqlite numeric", SQLite(), numeric,
			`((NOT (("t"."a" * (-?)) NOT BETWEEN ? AND ?)) OR (ROUND("t"."f") NOT IN (?, NULL)))`,
			[]any{int64(2), 1.5, int64(3), int64(1)}},
		{"postgres text", Postgres(), text,
			`((("we""ird"."x" = CAST($1 AS BOOLEAN)) AND (("t"."s" COLLATE "default") NOT LIKE UPPER(CAST($2 AS TEXT)))) AND (BTRIM("t"."s") <> COALESCE("t"."s", CAST($3 AS TEXT))))`,
			[]any{true, "ab", "z"}},
		{"sqlite text", SQLite(), text,
			`((("we""ird"."x" = ?) AND ("t"."s" NOT LIKE UPPER(?) ESCAPE '\')) AND (TRIM("t"."s") <> COALESCE("t"."s", ?)))`,
			[]any{int64(1), "ab", "z"}},
		{"postgres misc", Postgres(), misc,
			`((("t"."s" COLLATE "default") NOT ILIKE CAST($1 AS TEXT)) AND ((CEIL("t"."f") + FLOOR("t"."f")) < (ABS("t"."a") - CAST(LENGTH("t"."s") AS BIGINT))))`,
			[]any{`a\%`}},
		{"sqlite misc", SQLite(), misc,
			`((LOWER("t"."s") NOT LIKE LOWER(?) ESCAPE '\') AND ((CEIL("t"."f") + FLOOR("t"."f")) < (ABS("t"."a") - CAST(LENGTH("t"."s") AS INTEGER))))`,
			[]any{`a\%`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := tt.dialect.RenderExpr(tt.e)
			if err != nil {
				t.Fatal(err)
			}
			if st.SQL != tt.wantSQL {
				t.Errorf("SQL\n got  %s\n want %s", st.SQL, tt.wantSQL)
			}
			if fmt.Sprintf("%#v", st.Args) != fmt.Sprintf("%#v", tt.wantArgs) {
				t.Errorf("args\n got  %#v\n want %#v", st.Args, tt.wantArgs)
			}
		})
	}
}

func TestRenderErrors(t *testing.T) {
	count := []ir.BackendAgg{{Kind: ir.CountRows}}
	where := func(e ir.Expr) *ir.BackendQuery {
		return &ir.BackendQuery{From: ir.TableRef{Name: "t"}, Where: e, Aggs: count}
	}
	sum := func(lo, hi, q float64) *ir.BackendQuery {
		return &ir.BackendQuery{From: ir.TableRef{Name: "t"}, Aggs: []ir.BackendAgg{{Kind: ir.SumClamped, Column: pcol("t", "x"), Lo: lo, Hi: hi, Quantum: q}}}
	}
	tests := []struct {
		name    string
		dialect *Dialect
		q       *ir.BackendQuery
		want    *sqlerr.Code // nil: no error
	}{
		{"param", Postgres(), where(ir.Compare{Op: ir.OpEq, L: col("t", "a"), R: ir.Param{Index: 1}}), &sqlerr.Internal},
		{"aggregate node", Postgres(), where(ir.Compare{Op: ir.OpEq, L: ir.Aggregate{Func: ir.AggCount}, R: lit(ir.Int(1))}), &sqlerr.Internal},
		{"output ref", SQLite(), where(ir.OutputRef{Index: 0}), &sqlerr.Internal},
		{"function outside the whitelist", SQLite(), where(ir.Func{Name: "sleep", Args: []ir.Expr{lit(ir.Int(1))}}), &sqlerr.Internal},
		{"wrong arity", SQLite(), where(ir.Func{Name: "lower", Args: nil}), &sqlerr.Internal},
		{"empty IN", Postgres(), where(ir.In{X: col("t", "a")}), &sqlerr.Internal},
		{"NaN literal", Postgres(), where(ir.Compare{Op: ir.OpLt, L: col("t", "a"), R: lit(ir.Float(math.NaN()))}), &sqlerr.InvalidParameterValue},
		{"dangling escape", SQLite(), where(ir.Like{X: col("t", "s"), Pattern: lit(ir.String(`ab\`))}), &sqlerr.InvalidParameterValue},
		{"escaped backslash is fine", SQLite(), where(ir.Like{X: col("t", "s"), Pattern: lit(ir.String(`ab\\`))}), nil},
		{"bound without unit", Postgres(), &ir.BackendQuery{From: ir.TableRef{Name: "t"}, MaxRowsPerUnit: 1, Aggs: count}, &sqlerr.Internal},
		{"no aggregate", Postgres(), &ir.BackendQuery{From: ir.TableRef{Name: "t"}}, &sqlerr.Internal},
		{"count values without column", Postgres(), &ir.BackendQuery{From: ir.TableRef{Name: "t"}, Aggs: []ir.BackendAgg{{Kind: ir.CountValues}}}, &sqlerr.Internal},
		{"unordered bounds", Postgres(), sum(5, 1, 0), &sqlerr.Internal},
		{"sum of both a column and an expression", Postgres(), &ir.BackendQuery{From: ir.TableRef{Name: "t"}, Aggs: []ir.BackendAgg{{Kind: ir.SumClamped, Column: pcol("t", "x"), Expr: col("t", "x"), Hi: 1}}}, &sqlerr.Internal},
		{"fractional integer bounds", Postgres(), sum(0, 1.5, 0), &sqlerr.Internal},
		{"negative quantum", Postgres(), sum(0, 1, -1), &sqlerr.Internal},
		{"bounds too large for quantum", Postgres(), sum(0, 1e6, 1e-12), &sqlerr.Internal},
		{"largest exact bounds", Postgres(), sum(-(1 << 53), 1<<53, 0), nil},
		// round renders its argument twice: 40 nested rounds would be 2^40
		// copies. Rendering stops at the size cap instead.
		{"exponential round", Postgres(), where(ir.Compare{Op: ir.OpGt, L: nestRound(col("t", "f"), 40), R: lit(ir.Int(0))}), &sqlerr.ProgramLimitExceeded},
		{"clamp with mixed bounds", Postgres(), where(ir.Compare{Op: ir.OpGt, L: ir.Clamp{X: col("t", "f"), Lo: ir.Int(0), Hi: ir.Float(1)}, R: lit(ir.Int(0))}), &sqlerr.Internal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.dialect.Render(tt.q)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if !sqlerr.HasCode(err, *tt.want) {
				t.Fatalf("got %v, want code %s", err, tt.want.Name)
			}
		})
	}
}

func nestRound(e ir.Expr, n int) ir.Expr {
	for range n {
		e = ir.Func{Name: "round", Args: []ir.Expr{e}}
	}
	return e
}

func TestQuoteIdent(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a", `"a"`},
		{`a"b`, `"a""b"`},
		{`"`, `""""`},
		{"", `""`},
	}
	for _, tt := range tests {
		if got := Postgres().QuoteIdent(tt.in); got != tt.want {
			t.Errorf("QuoteIdent(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	backquote := SQLite()
	backquote.IdentQuote = '`'
	if got := backquote.QuoteIdent("a`b"); got != "`a``b`" {
		t.Errorf("backquoted: %s", got)
	}
}

// TestRenderLeftJoin: LEFT JOIN and the null-safe equality in each
// dialect's spelling (MariaDB has no IS NOT DISTINCT FROM; SQLite's IS
// compares NULLs as equal).
func TestRenderLeftJoin(t *testing.T) {
	q := &ir.BackendQuery{
		From: ir.TableRef{Name: "checkins", Alias: "t0"},
		Joins: []ir.Join{
			{Table: ir.TableRef{Name: "cells", Alias: "t1"}, Left: col("t0", "cell"), Right: col("t1", "cell"), Outer: true},
			{Table: ir.TableRef{Name: "boroughs", Alias: "t2"}, Left: col("t1", "borough"), Right: col("t2", "name"), NullSafe: true},
		},
		GroupBy: []ir.Expr{col("t2", "name")},
		Aggs:    []ir.BackendAgg{{Kind: ir.CountRows}},
	}
	for _, tc := range []struct {
		d    *Dialect
		want string
	}{
		{Postgres(), `SELECT "t2"."name", COUNT(*) FROM "checkins" AS "t0" LEFT JOIN "cells" AS "t1" ON "t0"."cell" = "t1"."cell" JOIN "boroughs" AS "t2" ON "t1"."borough" IS NOT DISTINCT FROM "t2"."name" GROUP BY "t2"."name"`},
		{SQLite(), `SELECT "t2"."name", COUNT(*) FROM "checkins" AS "t0" LEFT JOIN "cells" AS "t1" ON "t0"."cell" = "t1"."cell" JOIN "boroughs" AS "t2" ON "t1"."borough" IS "t2"."name" GROUP BY "t2"."name"`},
		{MySQL(), "SELECT `t2`.`name`, COUNT(*) FROM `checkins` AS `t0` LEFT JOIN `cells` AS `t1` ON `t0`.`cell` = `t1`.`cell` JOIN `boroughs` AS `t2` ON `t1`.`borough` <=> `t2`.`name` GROUP BY `t2`.`name`"},
	} {
		st, err := tc.d.Render(q)
		if err != nil {
			t.Fatalf("%s: %v", tc.d.Name, err)
		}
		if st.SQL != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.d.Name, st.SQL, tc.want)
		}
	}
}
