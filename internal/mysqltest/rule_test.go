package mysqltest_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/internal/mysqltest"
	"github.com/ddp-proxy/ddp-proxy/internal/pgtest"
	"github.com/ddp-proxy/ddp-proxy/internal/testaddr"
)

// The rule both DSN helpers keep for every database test: without the
// variable a test skips saying so; with it set and no server the test
// fails, never skips (a CI run with a broken database must not pass).
// Both helpers are checked here, with one recorder.

// recorder is a testing.TB that records Skipf/Fatalf and ends the
// calling goroutine as the real ones do.
type recorder struct {
	testing.TB
	skipped, failed string
	cleanups        []func()
}

func (r *recorder) Helper()          {}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls f with a recorder on its own goroutine (Goexit ends it) and
// then runs the cleanups f registered.
func run(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	return r
}

func TestDSNHelpersSkipUnsetFailDown(t *testing.T) {
	dead := testaddr.Free(t)
	for _, c := range []struct {
		name, env, down string
		lookup          func(testing.TB) string
		open            func(testing.TB, string)
	}{
		{
			name: "mysql", env: mysqltest.Env, down: "root@tcp(" + dead + ")/test?timeout=2s",
			lookup: func(tb testing.TB) string { return mysqltest.DSN(tb, "the probe") },
			open:   func(tb testing.TB, dsn string) { mysqltest.Open(tb, dsn) },
		},
		{
			name: "postgres/Connect", env: "DDP_TEST_POSTGRES_DSN", down: "postgres://postgres@" + dead + "/test?sslmode=disable&connect_timeout=2",
			lookup: func(tb testing.TB) string { return pgtest.DSN(tb, "the probe") },
			open:   func(tb testing.TB, dsn string) { pgtest.Connect(tb, dsn) },
		},
		{
			name: "postgres/OpenDB", env: "DDP_TEST_POSTGRES_DSN", down: "postgres://postgres@" + dead + "/test?sslmode=disable&connect_timeout=2",
			lookup: func(tb testing.TB) string { return pgtest.DSN(tb, "the probe") },
			open:   func(tb testing.TB, dsn string) { pgtest.OpenDB(tb, dsn) },
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(c.env, "")
			r := run(t, func(tb testing.TB) { c.open(tb, c.lookup(tb)) })
			if r.failed != "" || !strings.Contains(r.skipped, c.env) || !strings.Contains(r.skipped, "the probe") {
				t.Errorf("unset: skipped %q, failed %q; want a skip naming %s and what is skipped", r.skipped, r.failed, c.env)
			}
			t.Setenv(c.env, c.down)
			r = run(t, func(tb testing.TB) { c.open(tb, c.lookup(tb)) })
			if r.skipped != "" || !strings.Contains(r.failed, "unreachable") {
				t.Errorf("set, server down: skipped %q, failed %q; want a failure saying the server is unreachable", r.skipped, r.failed)
			}
		})
	}
}
