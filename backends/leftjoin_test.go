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
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// TestLeftJoinCountsMatchSQL: on SQLite, PostgreSQL and MariaDB (when
// configured), the true counts of a LEFT JOIN grouped by a public column,
// with = and with the null-safe equality, are those of the same join
// written by hand in the backend's SQL; the unmatched rows form the NULL
// group.
func TestLeftJoinCountsMatchSQL(t *testing.T) {
	ctx := context.Background()
	d := backendtest.Generate(rand.New(rand.NewPCG(11, 12)), 40, fmt.Sprintf("lj%d_%d", os.Getpid(), time.Now().UnixNano()))
	opts := backends.Options{StatementTimeout: 10 * time.Second}
	type target struct {
		eng      backendtest.Aggregator
		raw      *sql.DB
		nullSafe string
	}
	targets := map[string]target{}

	path := filepath.Join(t.TempDir(), "lj.db")
	rawLite, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rawLite.Close() })
	if err := d.Load(ctx, rawLite, "sqlite"); err != nil {
		t.Fatal(err)
	}
	lite, err := sqlite.Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	targets["sqlite"] = target{lite, rawLite, "IS"}

	if dsn := os.Getenv("DDP_TEST_POSTGRES_DSN"); dsn != "" {
		raw, err := sql.Open("postgres", dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Drop(ctx, raw); raw.Close() })
		if err := d.Load(ctx, raw, "postgres"); err != nil {
			t.Fatalf("DDP_TEST_POSTGRES_DSN is set but loading failed: %v", err)
		}
		pg, err := postgres.Open(ctx, dsn, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pg.Close() })
		targets["postgres"] = target{pg, raw, "IS NOT DISTINCT FROM"}
	}
	if dsn := os.Getenv("DDP_TEST_MYSQL_DSN"); dsn != "" {
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
		targets["mysql"] = target{my, raw, "<=>"}
	}

	for name, tg := range targets {
		for _, nullSafe := range []bool{false, true} {
			q := &ir.BackendQuery{
				From: ir.TableRef{Name: d.PrivateName, Alias: "t"},
				Joins: []ir.Join{{Table: ir.TableRef{Name: d.PublicName, Alias: "p"},
					Left: ir.ColumnRef{Qualifier: "t", Name: "cid"}, Right: ir.ColumnRef{Qualifier: "p", Name: "id"},
					Outer: true, NullSafe: nullSafe}},
				GroupBy: []ir.Expr{ir.ColumnRef{Qualifier: "p", Name: "region"}},
				Aggs:    []ir.BackendAgg{{Kind: ir.CountRows}},
			}
			got := map[string]int64{}
			err := tg.eng.Aggregate(ctx, q, func(r ir.BackendRow) error {
				got[r.Keys[0].SQL()] = r.Aggs[0]
				return nil
			})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			op := "="
			if nullSafe {
				op = tg.nullSafe
			}
			direct := fmt.Sprintf(`SELECT p.region, COUNT(*) FROM "%s" t LEFT JOIN "%s" p ON t.cid %s p.id GROUP BY p.region`, d.PrivateName, d.PublicName, op)
			rows, err := tg.raw.QueryContext(ctx, direct)
			if err != nil {
				t.Fatalf("%s: %s: %v", name, direct, err)
			}
			want := map[string]int64{}
			for rows.Next() {
				var region sql.NullString
				var n int64
				if err := rows.Scan(&region, &n); err != nil {
					t.Fatal(err)
				}
				k := ir.Null().SQL()
				if region.Valid {
					k = ir.String(region.String).SQL()
				}
				want[k] = n
			}
			rows.Close()
			if _, ok := want[ir.Null().SQL()]; !ok {
				t.Fatalf("%s: the data has no unmatched row: the test proves nothing", name)
			}
			if _, ok := want[ir.String("nowhere").SQL()]; ok != nullSafe {
				t.Fatalf("%s (null-safe %v): the NULL key matched %v", name, nullSafe, ok)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s (null-safe %v): proxy counts %v, direct SQL %v", name, nullSafe, got, want)
			}
		}
	}
	t.Logf("LEFT JOIN counts checked on %d backends", len(targets))
}
