package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// cmdLedgerCompact runs `ddp-proxy ledger compact --policy F`.
func cmdLedgerCompact(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "compact" {
		fmt.Fprintln(stderr, "usage: ddp-proxy ledger compact --policy FILE")
		return exitError{2}
	}
	fs := flag.NewFlagSet("ledger compact", flag.ContinueOnError)
	fs.SetOutput(stderr)
	policyPath := fs.String("policy", "", "policy file (required)")
	if err := fs.Parse(args[1:]); err != nil {
		return exitError{2}
	}
	if *policyPath == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: ddp-proxy ledger compact --policy FILE")
		return exitError{2}
	}
	pol, err := policies.LoadWith(*policyPath, policies.LoadOptions{Offline: true})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError{1}
	}
	if pol.Ledger.Driver == policies.LedgerPostgres {
		// Compact would open (and so create) a bbolt file at the default
		// path and report it compacted.
		fmt.Fprintln(stderr, "ledger compact rewrites a bbolt ledger file; this policy's ledger is in PostgreSQL (ledger.driver: postgres): use VACUUM there")
		return exitError{2}
	}
	res, err := ledger.Compact(pol.Ledger.Path, ledger.Options{LockTimeout: readLockWait, Retention: retentionOf(pol)})
	if errors.Is(err, ledger.ErrLocked) {
		return fmt.Errorf("compacting the ledger: %s is in use (stop ddp-proxy serve first: compact rewrites the file offline): %w", pol.Ledger.Path, err)
	}
	if err != nil {
		return fmt.Errorf("compacting the ledger: %w", err)
	}
	fmt.Fprintf(stdout, "compacted %s: %d → %d bytes; %d releases evicted by ledger.retention\n",
		pol.Ledger.Path, res.BytesBefore, res.BytesAfter, res.Evicted)
	return nil
}
