package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// readLockWait is how long budget and audit wait for the ledger's file
// lock before they read through the running proxy's socket instead.
const readLockWait = 300 * time.Millisecond

// ledgerView is what the DBA's views read from a ledger (ddp-proxy budget
// and audit, the ledger socket, the admin listener's budget page): the
// read-only release.LedgerReader, and what is left of a limit. What is
// left comes from the ledger's Remaining (exact, never negative), the one
// computation SHOW ddp.budget shows too, so that no view subtracts spent
// from a limit on its own and disagrees with the others.
type ledgerView interface {
	release.LedgerReader
	Remaining(ctx context.Context, user, dataset string, limit budget.Budget) (budget.Budget, error)
}

// openLedgerReader opens the ledger at path for reading: the file itself
// when no process holds it, else the running ddp-proxy's ledger socket.
// close releases what was opened.
func openLedgerReader(path string) (r ledgerView, close func() error, err error) {
	l, err := ledger.Open(path, ledger.Options{LockTimeout: readLockWait})
	if err == nil {
		return l, l.Close, nil
	}
	if !errors.Is(err, ledger.ErrLocked) {
		return nil, nil, fmt.Errorf("opening the budget ledger: %w", err)
	}
	sock := ledgerSocketPath(path)
	if _, serr := os.Stat(sock); errors.Is(serr, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("the budget ledger %s is in use by another process, and no ddp-proxy serves it on %s "+
			"(ddp-proxy serve creates that socket at startup; is the process holding the ledger an older ddp-proxy?)", path, sock)
	}
	return dialLedgerSocket(path), func() error { return nil }, nil
}

// openPolicyLedgerReader opens the ledger a policy names for reading: a
// PostgreSQL ledger directly (replicas may be serving it), a bbolt file
// through openLedgerReader.
func openPolicyLedgerReader(ctx context.Context, pol *policies.Policy) (ledgerView, func() error, error) {
	if pol.Ledger.Driver == policies.LedgerPostgres {
		l, err := openPGLedger(ctx, pol, slog.New(slog.DiscardHandler), nil)
		if err != nil {
			return nil, nil, err
		}
		return l, l.Close, nil
	}
	return openLedgerReader(pol.Ledger.Path)
}
