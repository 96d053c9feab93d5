package exprtype_test

import (
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
)

// postGen writes random well-typed post-processing expressions over
// literals, as a client would write them, for TestPostRandomOracle.
type postGen struct {
	r *rand.Rand
	d parser.Dialect
}

// num is a numeric expression; ints says it must be an integer in both
// dialects (for %), nonNull that it must not be NULL (for GREATEST and
// LEAST, whose NULL rule the proxy takes from PostgreSQL on both front
// ends).
func (g *postGen) num(depth int, ints, nonNull bool) string {
	if depth <= 0 || g.r.IntN(4) == 0 {
		switch k := g.r.IntN(10); {
		case k == 0 && !nonNull:
			if g.d == parser.MySQL {
				return "CAST(NULL AS SIGNED)"
			}
			return "CAST(NULL AS integer)" // PostgreSQL cannot type a bare NULL operand
		case k < 6 || ints:
			return fmt.Sprint(g.r.IntN(19) - 9)
		case k == 6:
			// A double (a sum of a real column): rounds differently.
			v := []string{"2.5", "-3.5", "0.125", "0.285", "1.5", "-0.5"}[g.r.IntN(6)]
			if g.d == parser.MySQL {
				return "CAST(" + v + " AS DOUBLE)"
			}
			return "CAST(" + v + " AS double precision)"
		default:
			return []string{"2.5", "-1.25", "0.5", "3.75", "-0.125", "1.5"}[g.r.IntN(6)]
		}
	}
	d := depth - 1
	switch k := g.r.IntN(16); {
	case k < 3:
		op := []string{"+", "-", "*"}[k]
		return "(" + g.num(d, ints, nonNull) + " " + op + " " + g.num(d, ints, nonNull) + ")"
	case k == 3 && !ints && !nonNull:
		return "(" + g.num(d, false, false) + " / " + g.num(d, false, false) + ")"
	case k == 4 && !nonNull:
		return "(" + g.num(d, true, false) + " % " + g.num(d, true, false) + ")"
	case k == 5:
		return "abs(" + g.num(d, ints, nonNull) + ")"
	case k == 6 && !ints:
		return []string{"round", "floor", "ceil"}[g.r.IntN(3)] + "(" + g.num(d, false, nonNull) + ")"
	case k == 7 && !ints:
		return fmt.Sprintf("round(%s, %d)", g.num(d, false, nonNull), g.r.IntN(5)-2)
	case k == 8:
		return "COALESCE(" + g.num(d, ints, false) + ", " + g.num(d, ints, true) + ")"
	case k == 9 && !nonNull:
		return "NULLIF(" + g.num(d, ints, false) + ", " + g.num(d, ints, false) + ")"
	case k == 10:
		f := []string{"GREATEST", "LEAST"}[g.r.IntN(2)]
		return f + "(" + g.num(d, ints, true) + ", " + g.num(d, ints, true) + ")"
	case k == 11:
		return "(CASE WHEN " + g.cond(d) + " THEN " + g.num(d, ints, nonNull) + " ELSE " + g.num(d, ints, nonNull) + " END)"
	case k == 12 && !nonNull:
		return "(CASE " + g.num(d, true, false) + " WHEN " + g.num(d, true, false) + " THEN " + g.num(d, ints, false) + " WHEN 1 THEN " + g.num(d, ints, false) + " END)"
	case k == 13:
		return "(- " + g.num(d, ints, nonNull) + ")" // "--" would start a comment
	}
	return g.num(d, ints, nonNull)
}

func (g *postGen) cond(depth int) string {
	d := depth - 1
	switch k := g.r.IntN(8); {
	case k < 3 || depth <= 0:
		return g.num(d, false, false) + " " + []string{"=", "<>", "<", "<=", ">", ">="}[g.r.IntN(6)] + " " + g.num(d, false, false)
	case k == 3:
		return "NOT (" + g.cond(d) + ")"
	case k == 4:
		return "(" + g.cond(d) + " AND " + g.cond(d) + ")"
	case k == 5:
		return "(" + g.cond(d) + " OR " + g.cond(d) + ")"
	case k == 6:
		return g.num(d, false, false) + " BETWEEN " + g.num(d, false, false) + " AND " + g.num(d, false, false)
	}
	return g.num(d, false, false) + " IS NULL"
}

// TestPostRandomOracle evaluates random post-processing expressions over
// literals in the proxy and on the real database of the client's dialect
// (PostgreSQL for PostgreSQL clients, MariaDB for MySQL ones): the values
// must agree. Where PostgreSQL fails on a zero divisor nothing is compared
// (the proxy's NULL there is MySQL's rule, compared on MariaDB). MySQL's / computes a DECIMAL with 4 more digits
// (div_precision_increment) where the proxy keeps a double, so its
// quotients agree to that precision only.
func TestPostRandomOracle(t *testing.T) {
	cases := []struct {
		d   parser.Dialect
		drv string
		env string
	}{{parser.Postgres, "postgres", "DDP_TEST_POSTGRES_DSN"}, {parser.MySQL, "mysql", "DDP_TEST_MYSQL_DSN"}}
	ran := false
	for _, c := range cases {
		dsn := os.Getenv(c.env)
		if dsn == "" {
			continue
		}
		ran = true
		db, err := sql.Open(c.drv, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		g := &postGen{r: rand.New(rand.NewPCG(11, uint64(c.d))), d: c.d}
		compared, dbErrors := 0, 0
		for i := 0; i < 4000; i++ {
			var expr string
			if i%4 == 3 {
				expr = g.cond(3)
			} else {
				expr = g.num(3, false, false)
			}
			got, err := postEval(t, c.d, expr)
			if err != nil {
				t.Errorf("%v: the proxy refused %s: %v", c.d, expr, err)
				continue
			}
			var s sql.NullString
			if err := db.QueryRow("SELECT " + expr).Scan(&s); err != nil {
				// PostgreSQL fails on a zero divisor, where the proxy gives
				// NULL as MySQL does (so MariaDB checks that rule); it also
				// refuses some calls the proxy types (round(double
				// precision, integer): its round(int) is a double), which
				// the proxy answers as round(numeric).
				dbErrors++
				if !strings.Contains(err.Error(), "division by zero") && !strings.Contains(err.Error(), "does not exist") {
					t.Errorf("%v: the database fails on %s: %v", c.d, expr, err)
				}
				continue
			}
			compared++
			if !sameRandom(got, s, c.d, strings.Contains(expr, "/")) {
				t.Errorf("%v: SELECT %s: the database says %q (valid %v), the proxy %v", c.d, expr, s.String, s.Valid, got)
			}
		}
		t.Logf("%v: %d expressions compared, %d failed in the database", c.d, compared, dbErrors)
	}
	if !ran {
		t.Skip("DDP_TEST_POSTGRES_DSN and DDP_TEST_MYSQL_DSN unset")
	}
}

func sameRandom(v ir.Value, s sql.NullString, d parser.Dialect, divides bool) bool {
	if v.IsNull() || !s.Valid {
		return v.IsNull() && !s.Valid
	}
	if v.Kind == ir.KindBool {
		return sameValue(v, s, d)
	}
	f, err := parseNum(s.String)
	want, ok := v.AsFloat()
	if err != nil || !ok {
		return false
	}
	tol := 1e-9 * math.Max(1, math.Abs(want))
	if d == parser.MySQL && divides {
		tol = 1e-2 * math.Max(1, math.Abs(want))
	}
	return math.Abs(f-want) <= tol
}

func parseNum(s string) (float64, error) {
	var f float64
	_, err := fmt.Sscan(s, &f)
	return f, err
}
