package ledger

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// Crash tests run the ledger in a child process (this test binary re-executed
// with TestCrashHelper selected) that dies at a chosen step, then reopen the
// file in the parent and check what a restarted proxy would see.
//
// A killed process loses nothing the kernel already accepted, so these tests
// check the transaction boundaries (no half-applied charge, no answer without
// its charge), not power-loss durability, which is bbolt's fsync's job.

const (
	envScenario = "DDP_LEDGER_CRASH_SCENARIO"
	envPath     = "DDP_LEDGER_CRASH_PATH"
	envStart    = "DDP_LEDGER_CRASH_START"
	// envCheckpoint sets the child's checkpoint period (Go duration).
	envCheckpoint = "DDP_LEDGER_CRASH_CHECKPOINT"
	// envLease sets the child's Options.Lease.
	envLease = "DDP_LEDGER_CRASH_LEASE"
	// crashExit is the status of a child that reached its crash point;
	// any other status means the scenario failed before it.
	crashExit = 3
)

// crashRelease is a release with every byte value, to catch any re-encoding.
func crashRelease(i int) []byte {
	b := []byte(fmt.Sprintf("release %d:", i))
	for c := range 256 {
		b = append(b, byte(c))
	}
	return b
}

// TestCrashHelper is the child process. It does nothing in a normal run.
func TestCrashHelper(t *testing.T) {
	scenario := os.Getenv(envScenario)
	if scenario == "" {
		t.Skip("only runs as the child of a crash test")
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "crash helper:", err)
		os.Exit(2)
	}
	opts := Options{LockTimeout: 5 * time.Second}
	if v := os.Getenv(envCheckpoint); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			fail(err)
		}
		opts.checkpointEvery = d
	}
	if v := os.Getenv(envLease); v != "" {
		if _, err := fmt.Sscan(v, &opts.Lease); err != nil {
			fail(err)
		}
	}
	l, err := Open(os.Getenv(envPath), opts)
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	limit := policies.Budget{Epsilon: 1e6, Delta: 1}
	switch scenario {
	case "reserve-then-crash":
		// The backend ran, the proxy died before committing.
		if _, err := l.Charge(ctx, budget.Charge{User: "ann", Dataset: "census", Cost: policies.Budget{Epsilon: 0.1, Delta: 1e-6},
			Query: crashQuery}, limit); err != nil {
			fail(err)
		}
		os.Exit(crashExit)
	case "commit-then-crash":
		// Committed, died before sending.
		r, err := l.Reserve(ctx, "ann", "census", eps(0.1), limit)
		if err != nil {
			fail(err)
		}
		if _, err := r.Commit("q0", crashRelease(0)); err != nil {
			fail(err)
		}
		os.Exit(crashExit)
	case "deferred-then-crash":
		// The answer was sent after CommitDeferred; the proxy died before
		// anything carried the commit record to disk.
		r, err := l.Reserve(ctx, "ann", "census", eps(0.1), limit)
		if err != nil {
			fail(err)
		}
		if _, err := r.CommitDeferred("q0", crashRelease(0)); err != nil {
			fail(err)
		}
		os.Exit(crashExit)
	case "loop", "loop-deferred":
		// Reserve, then commit two in three and refund the third, until
		// killed. Each completed step is reported on stdout after it
		// returned: after its fsync for "loop"; for "loop-deferred" when
		// the answer could be sent (reservation durable, commit deferred).
		deferred := scenario == "loop-deferred"
		var start int
		if _, err := fmt.Sscan(os.Getenv(envStart), &start); err != nil {
			fail(err)
		}
		for i := start; ; i++ {
			r, err := l.Reserve(ctx, "ann", "census", eps(0.01), limit)
			if err != nil {
				fail(err)
			}
			if i%3 == 2 {
				if err := r.Refund(); err != nil {
					fail(err)
				}
				fmt.Printf("refunded %d\n", i)
				continue
			}
			commit := r.Commit
			if deferred {
				commit = r.CommitDeferred
			}
			if _, err := commit(fmt.Sprintf("q%d", i), crashRelease(i)); err != nil {
				fail(err)
			}
			fmt.Printf("committed %d\n", i)
		}
	default:
		fail(fmt.Errorf("unknown scenario %q", scenario))
	}
}

func crashChild(t *testing.T, scenario, path string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), envScenario+"="+scenario, envPath+"="+path)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// runCrashChild runs a scenario that ends by itself at its crash point.
func runCrashChild(t *testing.T, scenario, path string) {
	t.Helper()
	err := crashChild(t, scenario, path).Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != crashExit {
		t.Fatalf("child %s: %v, want exit status %d", scenario, err, crashExit)
	}
}

func TestCrashAfterReserve(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	runCrashChild(t, "reserve-then-crash", path)

	h := harnessAt(t, path)
	got := h.spentExact("ann", "census")
	if got.eps.Cmp(rat(t, "1/10")) != 0 || got.delta.Cmp(rat(t, "1/1000000")) != 0 {
		t.Errorf("spent after crash = (ε %v, δ %v), want the reservation still charged (1/10, 1/1000000)", got.eps, got.delta)
	}
	p, err := h.l.Pending()
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 1 || p[0].User != "ann" || p[0].Dataset != "census" ||
		p[0].Cost != (policies.Budget{Epsilon: 0.1, Delta: 1e-6}) {
		t.Errorf("Pending = %+v, want the one reservation of ann/census", p)
	}
	// The audit entry was written by the charge's transaction: durable
	// with it.
	if a := auditAll(t, h.l, budget.AuditFilter{}); len(a) != 1 || len(p) != 1 || a[0].Reservation != p[0].ID || a[0].Query != crashQuery {
		t.Errorf("Audit = %+v, want the crashed charge's entry", a)
	}
}

// crashQuery is the statement of the crash child's charge.
const crashQuery = "SELECT COUNT(*) FROM people"

func TestCrashAfterCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	runCrashChild(t, "commit-then-crash", path)

	h := harnessAt(t, path)
	if got := h.spentExact("ann", "census"); got.eps.Cmp(rat(t, "1/10")) != 0 {
		t.Errorf("spent after crash = %v, want 1/10 charged exactly once", got.eps)
	}
	rel, ok, err := h.l.Lookup("q0")
	if err != nil || !ok || string(rel) != string(crashRelease(0)) {
		t.Errorf("Lookup after crash = %q, %v, %v; want the committed release", rel, ok, err)
	}
	if p, _ := h.l.Pending(); len(p) != 0 {
		t.Errorf("Pending = %+v, want none after commit", p)
	}
}

// TestCrashAfterDeferredCommit: the answer may have been sent, the commit
// record never reached the file. The charge stays (pending), and the lost
// release is not served: a repeat would be charged and drawn afresh.
func TestCrashAfterDeferredCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	runCrashChild(t, "deferred-then-crash", path)

	h := harnessAt(t, path)
	if got := h.spentExact("ann", "census"); got.eps.Cmp(rat(t, "1/10")) != 0 {
		t.Errorf("spent after crash = %v, want 1/10: the sent answer must stay charged", got.eps)
	}
	p, err := h.l.Pending()
	if err != nil {
		t.Fatal(err)
	}
	_, stored, err := h.l.Lookup("q0")
	if err != nil {
		t.Fatal(err)
	}
	// The settle timer may have fired before the exit; either way exactly
	// one of the two records carries the charge.
	if stored == (len(p) == 1) || len(p) > 1 {
		t.Errorf("release stored %v with %d pending reservations; want exactly one of them", stored, len(p))
	}
}

// TestKillDuringCommits SIGKILLs a child that loops reserve → commit/refund
// at varying points, eight times on the same file (each restart resumes
// the loop), then requires a consistent ledger in which the spent total is
// exactly 1/100 per committed or pending reservation.
func TestKillDuringCommits(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes and waits for fsynced steps")
	}
	const rounds = 8
	path, reported := killLoop(t, "loop", rounds)
	h := harnessAt(t, path) // Check also runs at cleanup
	stored, p := checkKilledLoop(t, h, rounds)
	// Every release the child reported committed survived.
	for k := range reported {
		if _, ok, _ := h.l.Lookup(k); !ok {
			t.Errorf("release %s was reported committed but is missing", k)
		}
	}
	// Only the step in flight at each kill may be unreported.
	if stored < len(reported) || stored > len(reported)+rounds {
		t.Errorf("%d releases stored, %d reported", stored, len(reported))
	}
	t.Logf("after %d kills: %d releases (%d reported), %d pending", rounds, stored, len(reported), p)
}

// TestKillDuringDeferredCommits is the same loop with the commit record
// deferred (what the proxy does for a fresh answer): an answer is
// reported — could have been sent — once its reservation is durable. After
// eight SIGKILLs every reported answer is still charged: its release is
// stored or its reservation is pending, and the totals are exact.
func TestKillDuringDeferredCommits(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes and waits for fsynced steps")
	}
	for _, lease := range []string{"0", "0.00001"} {
		// With leases (each 10 ε of the child's 10⁶: a thousand charges)
		// a charge is written, not fdatasynced, before it is reported;
		// a kill cannot take a write back.
		t.Run("lease="+lease, func(t *testing.T) { killDeferred(t, 8, envLease+"="+lease) })
	}
}

// killDeferred kills the loop-deferred child rounds times and checks that
// every answer it reported is charged.
func killDeferred(t *testing.T, rounds int, env ...string) {
	t.Helper()
	path, reported := killLoop(t, "loop-deferred", rounds, env...)
	h := harnessAt(t, path)
	stored, p := checkKilledLoop(t, h, rounds)
	missing := 0
	for k := range reported {
		if h.storedRawOK(k) {
			continue
		}
		missing++
	}
	// A reported answer whose record was lost must be one of the pending
	// (charged) reservations.
	if missing > p {
		t.Errorf("%d reported answers have no stored release but only %d reservations are pending: an answer went out uncharged", missing, p)
	}
	if stored+p < len(reported) {
		t.Errorf("%d stored + %d pending < %d reported answers", stored, p, len(reported))
	}
	t.Logf("after %d kills: %d releases, %d reported (%d without a durable record), %d pending", rounds, stored, len(reported), missing, p)
}

// TestKillDuringCheckpoints is TestKillDuringDeferredCommits with the
// child checkpointing every few milliseconds, so that the kills land
// in every phase of a checkpoint — a rotation, changes logged to the new
// segment while the old one's are applied, the bbolt commit, a segment
// started over — and the restarts replay both segments.
func TestKillDuringCheckpoints(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes and waits for fsynced steps")
	}
	for _, lease := range []string{"0", "0.00001"} {
		t.Run("lease="+lease, func(t *testing.T) { killDeferred(t, 10, envCheckpoint+"=2ms", envLease+"="+lease) })
	}
}

// killLoop runs scenario in a child and SIGKILLs it rounds times at
// varying points, and returns the ledger path and the cache keys the child
// reported committed.
func killLoop(t *testing.T, scenario string, rounds int, env ...string) (string, map[string]bool) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	reported := map[string]bool{} // cache keys whose Commit returned
	for round := range rounds {
		killAfter := 5 + 3*round
		start := round * 1000
		cmd := crashChild(t, scenario, path, append([]string{fmt.Sprintf("%s=%d", envStart, start)}, env...)...)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := 0
		sc := bufio.NewScanner(out)
		var first, last time.Time
		for lines < killAfter && sc.Scan() {
			lines++
			last = time.Now()
			if lines == 1 {
				first = last
			}
			if i, ok := strings.CutPrefix(sc.Text(), "committed "); ok {
				reported["q"+i] = true
			}
		}
		// Wait round/rounds of a step before killing, so that the kill
		// lands at different points of the reserve → commit cycle.
		step := last.Sub(first) / time.Duration(max(lines-1, 1))
		time.Sleep(step * time.Duration(round) / time.Duration(rounds))
		if err := syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// The child may have run ahead of our reading: collect every
		// step it reported before it died.
		for sc.Scan() {
			if i, ok := strings.CutPrefix(sc.Text(), "committed "); ok {
				reported["q"+i] = true
			}
		}
		_ = cmd.Wait()
		if lines < killAfter {
			t.Fatalf("round %d: child wrote only %d lines before dying", round, lines)
		}
	}
	return path, reported
}

// checkKilledLoop checks what every killed loop must leave: a consistent
// ledger, intact releases of committing steps only, and spent exactly
// 1/100 per stored or pending reservation, plus the unused rest of the
// budget leases the kills left (at most one per kill). It returns the
// number of stored releases and of pending reservations (leases not
// counted).
func checkKilledLoop(t *testing.T, h *harness, rounds int) (int, int) {
	t.Helper()
	if err := h.l.Check(); err != nil {
		t.Fatalf("Check after kill: %v", err)
	}
	// Every stored release is intact and belongs to a committing step.
	stored := 0
	err := h.l.db.View(func(tx *bolt.Tx) error {
		return forEachRelease(tx, func(k, v []byte) error {
			stored++
			var i int
			if _, err := fmt.Sscanf(string(k), "q%d", &i); err != nil {
				return err
			}
			if i%3 == 2 {
				return fmt.Errorf("refunded step %d has a release", i)
			}
			if string(v) != string(crashRelease(i)) {
				return fmt.Errorf("release %d corrupted", i)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.l.Pending()
	if err != nil {
		t.Fatal(err)
	}
	// The unused rest of each lease a kill left is a charge of its own in
	// the audit history (settled by Open); the history adds up to spent.
	leased, audited, leases := new(big.Rat), new(big.Rat), 0
	for _, e := range auditAll(t, h.l, budget.AuditFilter{}) {
		x, err := budget.ExactDecimal(e.Cost.Epsilon)
		if err != nil {
			t.Fatal(err)
		}
		if !e.Refunded.IsZero() {
			continue
		}
		audited.Add(audited, x)
		if strings.HasPrefix(e.Query, LeaseAuditQuery) {
			leases++
			leased.Add(leased, x)
		}
	}
	if len(p) > rounds || leases > rounds {
		t.Errorf("%d pending reservations and %d leases left, want at most one each per kill", len(p), leases)
	}
	n := stored + len(p)
	want := new(big.Rat).Mul(big.NewRat(int64(n), 1), big.NewRat(1, 100))
	want.Add(want, leased)
	got := h.spentExact("ann", "census")
	if got.eps.Cmp(want) != 0 {
		t.Errorf("spent = %v, want (%d committed + %d pending) × 1/100 + %s leased = %v", got.eps, stored, len(p), leased.RatString(), want)
	}
	if audited.Cmp(got.eps) != 0 {
		t.Errorf("the audit history adds up to %s, spent is %s", audited.RatString(), got.eps.RatString())
	}
	accts, _ := h.l.All()
	if len(accts) != 1 || accts[0].Queries != uint64(n) {
		t.Errorf("accounts %+v, want one with %d queries", accts, n)
	}
	return stored, len(p)
}
