package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/ledger/pgledger"
)

// TestReplicasNeverOverspend: N replica processes × 32 clients, each
// client one distinct query at ε = 0.1, on a budget with exactly 0.45
// left: exactly 4 answers, every other query refused with 53400, and the
// stored total is exactly the limit − 0.05.
func TestReplicasNeverOverspend(t *testing.T) {
	s := newReplicaSetup(t)
	s.preSpend(t, "0.45")
	rs := s.start(t, replicaCount(t))
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	answered, refused := 0, 0
	start := make(chan struct{})
	for ri, r := range rs {
		for c := range clientsPerReplica {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conn, err := connectReplica(ctx, r.addr, 0.1)
				if err != nil {
					t.Error(err)
					return
				}
				defer conn.Close(ctx)
				<-start
				lo := 17 + (ri*clientsPerReplica+c)%60
				hi := lo + 1 + (ri*clientsPerReplica+c)/60
				var n int64
				err = conn.QueryRow(ctx, fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age > %d AND age < %d", lo, hi+5)).Scan(&n)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					answered++
				case sqlState(err) == "53400":
					refused++
				default:
					t.Errorf("replica %d client %d: %v", ri, c, err)
				}
			}()
		}
	}
	time.Sleep(200 * time.Millisecond) // let the clients connect
	close(start)
	wg.Wait()
	total := len(rs) * clientsPerReplica
	t.Logf("%d replicas × %d clients: %d answered, %d refused", len(rs), clientsPerReplica, answered, refused)
	if answered != 4 || refused != total-4 {
		t.Errorf("%d answered and %d refused, want 4 and %d (0.45 left at 0.1 each)", answered, refused, total-4)
	}
	if !s.numericTrue(t, `SELECT spent_epsilon = $1::numeric - 0.05 FROM %s.budgets WHERE user_name = 'analyst' AND dataset = 'census'`,
		strconv.FormatFloat(s.limit.Epsilon, 'g', -1, 64)) {
		t.Error("the stored total is not exactly limit − 0.05")
	}
	s.check(t)
}

// TestReplicasIdenticalQueryChargedOnce: in each of several rounds,
// every client of every replica sends the same fresh query at once; each
// is charged once and every client sees the same value.
func TestReplicasIdenticalQueryChargedOnce(t *testing.T) {
	s := newReplicaSetup(t)
	rs := s.start(t, replicaCount(t))
	ctx := context.Background()
	const rounds = 5
	var conns []*pgx.Conn
	for _, r := range rs {
		for range clientsPerReplica {
			conn, err := connectReplica(ctx, r.addr, 0.1)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			conns = append(conns, conn)
		}
	}
	for round := range rounds {
		var wg sync.WaitGroup
		var mu sync.Mutex
		values := map[int64]int{}
		start := make(chan struct{})
		for _, conn := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				var n int64
				if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age > %d", 30+round)).Scan(&n); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				values[n]++
				mu.Unlock()
			}()
		}
		close(start)
		wg.Wait()
		if len(values) != 1 {
			t.Errorf("round %d: clients saw %d different values: %v", round, len(values), values)
		}
	}
	if !s.numericTrue(t, `SELECT spent_epsilon = 0.1 * $1 AND queries = $1 FROM %s.budgets WHERE user_name = 'analyst' AND dataset = 'census'`, rounds) {
		t.Errorf("the %d queries were not charged exactly once each (0.1)", rounds)
	}
	s.check(t)
	// budget and audit read the shared ledger while the replicas serve.
	out, stderr, code := runMainIO(t, nil, "budget", "--policy", rs[0].policy, "--user", "analyst")
	// δ: no count spends any, so all of analyst's is left (pgledger's Remaining).
	row := fmt.Sprintf(`(?m)^analyst\s+census\s+10\s+0\.5\s+9\.5\s+%[1]s\s+0\s+%[1]s\s*$`, regexp.QuoteMeta(fmt.Sprintf("%g", s.limit.Delta)))
	if code != 0 || s.limit.Delta <= 0 || !regexp.MustCompile(row).MatchString(out) {
		t.Errorf("budget while serving: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = runMainIO(t, nil, "audit", "--policy", rs[0].policy, "--json")
	if lines := strings.Count(out, "\"dataset\":\"census\""); code != 0 || lines != rounds {
		t.Errorf("audit while serving: exit %d, %d census charges, want %d\n%s%s", code, lines, rounds, out, stderr)
	}
}

// TestReplicaKill9KeepsCharges: clients query through every replica while
// one replica is killed with SIGKILL. Every answer a client received is
// charged, nothing is charged beyond what was asked, the killed replica's
// unfinished reservations stay pending and charged under its name, and
// the ledger's invariants hold.
func TestReplicaKill9KeepsCharges(t *testing.T) {
	s := newReplicaSetup(t)
	rs := s.start(t, replicaCount(t))
	if len(rs) < 2 {
		t.Skip("needs 2 replicas")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	answered, attempted := 0, 0
	next := 0
	// Every client connects before the kill: with many clients a login
	// (SCRAM) could otherwise still be under way on the replica killed.
	var connected sync.WaitGroup
	for ri, r := range rs {
		for range clientsPerReplica {
			wg.Add(1)
			connected.Add(1)
			go func() {
				defer wg.Done()
				conn, err := connectReplica(context.Background(), r.addr, 0.001)
				connected.Done()
				if err != nil {
					t.Errorf("replica %d: %v", ri, err)
					return
				}
				defer conn.Close(context.Background())
				for ctx.Err() == nil {
					mu.Lock()
					q := next
					next++
					attempted++
					mu.Unlock()
					lo, width := 17+q%60, 1+q/60
					var n int64
					err := conn.QueryRow(context.Background(), fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age > %d AND age < %d", lo, lo+width+1)).Scan(&n)
					if err != nil {
						if ri == 0 || sqlState(err) == "53400" {
							return // the killed replica, or the budget is spent
						}
						t.Errorf("replica %d: %v", ri, err)
						return
					}
					mu.Lock()
					answered++
					mu.Unlock()
				}
			}()
		}
	}
	connected.Wait()
	time.Sleep(700 * time.Millisecond)
	killed := rs[0].cmd.Process.Pid
	if err := rs[0].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-rs[0].done
	time.Sleep(500 * time.Millisecond)
	cancel()
	wg.Wait()
	for _, r := range rs[1:] {
		r.stop(t)
	}
	t.Logf("%d queries asked, %d answered; replica pid %d killed", attempted, answered, killed)
	if answered == 0 {
		t.Fatal("no query was answered")
	}
	// Every answered query is charged (0.001 each), and nothing beyond the
	// queries asked.
	if !s.numericTrue(t, `SELECT spent_epsilon >= 0.001 * $1 AND spent_epsilon <= 0.001 * $2 FROM %s.budgets WHERE user_name = 'analyst' AND dataset = 'census'`,
		answered, attempted) {
		t.Errorf("spent is outside [0.001 × %d answered, 0.001 × %d asked]", answered, attempted)
	}
	var pend int
	if l, err := pgledger.Open(context.Background(), s.dsn, pgledger.Options{Schema: s.schema, Replica: "count"}); err == nil {
		p, _ := l.Pending()
		pend = len(p)
		l.Close()
	}
	t.Logf("%d reservations of the killed replica stay pending (charged)", pend)
	// Whatever is still pending was the killed replica's: the others
	// settled everything before they stopped.
	if !s.numericTrue(t, `SELECT count(*) FILTER (WHERE replica NOT LIKE $1) = 0 FROM %s.pending`, "%-"+strconv.Itoa(killed)) {
		t.Error("a replica that stopped gracefully left pending reservations")
	}
	s.check(t)
}
