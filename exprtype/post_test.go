package exprtype_test

import (
	"database/sql"
	"math"
	"os"
	"strconv"
	"testing"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/lib/pq"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
)

// postCase is one post-processing expression over literals: the text as
// the client writes it in the select list, the value computed by hand, and
// the text the real database evaluates as the oracle ("" = the same text;
// "-" = no oracle, with the reason in why: the proxy deliberately differs,
// never failing on a noisy value).
type postCase struct {
	d      parser.Dialect
	expr   string
	want   ir.Value
	oracle string
	why    string
}

var (
	pgD = parser.Postgres
	myD = parser.MySQL
)

func postCases() []postCase {
	I, F, S, B, N := ir.Int, ir.Float, ir.String, ir.Bool, ir.Null()
	var out []postCase
	both := func(expr string, want ir.Value) {
		out = append(out, postCase{d: pgD, expr: expr, want: want}, postCase{d: myD, expr: expr, want: want})
	}
	both("CASE WHEN 3 > 2 THEN 'a' ELSE 'b' END", S("a"))
	both("CASE 2 WHEN 1 THEN 10 WHEN 2 THEN 20 END", I(20))
	both("CASE WHEN 1 > 2 THEN 1 END", N)
	both("CASE WHEN 1 < 2 THEN 1 ELSE 2.5 END", F(1))
	both("COALESCE(NULL, 7)", I(7))
	both("COALESCE(NULL, 2, 3.5)", F(2))
	both("NULLIF(5, 5)", N)
	both("NULLIF(5, 4)", I(5))
	both("GREATEST(3, 9, 4)", I(9))
	both("LEAST(3.5, 2)", F(2))
	both("-7 % 3", I(-1))
	both("MOD(7, -3)", I(1))
	// Post-processing mathematics, in double precision as both databases
	// compute it; outside a function's domain the proxy gives NULL where
	// the databases fail (oracle "-": nothing to compare).
	both("power(2, 10)", F(1024))
	both("power(2.5, 2)", F(6.25))
	both("sqrt(16)", F(4))
	both("exp(0)", F(1))
	both("ln(1)", F(0))
	both("log10(1000)", F(3))
	out = append(out,
		postCase{d: pgD, expr: "pi() * 2", want: F(2 * math.Pi)},
		// MySQL shows PI() with 6 decimals unless it meets a double.
		postCase{d: myD, expr: "pi() * 2", want: F(2 * math.Pi), oracle: "pi() * 2e0"})
	both("sqrt(power(3, 2) + power(4, 2))", F(5))
	out = append(out,
		postCase{d: pgD, expr: "log(100)", want: F(2)}, // base 10 in PostgreSQL
		postCase{d: myD, expr: "log(1)", want: F(0)},   // natural in MySQL
		postCase{d: pgD, expr: "sqrt(-1)", want: N, oracle: "-"},
		postCase{d: myD, expr: "sqrt(-1)", want: N}, // MySQL gives NULL too
		postCase{d: pgD, expr: "ln(0)", want: N, oracle: "-"},
		postCase{d: pgD, expr: "power(0, -1)", want: N, oracle: "-"},
		postCase{d: pgD, expr: "exp(1000)", want: N, oracle: "-"},
		postCase{d: pgD, expr: "power(-8, 0.5)", want: N, oracle: "-"},
	)
	both("round(2.5)", F(3))
	both("round(-2.5)", F(-3))
	out = append(out,
		// PostgreSQL has no integer round, floor or ceil: a double.
		postCase{d: pgD, expr: "round(7)", want: F(7)},
		postCase{d: pgD, expr: "7 / floor(2)", want: F(3.5)},
		postCase{d: pgD, expr: "7 / ceil(2)", want: F(3.5)},
		postCase{d: myD, expr: "round(7)", want: I(7)},
		// A double rounds its exact binary value, ties to even, in both
		// databases; an exact decimal half away from zero.
		postCase{d: pgD, expr: "round(CAST(2.5 AS double precision))", want: F(2)},
		postCase{d: pgD, expr: "round(CAST(-2.5 AS double precision))", want: F(-2)},
		postCase{d: pgD, expr: "round(CAST(3.5 AS double precision))", want: F(4)},
		postCase{d: pgD, expr: "round(1 + CAST(1.5 AS double precision))", want: F(2)},
		postCase{d: pgD, expr: "round(2.5 + 0)", want: F(3)},
		postCase{d: pgD, expr: "round(floor(2.5) + 0.5)", want: F(3)},
		postCase{d: pgD, expr: "round(floor(2) + 0.5)", want: F(2)},
		postCase{d: myD, expr: "ROUND(CAST(2.5 AS DOUBLE))", want: F(2)},
		postCase{d: myD, expr: "ROUND(CAST(0.285 AS DOUBLE), 2)", want: F(0.28)},
		postCase{d: myD, expr: "ROUND(CAST(2.345 AS DOUBLE), 2)", want: F(2.35)},
		postCase{d: myD, expr: "ROUND(CAST(0.125 AS DOUBLE), 2)", want: F(0.12)},
		postCase{d: myD, expr: "ROUND(CAST(25 AS DOUBLE), -1)", want: F(20)},
		postCase{d: myD, expr: "ROUND(CAST(35 AS DOUBLE), -1)", want: F(40)},
		postCase{d: myD, expr: "ROUND(CASE WHEN 1 > 0 THEN 2 ELSE 0.5 END + 0.5)", want: F(3)},
		postCase{d: myD, expr: "7 DIV floor(2)", want: I(3)},
	)
	both("round(2.345, 2)", F(2.35))
	both("round(-2.345, 2)", F(-2.35))
	both("round(1234.5678, -2)", F(1200))
	both("round(0.285, 2)", F(0.29))
	both("floor(-2.5)", F(-3))
	both("ceil(2.1)", F(3))
	both("abs(-4)", I(4))
	both("abs(-4.5)", F(4.5))
	both("lower('AbC')", S("abc"))
	both("upper('AbC')", S("ABC"))
	both("trim('  x  ')", S("x"))
	both("substr('abcdef', 2, 3)", S("bcd"))
	both("substr('abcdef', 5)", S("ef"))
	both("left('abc', 2)", S("ab"))
	both("right('abc', 2)", S("bc"))
	both("replace('banana', 'an', 'o')", S("booa"))
	both("1 + 2 * 3", I(7))
	both("10 - 2.5", F(7.5))
	both("3 BETWEEN 1 AND 5", B(true))
	both("3 IN (1, NULL)", N)
	both("3 IN (1, 3)", B(true))
	both("NOT (1 > 2)", B(true))
	both("(1 > 2) OR NULL", N)
	both("(1 < 2) OR NULL", B(true))
	both("(1 > 2) AND NULL", B(false))
	both("'abc' LIKE 'a%'", B(true))
	both("'abc' LIKE 'a_'", B(false))
	both("NULL IS NULL", B(true))
	both("-(5)", I(-5))
	out = append(out,
		// Division follows the client: PostgreSQL's / truncates integers,
		// MySQL's is real; DIV truncates.
		postCase{d: pgD, expr: "7 / 2", want: I(3)},
		postCase{d: pgD, expr: "-7 / 2", want: I(-3)},
		postCase{d: pgD, expr: "7 / 2.0", want: F(3.5)},
		postCase{d: myD, expr: "7 / 2", want: F(3.5)},
		postCase{d: myD, expr: "-7 / 2", want: F(-3.5)},
		postCase{d: myD, expr: "7 DIV 2", want: I(3)},
		postCase{d: myD, expr: "-7 DIV 2", want: I(-3)},
		postCase{d: pgD, expr: "7 / 0", want: N, oracle: "-", why: "PostgreSQL fails on a zero divisor; the proxy gives NULL (a noisy count can be 0)"},
		postCase{d: myD, expr: "7 / 0", want: N},
		postCase{d: myD, expr: "7 % 0", want: N},
		postCase{d: pgD, expr: "9223372036854775807 + 1", want: I(math.MaxInt64), oracle: "-", why: "PostgreSQL fails on overflow; the proxy saturates"},
		postCase{d: myD, expr: "-9223372036854775807 * 2", want: I(math.MinInt64), oracle: "-", why: "MySQL fails on overflow; the proxy saturates"},
		// Casts: a double to an integer rounds halves to even, as
		// PostgreSQL and MariaDB convert a double.
		postCase{d: pgD, expr: "CAST(2.5 AS bigint)", want: I(2), oracle: "CAST(2.5::float8 AS bigint)"},
		postCase{d: pgD, expr: "CAST(3.5 AS bigint)", want: I(4), oracle: "CAST(3.5::float8 AS bigint)"},
		postCase{d: pgD, expr: "CAST(-2.5 AS integer)", want: I(-2), oracle: "CAST(-2.5::float8 AS integer)"},
		postCase{d: myD, expr: "CAST(2.5 AS SIGNED)", want: I(2), oracle: "CAST(2.5e0 AS SIGNED)"},
		postCase{d: myD, expr: "CAST(-3.5 AS SIGNED)", want: I(-4), oracle: "CAST(-3.5e0 AS SIGNED)"},
		postCase{d: myD, expr: "CAST(1e300 AS SIGNED)", want: I(math.MaxInt64)},
		postCase{d: myD, expr: "CAST(TRUE AS CHAR)", want: S("1")},
		postCase{d: pgD, expr: "CAST(7 AS text)", want: S("7")},
		postCase{d: myD, expr: "CAST(7 AS CHAR)", want: S("7")},
		postCase{d: pgD, expr: "CAST(TRUE AS text)", want: S("true")},
		postCase{d: pgD, expr: "CAST(7 AS double precision)", want: F(7)},
		postCase{d: pgD, expr: "CAST(1e300 AS bigint)", want: I(math.MaxInt64), oracle: "-", why: "PostgreSQL fails out of range; the proxy saturates"},
		postCase{d: pgD, expr: "length('héllo')", want: I(5)},
		postCase{d: myD, expr: "CHAR_LENGTH('héllo')", want: I(5)},
		// PostgreSQL's concat skips NULLs; MySQL's CONCAT is NULL.
		postCase{d: pgD, expr: "concat('a', NULL, 'b')", want: S("ab")},
		postCase{d: myD, expr: "CONCAT('a', NULL, 'b')", want: N},
		postCase{d: pgD, expr: "'a' || 'b'", want: S("ab")},
		postCase{d: pgD, expr: "GREATEST(NULL, 4)", want: I(4)},
		postCase{d: myD, expr: "GREATEST(NULL, 4)", want: I(4), oracle: "-", why: "MySQL's GREATEST is NULL when an argument is; the proxy skips NULLs as PostgreSQL does, in WHERE too (README)"},
		postCase{d: pgD, expr: "CASE WHEN 1 = 1 THEN 'x' END = 'x'", want: B(true)},
		postCase{d: pgD, expr: "2 > '1'", want: B(true)},
		// Casts to numeric/DECIMAL: a double becomes a decimal first (15
		// significant digits in PostgreSQL, the shortest spelling in
		// MySQL), which then rounds half away from zero: 2.675 is stored
		// just below 2.675, yet rounds to 2.68 as a decimal.
		postCase{d: pgD, expr: "round(CAST(2.675 AS double precision)::numeric, 2)", want: F(2.68)},
		postCase{d: pgD, expr: "round(CAST(2.675 AS double precision), 2)", want: F(2.67), oracle: "-",
			why: "PostgreSQL has no round(double precision, int); the proxy rounds the binary value, which is below 2.675, as MySQL does"},
		postCase{d: pgD, expr: "CAST(CAST(0.1 AS double precision) + CAST(0.2 AS double precision) AS numeric)", want: F(0.3)},
		postCase{d: pgD, expr: "CAST(1 AS double precision) / 3 * 3 - 1 < 0", want: B(false)},
		postCase{d: pgD, expr: "CAST(CAST(1 AS double precision) / 3 AS numeric)", want: F(0.333333333333333)},
		postCase{d: pgD, expr: "CAST(12345.67 AS numeric(6,1))", want: F(12345.7)},
		postCase{d: pgD, expr: "CAST(-2.5 AS numeric(2,0))", want: F(-3)},
		postCase{d: pgD, expr: "CAST(-2.5 AS decimal(2))", want: F(-3)},
		postCase{d: pgD, expr: "5::numeric / 2", want: F(2.5)},
		postCase{d: pgD, expr: "CAST(7 AS numeric) + 1", want: F(8)},
		postCase{d: pgD, expr: "CAST(0.045 AS numeric(3,3))", want: F(0.045)},
		postCase{d: pgD, expr: "CAST(123.456 AS numeric(4,2))", want: F(99.99), oracle: "-",
			why: "PostgreSQL fails with numeric field overflow; the proxy saturates as MySQL does"},
		postCase{d: pgD, expr: "CAST(-0.9996 AS numeric(3,3))", want: F(-0.999), oracle: "-",
			why: "PostgreSQL fails with numeric field overflow (it rounds to -1.000); the proxy saturates"},
		postCase{d: myD, expr: "CAST(2.675e0 AS DECIMAL(10,2))", want: F(2.68)},
		postCase{d: myD, expr: "CAST(123.456 AS DECIMAL(4,2))", want: F(99.99)},
		postCase{d: myD, expr: "CAST(-123.456e0 AS DECIMAL(4,2))", want: F(-99.99)},
		postCase{d: myD, expr: "CAST(2.5 AS DECIMAL)", want: F(3)},
		postCase{d: myD, expr: "CAST(12345678901.5 AS DECIMAL)", want: F(9999999999)},
		postCase{d: myD, expr: "CAST(7 AS DECIMAL(5,2)) / 2", want: F(3.5)},
		postCase{d: myD, expr: "ROUND(CAST(0.285e0 AS DECIMAL(10,3)), 2)", want: F(0.29)},
	)
	return out
}

// postEval parses expr as a select-list item and evaluates it as the
// proxy does after the noise.
func postEval(t *testing.T, d parser.Dialect, expr string) (ir.Value, error) {
	t.Helper()
	stmts, err := parser.Parse(d, "SELECT "+expr+" AS v, COUNT(*) FROM t")
	if err != nil {
		return ir.Null(), err
	}
	q := stmts[0].Query
	if q == nil {
		t.Fatalf("%s: not an aggregate: %s", expr, stmts[0].NotAggregate)
	}
	pd := exprtype.PostDialect{MySQL: d == parser.MySQL}
	x, _, err := exprtype.PostType(q.Select[0].Expr, func(int) exprtype.Out { t.Fatal("no outputs"); return exprtype.Out{} }, pd)
	if err != nil {
		return ir.Null(), err
	}
	return exprtype.Eval(x, nil, pd)
}

// TestPostEvaluator: the evaluator's values against hand-computed ones.
func TestPostEvaluator(t *testing.T) {
	for _, c := range postCases() {
		got, err := postEval(t, c.d, c.expr)
		if err != nil {
			t.Errorf("%v %s: %v", c.d, c.expr, err)
			continue
		}
		if got != c.want {
			t.Errorf("%v %s = %v, want %v", c.d, c.expr, got, c.want)
		}
	}
}

// TestPostEvaluatorOracle runs every case on the real database of its
// dialect: the database's answer must equal the hand-computed value (and
// so the proxy's), except where the proxy deliberately gives NULL or
// saturates instead of failing.
func TestPostEvaluatorOracle(t *testing.T) {
	dbs := map[parser.Dialect]*sql.DB{}
	for d, env := range map[parser.Dialect][2]string{pgD: {"postgres", "DDP_TEST_POSTGRES_DSN"}, myD: {"mysql", "DDP_TEST_MYSQL_DSN"}} {
		if dsn := os.Getenv(env[1]); dsn != "" {
			db, err := sql.Open(env[0], dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			dbs[d] = db
		}
	}
	if len(dbs) == 0 {
		t.Skip("DDP_TEST_POSTGRES_DSN and DDP_TEST_MYSQL_DSN unset")
	}
	for _, c := range postCases() {
		db := dbs[c.d]
		if db == nil || c.oracle == "-" {
			continue
		}
		text := c.oracle
		if text == "" {
			text = c.expr
		}
		var s sql.NullString
		if err := db.QueryRow("SELECT " + text).Scan(&s); err != nil {
			t.Errorf("%v %s: %v", c.d, text, err)
			continue
		}
		if !sameValue(c.want, s, c.d) {
			t.Errorf("%v: the database says %s = %q (valid %v), the proxy %v", c.d, text, s.String, s.Valid, c.want)
		}
	}
}

func sameValue(v ir.Value, s sql.NullString, d parser.Dialect) bool {
	if v.IsNull() || !s.Valid {
		return v.IsNull() && !s.Valid
	}
	switch v.Kind {
	case ir.KindInt, ir.KindFloat:
		f, err := strconv.ParseFloat(s.String, 64)
		want, _ := v.AsFloat()
		return err == nil && math.Abs(f-want) <= 1e-12*math.Max(1, math.Abs(want))
	case ir.KindBool:
		if d == parser.MySQL {
			return s.String == map[bool]string{true: "1", false: "0"}[v.Bool]
		}
		return s.String == map[bool]string{true: "true", false: "false"}[v.Bool]
	}
	return s.String == v.Str
}
