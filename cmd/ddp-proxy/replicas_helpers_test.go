package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ddp-proxy/ddp-proxy/demo"
	"github.com/ddp-proxy/ddp-proxy/internal/testaddr"
	"github.com/ddp-proxy/ddp-proxy/internal/testlog"
	"github.com/ddp-proxy/ddp-proxy/ledger/pgledger"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// The replica tests run ddp-proxy serve as separate processes (this test
// binary re-executed through TestMainHelper) on one PostgreSQL ledger.
// DDP_TEST_REPLICAS sets their number (default 3); each gets
// clientsPerReplica clients (DDP_TEST_CLIENTS, default 32).
var clientsPerReplica = envCount("DDP_TEST_CLIENTS", 32)

func envCount(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func replicaCount(t *testing.T) int {
	if s := os.Getenv("DDP_TEST_REPLICAS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("DDP_TEST_REPLICAS=%q", s)
		}
		return n
	}
	return 3
}

// replica is one running ddp-proxy serve process.
type replica struct {
	cmd    *exec.Cmd
	addr   string
	policy string
	stderr *testlog.Sink
	done   chan error
}

// replicaSetup is the demo with its ledger in a fresh PostgreSQL schema.
type replicaSetup struct {
	files  demo.Files
	dsn    string
	schema string
	limit  policies.Budget // analyst's census budget
}

func newReplicaSetup(t *testing.T) *replicaSetup {
	t.Helper()
	dsn := ledgerTestDSN(t)
	s := &replicaSetup{dsn: dsn, schema: ledgerTestSchema(t, dsn)}
	var err error
	if s.files, err = demo.Build(context.Background(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	pol, err := policies.Load(s.files.Policy)
	if err != nil {
		t.Fatal(err)
	}
	s.limit = pol.User("analyst").Budgets["census"]
	return s
}

// start runs n replicas and waits until each accepts connections. They
// are stopped (SIGTERM) when the test ends.
func (s *replicaSetup) start(t *testing.T, n int) []*replica {
	t.Helper()
	var rs []*replica
	dir := filepath.Dir(s.files.Policy)
	ledgerDSN := smallPool(t, s.dsn, n)
	for i := range n {
		addr := testaddr.Free(t)
		pol := pgLedgerPolicyNamed(t, s.files, ledgerDSN, s.schema, addr, "off", fmt.Sprintf("replica%d.yaml", i))
		rs = append(rs, launch(t, pol, addr, filepath.Join(dir, fmt.Sprintf("replica%d.pid", i))))
	}
	waitListening(t, rs)
	return rs
}

// launch starts ddp-proxy serve on policy pol (listening on addr) in a
// child process, stopped (SIGTERM) when the test ends.
func launch(t *testing.T, pol, addr, pidFile string) *replica {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainHelper$")
	cmd.Env = append(os.Environ(), envMainArgs+"="+joinArgs("serve", "--policy", pol, "--pid-file", pidFile))
	r := &replica{cmd: cmd, addr: addr, policy: pol, stderr: &testlog.Sink{}, done: make(chan error, 1)}
	cmd.Stderr = r.stderr
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- cmd.Wait() }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// waitListening waits until every replica accepts connections.
func waitListening(t *testing.T, rs []*replica) {
	t.Helper()
	for _, r := range rs {
		deadline := time.Now().Add(60 * time.Second)
		for {
			c, err := net.DialTimeout("tcp", r.addr, time.Second)
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica on %s did not start: %v\n%s", r.addr, err, r.stderr)
			}
			select {
			case err := <-r.done:
				t.Fatalf("replica on %s exited: %v\n%s", r.addr, err, r.stderr)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

func joinArgs(args ...string) string {
	out := args[0]
	for _, a := range args[1:] {
		out += "\x1f" + a
	}
	return out
}

// stop ends a replica gracefully (SIGTERM), or kills it after 30 s.
func (r *replica) stop(t *testing.T) {
	if r.cmd.ProcessState != nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
		t.Errorf("replica on %s ignored SIGTERM\n%s", r.addr, r.stderr)
	}
}

// connectReplica opens a client session as analyst at ε = eps.
func connectReplica(ctx context.Context, addr string, eps float64) (*pgx.Conn, error) {
	return connectNoticed(ctx, addr, eps, nil)
}

// connectNoticed is connectReplica, passing every notice's message to
// onNotice (nil: none).
func connectNoticed(ctx context.Context, addr string, eps float64, onNotice func(string)) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", addr))
	if err != nil {
		return nil, err
	}
	if onNotice != nil {
		cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { onNotice(n.Message) }
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("SET ddp.epsilon = %g", eps)); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	return conn, nil
}

// preSpend charges analyst's census budget so that exactly left remains.
func (s *replicaSetup) preSpend(t *testing.T, left string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), s.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	l, err := pgledger.Open(context.Background(), s.dsn, pgledger.Options{Schema: s.schema, Replica: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// One reservation of (limit − left), computed by PostgreSQL in NUMERIC
	// from the decimals, so the remainder is exact.
	var spend float64
	if err := conn.QueryRow(context.Background(), "SELECT ($1::numeric - $2::numeric)::float8",
		strconv.FormatFloat(s.limit.Epsilon, 'g', -1, 64), left).Scan(&spend); err != nil {
		t.Fatal(err)
	}
	r, err := l.Reserve(context.Background(), "analyst", "census", policies.Budget{Epsilon: spend}, s.limit)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit("", nil); err != nil {
		t.Fatal(err)
	}
}

// ledgerTotals reads analyst's census account and the pending rows, with
// a comparison made by PostgreSQL in NUMERIC.
func (s *replicaSetup) numericTrue(t *testing.T, query string, args ...any) bool {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), s.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var ok bool
	if err := conn.QueryRow(context.Background(), fmt.Sprintf(query, s.schema), args...).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

func (s *replicaSetup) check(t *testing.T) {
	t.Helper()
	l, err := pgledger.Open(context.Background(), s.dsn, pgledger.Options{Schema: s.schema, Replica: "check"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Check(context.Background()); err != nil {
		t.Error(err)
	}
}

func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// smallPool caps each of n replicas' ledger pool (2 × pool_max_conns
// connections with the flight holds) so that all of them fit the
// server's max_connections beside the other packages' tests that run on
// it at the same time (at most 4, the tests' default; fewer when
// DDP_TEST_REPLICAS asks for many replicas). A server too small for n
// replicas even at one connection per pool fails the test saying so,
// rather than letting the replicas fail closed (08006) on every query.
func smallPool(t *testing.T, dsn string, n int) string {
	t.Helper()
	size := 4
	if n > 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatalf("ledger database: %v", err)
		}
		var maxConns, reserved int
		err = conn.QueryRow(ctx, "SELECT current_setting('max_connections')::int, current_setting('superuser_reserved_connections')::int").Scan(&maxConns, &reserved)
		conn.Close(ctx)
		if err != nil {
			t.Fatalf("ledger database: reading max_connections: %v", err)
		}
		// Headroom for the other packages' tests and this test's own
		// connections to the ledger database.
		free := maxConns - reserved - 30
		size = min(size, free/(2*n))
		if size < 1 {
			t.Fatalf("%d replicas need at least %d connections to the ledger database (two pools of one each) beside 30 for other tests; "+
				"the server allows %d (max_connections %d, %d reserved): raise max_connections or lower DDP_TEST_REPLICAS",
				n, 2*n, maxConns-reserved, maxConns, reserved)
		}
	}
	opt := fmt.Sprintf("pool_max_conns=%d", size)
	switch {
	case !strings.Contains(dsn, "://"):
		return dsn + " " + opt
	case strings.Contains(dsn, "?"):
		return dsn + "&" + opt
	}
	return dsn + "?" + opt
}
