// Command mysqlbench drives one query template over the MySQL protocol
// (go-sql-driver/mysql) from several clients for a fixed time and prints
// "queries/s mean-latency-ms". bench/mysql.sh runs it directly against
// MariaDB and through ddp-proxy in the same run.
//
//	mysqlbench -dsn 'user:pw@tcp(host:port)/db' -query 'SELECT ... WHERE age <> -%d' -c 4 -t 10s
//
// A %d in the query is replaced by a fresh random number per query (a new
// literal: every query through the proxy is a new, charged release).
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/go-sql-driver/mysql"
)

func main() {
	dsn := flag.String("dsn", "", "go-sql-driver/mysql DSN")
	query := flag.String("query", "", "query; %d becomes a fresh random number")
	clients := flag.Int("c", 4, "concurrent clients")
	dur := flag.Duration("t", 10*time.Second, "duration")
	flag.Parse()
	db, err := sql.Open("mysql", *dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	db.SetMaxOpenConns(*clients)
	db.SetMaxIdleConns(*clients)
	ctx, cancel := context.WithTimeout(context.Background(), *dur)
	defer cancel()
	var n, totalNanos atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	fresh := strings.Contains(*query, "%d")
	for range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				q := *query
				if fresh {
					q = fmt.Sprintf(q, rand.Int64N(1e12))
				}
				start := time.Now()
				rows, err := db.QueryContext(context.Background(), q)
				if err == nil {
					for rows.Next() {
					}
					err = rows.Err()
					rows.Close()
				}
				if err != nil {
					failed.Store(err)
					return
				}
				totalNanos.Add(int64(time.Since(start)))
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		fmt.Fprintln(os.Stderr, "query failed:", err)
		os.Exit(1)
	}
	if n.Load() == 0 {
		fmt.Fprintln(os.Stderr, "no query completed")
		os.Exit(1)
	}
	fmt.Printf("%.1f %.3f\n", float64(n.Load())/dur.Seconds(), float64(totalNanos.Load())/float64(n.Load())/1e6)
}
