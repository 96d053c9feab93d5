package exprtype_test

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"

	"github.com/ddp-proxy/ddp-proxy/parser"
)

// TestNumericCastOracle compares the proxy's CAST(double AS NUMERIC(p,s))
// and ROUND(double::numeric, s) with the real databases on random doubles
// of every magnitude, decimal ties among them (2.675 and the like, which
// a double holds just below or above the tie). Where PostgreSQL fails
// with numeric field overflow, the proxy must give the saturated value
// (the largest of the type, with the sign), which MySQL gives too.
func TestNumericCastOracle(t *testing.T) {
	type oracle struct {
		d   parser.Dialect
		env string
		drv string
	}
	ran := 0
	for _, o := range []oracle{{pgD, "DDP_TEST_POSTGRES_DSN", "postgres"}, {myD, "DDP_TEST_MYSQL_DSN", "mysql"}} {
		dsn := os.Getenv(o.env)
		if dsn == "" {
			continue
		}
		db, err := sql.Open(o.drv, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ran++
		rng := rand.New(rand.NewPCG(7, uint64(o.d)))
		saturated, ties := 0, 0
		for i := 0; i < 600; i++ {
			v, tie := numericSample(rng)
			if tie {
				ties++
			}
			lit := strconv.FormatFloat(v, 'g', -1, 64)
			scale := rng.IntN(7)
			precision := scale + 1 + rng.IntN(12)
			var exprs []string
			if o.d == pgD {
				dbl := fmt.Sprintf("CAST('%s' AS double precision)", lit)
				exprs = []string{
					fmt.Sprintf("CAST(%s AS numeric(%d,%d))", dbl, precision, scale),
					fmt.Sprintf("round(CAST(%s AS numeric), %d)", dbl, scale),
					fmt.Sprintf("CAST(%s AS numeric)", dbl),
				}
			} else {
				exprs = []string{fmt.Sprintf("CAST(CAST('%s' AS DOUBLE) AS DECIMAL(%d,%d))", lit, precision, scale)}
			}
			for _, e := range exprs {
				got, err := postEval(t, o.d, e)
				if err != nil {
					t.Fatalf("%v %s: %v", o.d, e, err)
				}
				var s string
				err = db.QueryRow("SELECT CAST(" + e + " AS " + map[parser.Dialect]string{pgD: "text", myD: "CHAR"}[o.d] + ")").Scan(&s)
				var pe *pq.Error
				if errors.As(err, &pe) && pe.Code == "22003" {
					// numeric field overflow: the proxy saturates.
					nines := strings.Repeat("9", precision)
					limit, _ := strconv.ParseFloat(nines[:precision-scale]+"."+nines[precision-scale:], 64)
					if math.Abs(got.Float) != limit || math.Signbit(got.Float) != math.Signbit(v) {
						t.Errorf("%v %s: the database overflows, the proxy gives %v, want ±%v", o.d, e, got.Float, limit)
					}
					saturated++
					continue
				}
				var me *mysql.MySQLError
				if err != nil || errors.As(err, &me) {
					t.Fatalf("%v %s: %v", o.d, e, err)
				}
				want, perr := strconv.ParseFloat(s, 64)
				if perr != nil || got.Float != want {
					t.Errorf("%v %s: the database says %s, the proxy %v", o.d, e, s, got)
				}
			}
		}
		if ties < 50 || saturated == 0 && o.d == pgD {
			t.Errorf("%v: the sample had %d decimal ties and %d overflows: it tests too little", o.d, ties, saturated)
		}
	}
	if ran == 0 {
		t.Skip("DDP_TEST_POSTGRES_DSN and DDP_TEST_MYSQL_DSN unset")
	}
}

// numericSample returns a double of a random magnitude, or (tie) the
// double nearest to a decimal tie such as 2.675 or -0.0125.
func numericSample(rng *rand.Rand) (v float64, tie bool) {
	e := rng.IntN(20) - 8
	sign := 1.0
	if rng.IntN(2) == 0 {
		sign = -1
	}
	if rng.IntN(3) == 0 {
		d := rng.IntN(6) + 1 // digits after the point
		k := rng.Int64N(100000)
		f, _ := strconv.ParseFloat(strconv.FormatInt(k, 10)+"5e-"+strconv.Itoa(d+1), 64)
		return sign * f, true
	}
	return sign * rng.Float64() * math.Pow(10, float64(e)), false
}
