package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/internal/backendtest"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

var _ backends.Backend = (*Backend)(nil)

const dsnEnv = "DDP_TEST_MYSQL_DSN"

// testDSN returns the test server's DSN, skipping when none is
// configured; a configured but unreachable server fails the test.
func testDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Skipf("%s is not set; set it (e.g. root@tcp(127.0.0.1:3306)/test) to run the MySQL/MariaDB tests", dsnEnv)
	}
	return dsn
}

func open(t *testing.T, opts backends.Options) *Backend {
	t.Helper()
	b, err := Open(context.Background(), testDSN(t), opts)
	if err != nil {
		t.Fatalf("%s is set but the server is unusable: %v (cause %v)", dsnEnv, err, sqlerr.As(err).Cause)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// rawDB is a writable pool speaking ANSI quotes (the loader quotes
// identifiers with ").
func rawDB(t *testing.T) *sql.DB {
	t.Helper()
	raw, err := sql.Open("mysql", testDSN(t)+"?sql_mode=%27ANSI_QUOTES%27")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

func load(t *testing.T, d *backendtest.Data) {
	t.Helper()
	raw := rawDB(t)
	t.Cleanup(func() {
		if err := d.Drop(context.Background(), raw); err != nil {
			t.Errorf("drop test tables: %v", err)
		}
	})
	if err := d.Load(context.Background(), raw, "mysql"); err != nil {
		t.Fatal(err)
	}
}

func suffix() string { return fmt.Sprintf("my%d_%d", os.Getpid(), time.Now().UnixNano()) }

// TestRandomAgainstReference compares 400 random BackendQueries (fixed
// seed) with the brute-force Go evaluation over the same rows.
func TestRandomAgainstReference(t *testing.T) {
	b := open(t, backends.Options{StatementTimeout: 10 * time.Second, MaxOpenConns: 2})
	d := backendtest.Generate(rand.New(rand.NewPCG(1, 2)), 40, suffix())
	load(t, d)
	backendtest.CheckRandom(t, d, 42, 400, map[string]backendtest.Aggregator{"mysql": b})
}

// TestRandomDistinctAgainstReference compares 300 random BackendQueries
// with a distinct count (fixed seed) with the brute-force Go evaluation:
// COUNT(DISTINCT x) over the rows each unit keeps after the bound k.
func TestRandomDistinctAgainstReference(t *testing.T) {
	b := open(t, backends.Options{StatementTimeout: 10 * time.Second, MaxOpenConns: 2})
	d := backendtest.Generate(rand.New(rand.NewPCG(3, 5)), 40, "distinct_"+suffix())
	load(t, d)
	backendtest.CheckRandomDistinct(t, d, 43, 300, map[string]backendtest.Aggregator{"mysql": b})
}

func TestSessionSettings(t *testing.T) {
	b := open(t, backends.Options{StatementTimeout: 1500 * time.Millisecond})
	var vars []string
	err := b.Rows(context.Background(), "SELECT VERSION(), @@session.max_statement_time, @@session.tx_read_only", nil, func(_ []string, row []ir.Value) error {
		for _, v := range row {
			vars = append(vars, v.Text())
		}
		return nil
	})
	if err != nil {
		t.Skipf("not a MariaDB server (%v); the MySQL variables are checked by TestTimeout", err)
	}
	if vars[1] != "1.5" || vars[2] != "1" {
		t.Errorf("max_statement_time, tx_read_only = %q, %q; want 1.5, 1", vars[1], vars[2])
	}
}

// TestTimeout: a statement that outlives the server-side timeout is
// StatementTimeout, and the pool stays usable.
func TestTimeout(t *testing.T) {
	b := open(t, backends.Options{StatementTimeout: 300 * time.Millisecond})
	err := b.Rows(context.Background(), "SELECT SLEEP(2) FROM information_schema.tables LIMIT 1", nil, func([]string, []ir.Value) error { return nil })
	if !sqlerr.HasCode(err, sqlerr.StatementTimeout) {
		t.Fatalf("err = %v (cause %v), want StatementTimeout", err, sqlerr.As(err))
	}
	if err := b.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestReadOnlySession(t *testing.T) {
	b := open(t, backends.Options{})
	name := "ddp_ro_" + suffix()
	err := b.Rows(context.Background(), "CREATE TEMPORARY TABLE "+name+" (x INT)", nil, func([]string, []ir.Value) error { return nil })
	// Temporary tables are allowed in read-only transactions on some
	// versions; a real table must not be.
	_ = err
	err = b.Rows(context.Background(), "CREATE TABLE "+name+" (x INT)", nil, func([]string, []ir.Value) error { return nil })
	if err == nil {
		rawDB(t).Exec("DROP TABLE IF EXISTS " + name)
		t.Fatal("CREATE TABLE succeeded on a backend session; want it refused (read-only)")
	}
}

func TestColumnsAndUnique(t *testing.T) {
	b := open(t, backends.Options{})
	raw := rawDB(t)
	name := "ddp_cu_" + suffix()
	if _, err := raw.Exec(`CREATE TABLE ` + name + ` (id BIGINT NOT NULL PRIMARY KEY, u BIGINT, n BIGINT NOT NULL, s TEXT, UNIQUE (u))`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Exec("DROP TABLE " + name) })
	ctx := context.Background()
	cols, err := b.Columns(ctx, "", name)
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) != 4 || cols[0].Name != "id" || cols[0].Type != "BIGINT" || cols[3].Type != "TEXT" {
		t.Errorf("columns = %+v", cols)
	}
	for col, want := range map[string]bool{"id": true, "u": false, "n": false, "ID": true} {
		got, err := b.UniqueNotNull(ctx, "", name, col)
		if err != nil || got != want {
			t.Errorf("UniqueNotNull(%s) = %v, %v; want %v", col, got, err, want)
		}
	}
	if _, err := b.Columns(ctx, "", name+"_missing"); !sqlerr.HasCode(err, sqlerr.UndefinedTable) {
		t.Errorf("missing table: %v", err)
	}
}

// TestExactTableNames: the backend reports the server's
// lower_case_table_names as read by its connections' setup (0: table
// names compare case-sensitively, so MySQL clients' names must match).
func TestExactTableNames(t *testing.T) {
	b := open(t, backends.Options{})
	var lc string
	err := b.Rows(context.Background(), "SELECT @@lower_case_table_names", nil, func(_ []string, row []ir.Value) error {
		lc = row[0].Text()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b.ExactTableNames(), lc == "0"; got != want {
		t.Errorf("ExactTableNames() = %v with lower_case_table_names = %s", got, lc)
	}
}

// TestSessionTimeZoneIsUTC: backend sessions read and write TIMESTAMP
// columns in UTC whatever the server's or the DSN's time_zone.
func TestSessionTimeZoneIsUTC(t *testing.T) {
	dsn := testDSN(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	b, err := Open(context.Background(), dsn+sep+"time_zone=%27%2B09%3A00%27", backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var got string
	err = b.Rows(context.Background(), "SELECT @@session.time_zone", nil, func(_ []string, row []ir.Value) error {
		got = row[0].Text()
		return nil
	})
	if err != nil || got != "+00:00" {
		t.Errorf("session time_zone %q (%v), want +00:00", got, err)
	}
}
