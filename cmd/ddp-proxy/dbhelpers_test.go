package main

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ddp-proxy/ddp-proxy/demo"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// pgAnalystPolicyHead begins a policy that serves a PostgreSQL backend
// (first verb: its DSN; second: the ledger's path) on the PostgreSQL
// front end only, auth trust, to the user analyst (SCRAM verifier of
// "demo"). The text that follows it goes on with the analyst's entry
// (budgets: ...) and the datasets.
const pgAnalystPolicyHead = `version: 1
backend: {driver: postgres, dsn: %q}
listen: {postgres: "127.0.0.1:0", mysql: "off", auth: trust}
ledger: {path: %q}
users:
  - name: analyst
    scram_sha_256: "SCRAM-SHA-256$4096:ZGRwLXByb3h5LWRlbW8tc2FsdCE=$qAPd8V/SnKFcyDDCKp0IQLTsCwRJ/RRL6UQFwfbZ4M4=:NohECoZRG0EHMADxICmNaj7uHHXk9KtR7jVNv8Y7IE8="
`

// loadPolicyText writes yaml to dir/p.yaml and loads it (relative paths in
// it, such as the ledger's, are read against dir).
func loadPolicyText(t testing.TB, dir, yaml string) *policies.Policy {
	t.Helper()
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	pol, err := policies.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

// noticeLog holds the NOTICE messages a connection received, in order.
type noticeLog struct {
	mu   sync.Mutex
	msgs []string
}

// count returns how many notices have arrived.
func (l *noticeLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.msgs)
}

// since returns the notices after the first k, a line each.
func (l *noticeLog) since(k int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.msgs[k:], "\n")
}

// last returns the latest notice ("" before any).
func (l *noticeLog) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.msgs) == 0 {
		return ""
	}
	return l.msgs[len(l.msgs)-1]
}

// connectNotices connects pgx to url (its default query mode), collecting
// the notices it receives; closed when the test ends.
func connectNotices(t testing.TB, url string) (*pgx.Conn, *noticeLog) {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	log := &noticeLog{}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		log.mu.Lock()
		log.msgs = append(log.msgs, n.Message)
		log.mu.Unlock()
	}
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn, log
}

// connectPgxURL connects pgx to url in the given mode, closed when the
// test ends (closing it earlier is harmless).
func connectPgxURL(t testing.TB, url string, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// openDB opens a database/sql pool (a client of the proxy, or a backend
// whose reachability the caller checks), closed when the test ends.
func openDB(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// scanText reads the rows left in the current result set of rows as text,
// a NULL as null (tests differ in whether NULL must stay visible, "NULL",
// or read as the empty string). It does not close rows and does not check
// rows.Err: callers that read one result set do both, and a multi-result
// reader moves on with NextResultSet first.
func scanText(rows *sql.Rows, null string) ([][]string, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = null
			if v.Valid {
				row[i] = v.String
			}
		}
		out = append(out, row)
	}
	return out, nil
}

// pgxResult is what a statement returned, for the lexer tests, which log
// it whatever it is and fail only on its shape.
type pgxResult struct {
	cols int     // columns described
	vals [][]any // rows read before any error
	err  error   // the error that ended the rows, if any
}

// queryPgx runs q on conn; the error is Query's own (the statement never
// ran), a later one is in the result.
func queryPgx(conn *pgx.Conn, q string) (pgxResult, error) {
	rows, err := conn.Query(context.Background(), q)
	if err != nil {
		return pgxResult{}, err
	}
	defer rows.Close()
	r := pgxResult{cols: len(rows.FieldDescriptions())}
	for rows.Next() {
		v, _ := rows.Values()
		r.vals = append(r.vals, v)
	}
	r.err = rows.Err()
	return r, nil
}

// resultShape runs q on db and returns the result's column names and its
// row count (rows up to an error), or Query's error when it did not run.
func resultShape(db *sql.DB, q string) (cols []string, n int, err error) {
	rows, err := db.Query(q)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	cols, _ = rows.Columns()
	for rows.Next() {
		n++
	}
	return cols, n, nil
}

// demoPolicy builds the demo (SQLite database and policy) in a fresh
// directory and loads its policy, which the caller may edit before
// serving it.
func demoPolicy(t *testing.T) (demo.Files, *policies.Policy) {
	t.Helper()
	files, err := demo.Build(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policies.Load(files.Policy)
	if err != nil {
		t.Fatal(err)
	}
	return files, pol
}

// mysqlConn opens a go-sql-driver pool on dsn and takes one connection
// from it (one MySQL session: settings and KILL ids hold across calls).
// Both close when the test ends.
func mysqlConn(t *testing.T, dsn string) (*sql.DB, *sql.Conn) {
	t.Helper()
	db := openDB(t, "mysql", dsn)
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return db, conn
}
