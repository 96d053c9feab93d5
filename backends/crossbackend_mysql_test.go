package backends_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/internal/backendtest"
	"github.com/ddp-proxy/ddp-proxy/backends/mysql"
	"github.com/ddp-proxy/ddp-proxy/backends/postgres"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlite"
)

// TestSameRowsOnMySQL loads one data set into MariaDB/MySQL, SQLite and
// (when configured) PostgreSQL and requires identical BackendRows from
// all of them for 300 random queries (fixed seed), keys' kinds included.
// The release step is the same code for every backend, so identical true
// rows mean the noisy answers have the same distribution on each.
func TestSameRowsOnMySQL(t *testing.T) {
	dsn := os.Getenv("DDP_TEST_MYSQL_DSN")
	if dsn == "" {
		t.Skip("DDP_TEST_MYSQL_DSN is not set; set it (e.g. root@tcp(127.0.0.1:3306)/test) to compare MySQL with SQLite and PostgreSQL")
	}
	ctx := context.Background()
	d := backendtest.Generate(rand.New(rand.NewPCG(9, 9)), 30, fmt.Sprintf("xm%d_%d", os.Getpid(), time.Now().UnixNano()))
	opts := backends.Options{StatementTimeout: 10 * time.Second}
	engines := map[string]backendtest.Aggregator{}

	raw, err := sql.Open("mysql", dsn+"?sql_mode=%27ANSI_QUOTES%27")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Drop(ctx, raw); raw.Close() })
	if err := d.Load(ctx, raw, "mysql"); err != nil {
		t.Fatalf("DDP_TEST_MYSQL_DSN is set but loading failed: %v", err)
	}
	my, err := mysql.Open(ctx, dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { my.Close() })
	engines["mysql"] = my

	path := filepath.Join(t.TempDir(), "x.db")
	rawLite, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer rawLite.Close()
	if err := d.Load(ctx, rawLite, "sqlite"); err != nil {
		t.Fatal(err)
	}
	lite, err := sqlite.Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	engines["sqlite"] = lite

	if pgDSN := os.Getenv("DDP_TEST_POSTGRES_DSN"); pgDSN != "" {
		rawPG, err := sql.Open("postgres", pgDSN)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Drop(ctx, rawPG); rawPG.Close() })
		if err := d.Load(ctx, rawPG, "postgres"); err != nil {
			t.Fatal(err)
		}
		pg, err := postgres.Open(ctx, pgDSN, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pg.Close() })
		engines["postgres"] = pg
	}

	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 300 {
		q := d.RandomQuery(rng)
		want, err := backendtest.Collect(ctx, lite, q)
		if err != nil {
			t.Fatalf("query %d on sqlite: %v\n%s", i, err, q.Canonical())
		}
		for name, e := range engines {
			got, err := backendtest.Collect(ctx, e, q)
			if err != nil {
				t.Fatalf("query %d on %s: %v\n%s", i, name, err, q.Canonical())
			}
			backendtest.CanonicalKeys(q, want)
			backendtest.CanonicalKeys(q, got)
			if diff := backendtest.Diff(want, got); diff != "" {
				t.Fatalf("query %d: %s differs from sqlite: %s\n%s", i, name, diff, q.Canonical())
			}
		}
	}
	t.Logf("300 random queries gave identical rows on %d backends", len(engines))
}
