package postgres

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

const dsnEnv = "DDP_TEST_POSTGRES_DSN"

// testDSN returns the test server's DSN, skipping when none is configured.
// A configured but unreachable server fails the test: a silently skipped
// suite would hide a broken environment.
func testDSN(t testing.TB) string {
	t.Helper()
	dsn := envDSN()
	if dsn == "" {
		t.Skipf("%s is not set; set it (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable) to run the PostgreSQL tests", dsnEnv)
	}
	return dsn
}

func envDSN() string { return os.Getenv(dsnEnv) }

func open(t *testing.T, opts backends.Options) *Backend {
	t.Helper()
	b, err := Open(context.Background(), testDSN(t), opts)
	if err != nil {
		t.Fatalf("%s is set but the server is unusable: %v (cause %v)", dsnEnv, err, sqlerr.As(err).Cause)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// load creates d's tables through a separate, writable pool (backend
// sessions are read-only) and drops them when the test ends.
func load(t *testing.T, d *backendtest.Data) {
	t.Helper()
	raw, err := sql.Open("postgres", testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Drop(context.Background(), raw); err != nil {
			t.Errorf("drop test tables: %v", err)
		}
		raw.Close()
	})
	if err := d.Load(context.Background(), raw, "postgres"); err != nil {
		t.Fatal(err)
	}
}

func suffix() string { return fmt.Sprintf("%d_%d", os.Getpid(), time.Now().UnixNano()) }

// TestRandomAgainstReference compares 400 random BackendQueries (fixed
// seed) with the brute-force Go evaluation over the same rows.
func TestRandomAgainstReference(t *testing.T) {
	b := open(t, backends.Options{StatementTimeout: 10 * time.Second, MaxOpenConns: 2})
	d := backendtest.Generate(rand.New(rand.NewPCG(1, 2)), 40, suffix())
	load(t, d)
	backendtest.CheckRandom(t, d, 42, 400, map[string]backendtest.Aggregator{"postgres": b})
}

// TestRandomDistinctAgainstReference compares 300 random BackendQueries
// with a distinct count (fixed seed) with the brute-force Go evaluation:
// COUNT(DISTINCT x) over the rows each unit keeps after the bound k.
func TestRandomDistinctAgainstReference(t *testing.T) {
	b := open(t, backends.Options{StatementTimeout: 10 * time.Second, MaxOpenConns: 2})
	d := backendtest.Generate(rand.New(rand.NewPCG(3, 5)), 40, "distinct_"+suffix())
	load(t, d)
	backendtest.CheckRandomDistinct(t, d, 43, 300, map[string]backendtest.Aggregator{"postgres": b})
}

func TestSessionSettings(t *testing.T) {
	b := open(t, backends.Options{StatementTimeout: 1500 * time.Millisecond})
	settings := map[string]string{"statement_timeout": "1500ms", "default_transaction_read_only": "on"}
	var version int
	err := b.Rows(context.Background(), "SELECT current_setting('server_version_num')::int", nil,
		func(_ []string, row []ir.Value) error { version = int(row[0].Int); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if version >= 140000 {
		// A statement on a connection the proxy cut stops within a second.
		settings["client_connection_check_interval"] = "1s"
	}
	for setting, want := range settings {
		var got string
		err := b.Rows(context.Background(), "SELECT current_setting($1)", []ir.Value{ir.String(setting)},
			func(_ []string, row []ir.Value) error { got = row[0].Str; return nil })
		if err != nil || got != want {
			t.Errorf("%s = %q (%v), want %q", setting, got, err, want)
		}
	}
}

func TestErrors(t *testing.T) {
	b := open(t, backends.Options{StatementTimeout: 50 * time.Millisecond})
	dsn := testDSN(t)
	unreachable, err := New("postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=5", backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer unreachable.Close()
	badUser, err := New(withUser(dsn, "ddp_no_such_role"), backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer badUser.Close()

	count := &ir.BackendQuery{From: ir.TableRef{Name: "ddp_secret_missing_table"}, Aggs: []ir.BackendAgg{{Kind: ir.CountRows}}}
	aggregate := func(be *Backend, ctx context.Context) error {
		_, err := backendtest.Collect(ctx, be, count)
		return err
	}
	rows := func(ctx context.Context, q string) error {
		return b.Rows(ctx, q, nil, func([]string, []ir.Value) error { return nil })
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		run  func() error
		want sqlerr.Code
	}{
		{"unreachable server", func() error { return aggregate(unreachable, context.Background()) }, sqlerr.BackendUnavailable},
		{"unreachable server at Open", func() error {
			_, err := Open(context.Background(), "postgres://postgres@127.0.0.1:1/test?sslmode=disable", backends.Options{})
			return err
		}, sqlerr.BackendUnavailable},
		{"unknown role", func() error { return aggregate(badUser, context.Background()) }, sqlerr.BackendUnavailable},
		{"statement timeout", func() error { return rows(context.Background(), "SELECT pg_sleep(1)") }, sqlerr.StatementTimeout},
		{"cancelled before", func() error { return aggregate(b, cancelled) }, sqlerr.QueryCanceled},
		{"cancelled during", func() error {
			slow := open(t, backends.Options{}) // no timeout: only the cancel can stop it
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			return slow.Rows(ctx, "SELECT pg_sleep(3)", nil, func([]string, []ir.Value) error { return nil })
		}, sqlerr.QueryCanceled},
		{"missing table", func() error { return aggregate(b, context.Background()) }, sqlerr.BackendFailed},
		{"syntax error in pass-through", func() error { return rows(context.Background(), "SELEC 1") }, sqlerr.BackendFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			err := tt.run()
			if !sqlerr.HasCode(err, tt.want) {
				t.Fatalf("got %v (cause %v), want code %s", err, sqlerr.As(err).Cause, tt.want.Name)
			}
			if time.Since(start) > 2*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
			msg := sqlerr.As(err).Error()
			for _, leak := range []string{"ddp_secret_missing_table", "relation", "does not exist", "pq:", "SELEC", "ddp_no_such_role"} {
				if strings.Contains(msg, leak) {
					t.Errorf("client message %q contains backend text %q", msg, leak)
				}
			}
		})
	}
	if err := rows(context.Background(), "SELECT 1"); err != nil {
		t.Fatalf("pool unusable after errors: %v", err)
	}
}

// withUser replaces the user of a URL DSN.
func withUser(dsn, user string) string {
	i := strings.Index(dsn, "://")
	j := strings.Index(dsn, "@")
	if i < 0 || j < 0 {
		return dsn
	}
	return dsn[:i+3] + user + dsn[j:]
}

func TestColumns(t *testing.T) {
	b := open(t, backends.Options{})
	d := backendtest.Generate(rand.New(rand.NewPCG(3, 4)), 1, suffix())
	load(t, d)
	cols, err := b.Columns(context.Background(), "", d.PublicName)
	if err != nil {
		t.Fatal(err)
	}
	want := []backends.ColumnInfo{{Name: "id", Type: "bigint"}, {Name: "region", Type: "text"}, {Name: "w", Type: "bigint"}}
	if fmt.Sprint(cols) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", cols, want)
	}
	if _, err := b.Columns(context.Background(), "public", "ddp_missing"); !sqlerr.HasCode(err, sqlerr.UndefinedTable) {
		t.Errorf("missing table: got %v, want UndefinedTable", err)
	}
}

func TestRowsDecoding(t *testing.T) {
	b := open(t, backends.Options{})
	var got []ir.Value
	var cols []string
	err := b.Rows(context.Background(),
		`SELECT $1::bigint AS i, 2.5::float8 AS f, 'x'::text AS s, true AS b, NULL::int AS n, 12.00::numeric AS d, 12::numeric AS e, DATE '2024-02-29' AS dt`,
		[]ir.Value{ir.Int(-7)}, func(c []string, r []ir.Value) error { cols, got = c, r; return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []ir.Value{ir.Int(-7), ir.Float(2.5), ir.String("x"), ir.Bool(true), ir.Null(), ir.Float(12), ir.Int(12), ir.String("2024-02-29")}
	if strings.Join(cols, ",") != "i,f,s,b,n,d,e,dt" || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v %v, want %v", cols, got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("column %s: got %#v, want %#v", cols[i], got[i], want[i])
		}
	}
}

func TestUniqueNotNull(t *testing.T) {
	b := open(t, backends.Options{})
	db, err := sql.Open("postgres", testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	s := suffix()
	tbl := "ddp_uniq_" + s
	stmts := []string{
		fmt.Sprintf(`CREATE TABLE %s (pk BIGINT PRIMARY KEY, u TEXT UNIQUE, nu TEXT NOT NULL UNIQUE, p INT NOT NULL, q INT NOT NULL)`, tbl),
		fmt.Sprintf(`CREATE UNIQUE INDEX ON %s (p) WHERE p > 0`, tbl),
		fmt.Sprintf(`CREATE UNIQUE INDEX ON %s (p, q)`, tbl),
	}
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS " + tbl); db.Close() })
	for col, want := range map[string]bool{"pk": true, "PK": true, "u": false, "nu": true, "p": false, "q": false} {
		got, err := b.UniqueNotNull(context.Background(), "", tbl, col)
		if err != nil || got != want {
			t.Errorf("%s: got %v (%v), want %v", col, got, err, want)
		}
	}
}

// TestSessionTimeZoneIsUTC: whatever zone the connection asks for (here
// Asia/Tokyo through the DSN), backend sessions read and write dates in
// UTC and the ISO style, so a timestamptz answer cannot depend on it.
func TestSessionTimeZoneIsUTC(t *testing.T) {
	dsn := testDSN(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	b, err := Open(context.Background(), dsn+sep+"timezone=Asia/Tokyo", backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var got []string
	err = b.Rows(context.Background(), "SELECT current_setting('TimeZone'), current_setting('DateStyle'), CAST(CAST($1 AS TIMESTAMPTZ) AS TEXT)",
		[]ir.Value{ir.String("2010-06-01 12:00:00+00")}, func(_ []string, row []ir.Value) error {
			for _, v := range row {
				got = append(got, v.Text())
			}
			return nil
		})
	if err != nil || len(got) != 3 || got[0] != "UTC" || !strings.HasPrefix(got[1], "ISO") || got[2] != "2010-06-01 12:00:00+00" {
		t.Errorf("session settings %q (%v), want UTC, ISO and 2010-06-01 12:00:00+00", got, err)
	}
}
