package parser

import (
	"strconv"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/internal/cpubench"
)

// BenchmarkParse measures a typical dashboard query, end to end: grammar,
// relation collection and IR construction.
func BenchmarkParse(b *testing.B) {
	const q = "SELECT city, count(*) AS n, avg(age) FROM people p JOIN visits v ON p.id = v.person_id " +
		"WHERE age BETWEEN 18 AND 65 AND country IN ('DE', 'FR') GROUP BY city HAVING count(*) > 10 ORDER BY n DESC LIMIT 20"
	for _, d := range []Dialect{Postgres, MySQL} {
		b.Run(d.String(), func(b *testing.B) {
			b.ReportAllocs()
			defer cpubench.Report(b)()
			for b.Loop() {
				stmts, err := Parse(d, q)
				if err != nil || stmts[0].Query == nil {
					b.Fatalf("Parse: %v %v", err, stmts)
				}
			}
		})
	}
}

// BenchmarkCachedParse is the repeated-text case the front ends hit for
// dashboards and prepared statements.
func BenchmarkCachedParse(b *testing.B) {
	c := NewCache(128)
	const q = `SELECT sex, COUNT(*), AVG(age) FROM people WHERE age BETWEEN 30 AND 50 GROUP BY sex ORDER BY 2 DESC`
	b.ReportAllocs()
	defer cpubench.Report(b)()
	for b.Loop() {
		if _, err := c.Parse(Postgres, q); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFreshLiteral is a dashboard query sent with a new filter value
// each time (pgbench's fresh workload), so the text-keyed cache misses
// every time: "parse" is what a miss costs without the shape cache (a
// parse and a fingerprint, each a libpg_query parse), "cache" the Cache as
// the front ends use it (Parse, then Fingerprint for the log line).
func BenchmarkFreshLiteral(b *testing.B) {
	text := func(i int) string {
		return "SELECT sex, COUNT(*) FROM t WHERE age <> -" + strconv.Itoa(100000+i) + " GROUP BY sex"
	}
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		defer cpubench.Report(b)()
		i := 0
		for b.Loop() {
			q := text(i)
			i++
			if _, err := Parse(Postgres, q); err != nil || Fingerprint(Postgres, q) == "" {
				b.Fatal(err)
			}
		}
	})
	b.Run("cache", func(b *testing.B) {
		c := NewCache(4096)
		b.ReportAllocs()
		defer cpubench.Report(b)()
		i := 0
		for b.Loop() {
			q := text(i)
			i++
			if _, err := c.Parse(Postgres, q); err != nil || c.Fingerprint(Postgres, q) == "" {
				b.Fatal(err)
			}
		}
	})
}
