package main

import (
	"context"
	"fmt"
	"math/big"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/demo"
	"github.com/ddp-proxy/ddp-proxy/internal/testaddr"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// TestServeKill9KeepsLeasedCharges: serve on the embedded ledger, whose
// charges go through budget leases by default, is killed with SIGKILL
// while 16 clients query; a restarted serve answers on and is stopped
// cleanly. Every fresh answer a client received (its notice says what it
// spent; a repeated query is answered from its release for free) is
// charged and has its audit entry; what is spent beyond the queries asked is at most the lease the
// kill left (ledger.lease × the budget); the audit history adds up to
// the spent total; and the ledger's invariants hold.
func TestServeKill9KeepsLeasedCharges(t *testing.T) {
	if testing.Short() {
		t.Skip("runs and kills serve processes")
	}
	files, err := demo.Build(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	addr := testaddr.Free(t)
	pol := demoPolicyCopy(t, files, addr, "off", "kill.yaml", nil)
	p, err := policies.Load(pol)
	if err != nil {
		t.Fatal(err)
	}
	if p.Ledger.Driver != policies.LedgerBBolt || p.Ledger.Lease != policies.DefaultLedgerLease {
		t.Fatalf("ledger %+v, want the embedded one with the default lease", p.Ledger)
	}
	limit := p.User("analyst").Budgets["census"]
	pid := filepath.Join(filepath.Dir(pol), "kill.pid")

	var mu sync.Mutex
	answered, attempted := 0, 0 // fresh answers received, queries sent
	load := func(r *replica, d time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		var wg sync.WaitGroup
		for c := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fresh := false
				conn, err := connectNoticed(context.Background(), r.addr, 0.001, func(msg string) {
					if strings.HasPrefix(msg, "ddp: spent ε = ") {
						fresh = true
					}
				})
				if err != nil {
					t.Error(err)
					return
				}
				defer conn.Close(context.Background())
				for i := 0; ctx.Err() == nil; i++ {
					mu.Lock()
					attempted++
					mu.Unlock()
					// A new literal each time: a fresh, charged answer.
					q := fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age > %d AND age < %d", 17+c, 30+i)
					var n int64
					fresh = false
					if err := conn.QueryRow(context.Background(), q).Scan(&n); err != nil {
						return // killed under it, or the end of the run
					}
					if fresh {
						mu.Lock()
						answered++
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
	}

	first := launch(t, pol, addr, pid)
	waitListening(t, []*replica{first})
	go func() {
		time.Sleep(700 * time.Millisecond)
		_ = first.cmd.Process.Kill()
	}()
	load(first, 3*time.Second) // ends when the kill cuts every client
	<-first.done
	killedAnswered := answered
	second := launch(t, pol, addr, pid)
	waitListening(t, []*replica{second})
	load(second, 500*time.Millisecond)
	second.stop(t)
	if killedAnswered == 0 || answered == killedAnswered {
		t.Fatalf("answers: %d before the kill, %d in all; the test needs some on each side", killedAnswered, answered)
	}

	l, err := ledger.Open(p.Ledger.Path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Check(); err != nil {
		t.Error(err)
	}
	spentF, err := l.Spent("analyst", "census")
	if err != nil {
		t.Fatal(err)
	}
	spent, err := budget.ExactDecimal(spentF.Epsilon)
	if err != nil {
		t.Fatal(err)
	}
	leaseBound, err := budget.ExactDecimal(limit.Epsilon * policies.DefaultLedgerLease)
	if err != nil {
		t.Fatal(err)
	}
	least := big.NewRat(int64(answered), 1000)
	most := new(big.Rat).Add(big.NewRat(int64(attempted), 1000), leaseBound)
	if spent.Cmp(least) < 0 || spent.Cmp(most) > 0 {
		t.Errorf("spent %s, want between %s (%d answered) and %s (%d asked + one lease)",
			spent.RatString(), least.RatString(), answered, most.RatString(), attempted)
	}
	audited, charges, leases := new(big.Rat), 0, 0
	err = l.Audit(context.Background(), budget.AuditFilter{User: "analyst", Dataset: "census"}, func(e budget.AuditEntry) error {
		if !e.Refunded.IsZero() {
			return nil
		}
		x, err := budget.ExactDecimal(e.Cost.Epsilon)
		if err != nil {
			return err
		}
		audited.Add(audited, x)
		if strings.HasPrefix(e.Query, ledger.LeaseAuditQuery) {
			leases++
		} else {
			charges++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if audited.Cmp(spent) != 0 {
		t.Errorf("the audit history adds up to %s, spent is %s", audited.RatString(), spent.RatString())
	}
	if charges < answered || charges > attempted || leases > 1 {
		t.Errorf("%d charges and %d leases in the audit history; %d answered, %d asked, at most one lease left",
			charges, leases, answered, attempted)
	}
	t.Logf("%d asked, %d answered (%d before the kill); spent %s; %d leases left by the kill", attempted, answered,
		killedAnswered, spent.FloatString(4), leases)
}
