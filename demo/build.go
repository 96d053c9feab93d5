package demo

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	_ "github.com/ncruces/go-sqlite3/driver" // registers "sqlite3"
)

// File names under the demo directory. The policy refers to the database
// and the ledger by these relative names, so the directory can be moved.
const (
	DatabaseFile = "demo.db"
	PolicyFile   = "demo-policy.yaml"
	LedgerFile   = "demo-ledger.db"
)

// Files are the absolute paths Build wrote (Database, Policy) or that the
// policy names (Ledger, which Build never creates or removes).
type Files struct {
	Database string
	Policy   string
	Ledger   string
}

// Listen are the front ends' addresses the demo policy names: the policy
// is the file a newcomer reads to learn how to connect, so it says where
// this demo listens.
type Listen struct {
	Postgres string // host:port
	MySQL    string // host:port, or "off"
}

// Where the demo listens unless told otherwise.
const (
	DefaultPostgres = "127.0.0.1:15432"
	DefaultMySQL    = "127.0.0.1:13306"
)

// Build is BuildListen on the default addresses.
func Build(ctx context.Context, dir string) (Files, error) {
	return BuildListen(ctx, dir, Listen{Postgres: DefaultPostgres, MySQL: DefaultMySQL})
}

// BuildListen creates (or recreates) the demo database and policy under
// dir, the policy listening on l, and returns their paths. An existing
// database is replaced; the ledger is left alone, so budgets spent in an
// earlier demo stay spent (the data is identical on every build, so its
// cached releases stay valid). Delete Files.Ledger for fresh budgets.
func BuildListen(ctx context.Context, dir string, l Listen) (Files, error) {
	if err := l.check(); err != nil {
		return Files{}, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Files{}, fmt.Errorf("demo directory %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return Files{}, fmt.Errorf("create demo directory: %w", err)
	}
	f := Files{
		Database: filepath.Join(abs, DatabaseFile),
		Policy:   filepath.Join(abs, PolicyFile),
		Ledger:   filepath.Join(abs, LedgerFile),
	}
	if err := buildDatabase(ctx, f.Database); err != nil {
		return Files{}, fmt.Errorf("build demo database %s: %w", f.Database, err)
	}
	if err := writePolicy(f.Policy, l); err != nil {
		return Files{}, fmt.Errorf("write demo policy %s: %w", f.Policy, err)
	}
	return f, nil
}

// buildDatabase writes a fresh database file: the old one and its journal
// files are removed first, so a half-written or outdated database from an
// earlier run can never be mixed with new rows.
func buildDatabase(ctx context.Context, path string) (err error) {
	for _, p := range []string{path, path + "-journal", path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove old file: %w", err)
		}
	}
	people, err := peopleRows()
	if err != nil {
		return err
	}
	social := generateSocial()

	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=rwc")
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	// One connection: the driver's connections are independent SQLite
	// handles, and one is all a sequential load needs.
	db.SetMaxOpenConns(1)

	tables := []table{
		peopleTable(people),
		cellsTable(),
		categoriesTable(),
		checkinsTable(social.checkins),
		friendshipsTable(social.friendships),
		payrollTable(generatePayroll()),
		publishedTable(people),
	}
	for _, t := range tables {
		if err := t.write(ctx, db); err != nil {
			return fmt.Errorf("table %s: %w", t.name, err)
		}
	}
	if _, err := db.ExecContext(ctx, checkinsDDPView); err != nil {
		return fmt.Errorf("view checkins_ddp: %w", err)
	}
	return nil
}

// table is one table to create and fill.
type table struct {
	name   string
	create string // CREATE TABLE statement
	cols   int    // number of columns of insert
	rows   int
	row    func(i int, dst []any) // fills dst (len cols) with row i
}

// insertBatch rows go into one INSERT statement: far fewer statement
// executions than one per row, and 50 rows × 15 columns stays below
// SQLite's default limit of 32766 bound parameters.
const insertBatch = 50

// write creates the table and inserts its rows in one transaction.
func (t table) write(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // no-op after Commit
	if _, err := tx.ExecContext(ctx, t.create); err != nil {
		return err
	}
	var full *sql.Stmt
	args := make([]any, 0, insertBatch*t.cols)
	for start := 0; start < t.rows; start += insertBatch {
		n := min(insertBatch, t.rows-start)
		args = args[:n*t.cols]
		for i := range n {
			t.row(start+i, args[i*t.cols:(i+1)*t.cols])
		}
		if n == insertBatch {
			if full == nil {
				if full, err = tx.PrepareContext(ctx, t.insertSQL(insertBatch)); err != nil {
					return err
				}
				defer full.Close()
			}
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, t.insertSQL(n), args...)
		}
		if err != nil {
			return err
		}
	}
	return tx.Commit()
}

// insertSQL is INSERT INTO name VALUES (?, ...), ... for n rows.
func (t table) insertSQL(n int) string {
	b := []byte("INSERT INTO " + t.name + " VALUES ")
	for i := range n {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, '(')
		for j := range t.cols {
			if j > 0 {
				b = append(b, ", "...)
			}
			b = append(b, '?')
		}
		b = append(b, ')')
	}
	return string(b)
}
