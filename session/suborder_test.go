package session

import (
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestOrderByExpressionOverSubquery: in ORDER BY over an aggregate
// subquery, a name inside an expression is the subquery's column (it was
// kept as written and read as a column of the private table: refused, or
// another value where the table has a column of that name); a name whose
// MySQL reading (the select-list alias) differs is refused. The rows are
// the subquery's release, free, ordered as asked.
func TestOrderByExpressionOverSubquery(t *testing.T) {
	f := totalitySQLite(t, "a")
	const inner = "(SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s FROM people GROUP BY 1)"
	for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
		plain, err, _ := f.run(t, probe{name: "plain", dialect: d, sql: "SELECT * FROM " + inner + " t"})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			"SELECT * FROM " + inner + " t ORDER BY s * -1",
			"SELECT * FROM (SELECT *, RANK() OVER (ORDER BY n DESC) AS r FROM " + inner + " w) t ORDER BY -s",
			"SELECT k, n, s FROM " + inner + " t ORDER BY 0 - t.s, k",
		} {
			res, err, charged := f.run(t, probe{name: q, dialect: d, sql: q})
			if err != nil || charged != 0 {
				t.Errorf("%v %s: %v (charged %g), want the release's rows", d, q, err, charged)
				continue
			}
			if len(res.Rows) != len(plain.Rows) || len(res.Rows) < 3 {
				t.Fatalf("%v %s: %d rows, want %d", d, q, len(res.Rows), len(plain.Rows))
			}
			for i := 1; i < len(res.Rows); i++ {
				if res.Rows[i-1][2].Int < res.Rows[i][2].Int {
					t.Errorf("%v %s: rows %v are not in descending s", d, q, res.Rows)
					break
				}
			}
		}
		q := "SELECT n AS s, s AS n FROM " + inner + " t ORDER BY s * 2"
		if _, err, _ := f.run(t, probe{name: q, dialect: d, sql: q}); !strings.Contains(err.Error(), "qualify") || sqlerr.As(err) == nil {
			t.Errorf("%v %s: %v, want a refusal naming the two readings", d, q, err)
		}
	}
}
