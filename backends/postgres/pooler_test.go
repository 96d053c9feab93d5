package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/internal/backendtest"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// pgbouncer starts PgBouncer in transaction pooling mode in front of the
// test server, with two server connections, and returns a DSN through it.
// Without the pgbouncer binary the test is skipped, except under CI
// (.ci/run installs it).
func pgbouncer(t *testing.T) string {
	t.Helper()
	target, err := url.Parse(testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("pgbouncer is not installed (.ci/run installs Debian's pgbouncer)")
		}
		t.Skip("pgbouncer is not installed (Debian: apt-get install pgbouncer): skipping the pooler test")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	// PgBouncer refuses to run as root: under root it runs as postgres,
	// which must reach its files (t.TempDir's parent is private).
	dir, err := os.MkdirTemp("", "ddp-pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var args []string
	if u, err := user.Current(); err == nil && u.Uid == "0" {
		args = append(args, "-u", "postgres")
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	db := target.Path[1:]
	ini := fmt.Sprintf(`[databases]
%s = host=%s port=%s dbname=%s user=%s
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = 2
unix_socket_dir =
logfile = %s
`, db, target.Hostname(), target.Port(), db, target.User.Username(), port,
		filepath.Join(dir, "users.txt"), filepath.Join(dir, "pgbouncer.log"))
	for name, body := range map[string]string{"pgbouncer.ini": ini, "users.txt": fmt.Sprintf("%q \"\"\n", target.User.Username()), "pgbouncer.log": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, name), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, append(args, filepath.Join(dir, "pgbouncer.ini"))...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	dsn := fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", target.User.Username(), port, db)
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		c, err := sql.Open("postgres", dsn)
		if err == nil {
			err = c.Ping()
			c.Close()
		}
		if err == nil {
			return dsn
		}
		if time.Since(start) > 10*time.Second {
			log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			t.Fatalf("pgbouncer did not accept connections: %v\n%s%s", err, out.String(), log)
		}
	}
}

// TestOwnSession: a direct connection has a server session of its own; one
// through PgBouncer in transaction mode does not (its startup key is
// PgBouncer's), so the engine caches no statement on it.
func TestOwnSession(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		dsn  string
		want bool
	}{{"direct", testDSN(t), true}, {"pgbouncer", pgbouncer(t), false}} {
		conn, err := pq.NewConnector(c.dsn)
		if err != nil {
			t.Fatal(err)
		}
		dc, err := conn.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ownSession(ctx, dc)
		dc.Close()
		if err != nil || got != c.want {
			t.Errorf("%s: ownSession = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

// TestPreparedStatementsBehindTransactionPooler: with the statement cache
// on, private aggregates of different shapes from several connections
// through PgBouncer in transaction mode (which hands each transaction to
// any of its server connections) all get their own, right answers: a
// statement prepared on one server session is never looked up by name in
// another, where the same name may be another statement or none.
func TestPreparedStatementsBehindTransactionPooler(t *testing.T) {
	table, _ := people(t)
	b, err := Open(context.Background(), pgbouncer(t), backends.Options{MaxOpenConns: 4, PreparedStatements: StatementCacheSize})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// Shapes with their answers: F 33, M 67 in all; age <> 200 keeps
	// everyone, age < 0 no one (no group), age > 0 everyone.
	shapes := []struct {
		op   ir.CmpOp
		f, m int64
	}{{ir.OpNe, 33, 67}, {ir.OpGt, 33, 67}, {ir.OpLt, 0, 0}}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 30 {
				s := shapes[(w+i)%len(shapes)]
				lit := int64(200)
				if s.op != ir.OpNe {
					lit = 0
				}
				q := countBySex(table, lit)
				q.Where = ir.Compare{Op: s.op, L: ir.ColumnRef{Qualifier: "t", Name: "age"}, R: ir.Literal{Value: ir.Int(lit)}}
				got, err := backendtest.Collect(context.Background(), b, q)
				switch {
				case err != nil:
					errs <- fmt.Errorf("worker %d query %d: %w", w, i, err)
					return
				case s.f == 0 && len(got) != 0, s.f != 0 && !bySex(got, s.f, s.m):
					errs <- fmt.Errorf("worker %d query %d (%v): %v, want F %d M %d", w, i, s.op, got, s.f, s.m)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
