package backends_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/internal/backendtest"
	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestExpressionLanguageOnEveryBackend: WHERE clauses using CASE, NULLIF,
// GREATEST, LEAST, division and modulo, written by a PostgreSQL or a
// MySQL client, analysed by exprtype and run on SQLite, PostgreSQL and
// MariaDB, count the rows worked out by hand from the table below — with
// the client dialect's meaning of / (PostgreSQL truncates two integers,
// MySQL does not), no error for a zero divisor (NULL) and GREATEST/LEAST
// skipping NULLs everywhere.
func TestExpressionLanguageOnEveryBackend(t *testing.T) {
	table := uniqueTable("ddp_exprlang")
	cols := map[string]string{
		"sqlite":   "a INTEGER, b INTEGER, f REAL, s TEXT, w TEXT",
		"postgres": "a BIGINT, b BIGINT, f DOUBLE PRECISION, s TEXT, w TEXT",
		"mysql":    "a BIGINT, b BIGINT, f DOUBLE, s VARCHAR(10), w VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
	}
	rows := []string{
		"(7, 2, 2.5, 'x', 'hello')",
		"(-7, 2, -1.5, 'y', 'abcdef')",
		"(5, 0, 0.0, 'x', 'héllo wörld')", // a zero divisor
		"(6, -4, 10.0, NULL, NULL)",
		"(NULL, 3, NULL, 'z', 'aa')",
		"(1, NULL, 4.0, 'x', '')",
	}
	columns := func(c ir.ColumnRef) (exprtype.Column, error) {
		ref := ir.ColumnRef{Qualifier: "t", Name: c.Name}
		switch c.Name {
		case "a":
			return exprtype.Column{Ref: ref, Type: exprtype.Integer, HasBounds: true, Lo: ir.Int(-10), Hi: ir.Int(10)}, nil
		case "b":
			return exprtype.Column{Ref: ref, Type: exprtype.Integer, HasBounds: true, Lo: ir.Int(-5), Hi: ir.Int(5)}, nil
		case "f":
			return exprtype.Column{Ref: ref, Type: exprtype.Real, HasBounds: true, Lo: ir.Float(-100), Hi: ir.Float(100)}, nil
		case "s", "w":
			return exprtype.Column{Ref: ref, Type: exprtype.Text}, nil
		}
		return exprtype.Column{}, sqlerr.New(sqlerr.UndefinedColumn, "column %s does not exist", c.Name)
	}
	pg, my := parser.Postgres, parser.MySQL
	tests := []struct {
		d     parser.Dialect
		where string
		want  int64
	}{
		{pg, "a / b = 3", 1},           // 7/2 truncates to 3
		{my, "a / b = 3", 0},           // MySQL: 3.5
		{my, "a / b = 3.5", 1},         //
		{my, "a DIV b = 3", 1},         //
		{pg, "a / b IS NULL", 3},       // b = 0, a NULL, b NULL
		{my, "a / b IS NULL", 3},       //
		{pg, "a / (a - a) IS NULL", 6}, // every divisor is 0: no error
		{pg, "a % b = -1", 1},          // -7 % 2: the sign of the dividend
		{my, "a MOD b = 1 OR mod(a, b) = 2", 2},
		{pg, "f / b > 1", 1}, // 2.5 / 2; 0.0 / 0 is NULL
		{pg, "f / 0.5 = 5", 1},
		{pg, "CASE WHEN b = 0 THEN 100 WHEN a > 5 THEN a ELSE 0 END > 6", 2},
		{my, "CASE WHEN b = 0 THEN 100 WHEN a > 5 THEN a ELSE 0 END > 6", 2},
		{pg, "CASE s WHEN 'x' THEN 1 WHEN 'y' THEN 2 END = 1", 3},
		{my, "CASE s WHEN 'x' THEN 1 WHEN 'y' THEN 2 END = 2", 1},
		{pg, "greatest(a, b) >= 6", 2},
		{my, "GREATEST(a, b) >= 6", 2},
		{pg, "least(a, b) IS NULL", 0}, // NULLs are skipped
		{my, "LEAST(a, b) IS NULL", 0},
		{pg, "least(a, b, 0) = 0", 4},
		{pg, "CAST(a AS text) = '7' OR a::int * 2 = -14", 2},
		{my, "CAST(a AS CHAR) = '-7' OR CAST(a AS SIGNED) * 2 = 14", 2},
		{pg, "CAST(round(f) AS bigint) = 3 OR floor(f)::integer = -2", 2}, // 2.5 rounds away from zero; floor(-1.5)
		{my, "CAST(ROUND(f) AS SIGNED) = 3 OR CAST(FLOOR(f) AS SIGNED) = -2", 2},
		{pg, "a::double precision / 2 = 3.5", 1}, // no truncation once real
		{pg, "substr(w, 2, 3) = 'ell'", 1},
		{my, "SUBSTRING(w, 2, 3) = 'éll'", 1}, // characters, not bytes
		{pg, "substring(w FROM 2 FOR 3) = 'éll'", 1},
		{pg, "substr(w, 10) = ''", 4},    // a start past the end
		{my, "MID(w, 10) = 'ld'", 1},     //
		{pg, "left(w, 2) = 'ab'", 1},     //
		{my, "LEFT(w, 0) = ''", 5},       // every non-NULL w
		{pg, "right(w, 3) = 'def'", 1},   //
		{my, "RIGHT(w, 5) = 'wörld'", 1}, //
		{pg, "right(w, 10) = 'aa'", 1},   // more than the length: the whole text
		{pg, "replace(w, 'l', '') = 'heo'", 1},
		{my, "REPLACE(w, 'a', 'b') = 'bb'", 1},
		{pg, "w || '!' = 'aa!'", 1},
		{pg, "'<' || w || '>' = '<>'", 1},
		{pg, "concat(s, '!') = '!'", 1},   // s NULL is skipped
		{pg, "(s || '!') IS NULL", 1},     // || is NULL
		{my, "CONCAT(s, '!') IS NULL", 1}, // so is MySQL's CONCAT
		{pg, "nullif(b, 2) IS NULL", 3},
		{my, "NULLIF(b, 2) IS NULL", 3},
	}
	backends := eachBackend(t, table, cols, rows)
	for _, tc := range tests {
		stmts, err := parser.Parse(tc.d, "SELECT COUNT(*) FROM t WHERE "+tc.where)
		if err != nil || stmts[0].Query == nil {
			t.Fatalf("%s: %v %v", tc.where, err, stmts)
		}
		where, err := exprtype.Predicate(stmts[0].Query.Where, columns)
		if err != nil {
			t.Fatalf("%s: %v", tc.where, err)
		}
		q := &ir.BackendQuery{From: ir.TableRef{Name: table, Alias: "t"}, Where: where, Aggs: []ir.BackendAgg{{Kind: ir.CountRows}}}
		for _, b := range backends {
			got, err := backendtest.Collect(context.Background(), b.agg, q)
			if err != nil {
				t.Errorf("%s (%v client) on %s: %v", tc.where, tc.d, b.name, err)
				continue
			}
			if len(got) != 1 || fmt.Sprint(got[0].Aggs) != fmt.Sprint([]int64{tc.want}) {
				t.Errorf("%s (%v client) on %s: %v, want %d rows", tc.where, tc.d, b.name, got, tc.want)
			}
		}
	}
	if len(backends) < 3 {
		t.Logf("ran on %d backends; set DDP_TEST_POSTGRES_DSN and DDP_TEST_MYSQL_DSN for all three", len(backends))
	}
}
