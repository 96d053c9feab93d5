// Command timingbench measures the timing channel README's "Timing"
// section describes: how long private answers take through ddp-proxy when
// a WHERE clause is slow only on rows where a cheap condition is false.
// bench/timing.sh loads the table, starts the proxy and runs it.
//
//	timingbench -dsn postgres://user:pw@127.0.0.1:15434/test?sslmode=disable -n 15 -k 3000
//
// Each query carries a distinct no-op conjunct (age > -N), so each is a
// new release, run on the backend and charged; a repeat would be answered
// from the stored release.
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	_ "github.com/lib/pq"
)

func main() {
	dsn := flag.String("dsn", "", "lib/pq DSN of the proxy")
	table := flag.String("table", "bench_timing_people", "table with id, age, salary and a text column bio")
	k := flag.Int("k", 3000, "distinct elements of the slow IN list (at most 3125)")
	n := flag.Int("n", 15, "runs per case")
	start := flag.Int("start", 0, "offset of the no-op literals (use a new one per run on one ledger)")
	flag.Parse()
	db, err := sql.Open("postgres", *dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	db.SetMaxOpenConns(1)
	slow := slowPredicate(*k)
	cases := []struct{ name, where string }{
		{"0 of 1000 rows reach the slow part", "id BETWEEN 1 AND 1000 AND (salary >= 0 OR " + slow + ")"},
		{"14 of 1000 rows reach the slow part", "id BETWEEN 1 AND 1000 AND (age <> 30 OR " + slow + ")"},
		{"one person, condition true", "id = 5 AND (salary < 100000 OR " + slow + ")"},
		{"one person, condition false", "id = 5 AND (salary > 100000 OR " + slow + ")"},
	}
	times := make([][]time.Duration, len(cases))
	errs := make([]int, len(cases))
	for r := range *n {
		for i, c := range cases { // interleaved, so load drifts hit all cases alike
			q := fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE %s AND age > %d", *table, c.where, -1-(*start+r))
			t0 := time.Now()
			var cnt int64
			err := db.QueryRow(q).Scan(&cnt)
			times[i] = append(times[i], time.Since(t0))
			if err != nil {
				if errs[i] == 0 {
					fmt.Fprintf(os.Stderr, "%s: %v\n", c.name, err)
				}
				errs[i]++
			}
		}
	}
	fmt.Printf("%-38s %5s %7s %10s %10s %10s\n", "case", "runs", "errors", "min ms", "median ms", "max ms")
	for i, c := range cases {
		ts := times[i]
		slices.Sort(ts)
		fmt.Printf("%-38s %5d %7d %10.1f %10.1f %10.1f\n", c.name, len(ts), errs[i], ms(ts[0]), ms(ts[len(ts)/2]), ms(ts[len(ts)-1]))
	}
}

// slowPredicate is bio IN (k distinct nested-function calls on bio), none
// equal to bio (upper of lower-case hex). The elements must differ:
// PostgreSQL turns an IN list with non-constant elements into ORed
// equalities and drops duplicate arms.
func slowPredicate(k int) string {
	fs := []string{"upper", "lower", "trim", "ltrim", "rtrim"}
	var arms []string
	var gen func(e string, depth int)
	gen = func(e string, depth int) {
		if len(arms) >= k {
			return
		}
		if depth == 5 {
			arms = append(arms, "upper("+e+")")
			return
		}
		for _, f := range fs {
			gen(f+"("+e+")", depth+1)
		}
	}
	gen("bio", 0)
	return "bio IN (" + strings.Join(arms, ", ") + ")"
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
