package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// dumpStore is what `ledger export` and `ledger import` need of either
// ledger store.
type dumpStore interface {
	Export(ctx context.Context) (*ledger.Dump, error)
	Import(ctx context.Context, d *ledger.Dump) error
	Close() error
}

// bboltDump adapts the bbolt ledger (whose methods take no context).
type bboltDump struct{ *ledger.Ledger }

func (b bboltDump) Export(context.Context) (*ledger.Dump, error)   { return b.Ledger.Export() }
func (b bboltDump) Import(_ context.Context, d *ledger.Dump) error { return b.Ledger.Import(d) }

// openDumpStore opens the ledger a policy names.
func openDumpStore(ctx context.Context, pol *policies.Policy, log *slog.Logger) (dumpStore, error) {
	if pol.Ledger.Driver == policies.LedgerPostgres {
		l, err := openPGLedger(ctx, pol, log, nil)
		if err != nil {
			return nil, err
		}
		return l, nil
	}
	l, err := ledger.Open(pol.Ledger.Path, ledger.Options{Logger: log})
	if err != nil {
		return nil, err
	}
	return bboltDump{l}, nil
}

// cmdLedger runs `ddp-proxy ledger export|import|compact --policy F`:
// export/import move the whole
// ledger as JSON on stdout, or from stdin into an empty ledger, to move
// between bbolt and PostgreSQL.
func cmdLedger(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, log *slog.Logger) error {
	usage := func() error {
		fmt.Fprintln(stderr, "usage: ddp-proxy ledger export --policy FILE > dump.json\n       ddp-proxy ledger import --policy FILE < dump.json\n       ddp-proxy ledger compact --policy FILE")
		return exitError{2}
	}
	if len(args) > 0 && args[0] == "compact" {
		return cmdLedgerCompact(args, stdout, stderr)
	}
	if len(args) == 0 || args[0] != "export" && args[0] != "import" {
		return usage()
	}
	verb := args[0]
	fs := flag.NewFlagSet("ledger "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	policyPath := fs.String("policy", "", "policy file naming the ledger (required)")
	if err := fs.Parse(args[1:]); err != nil {
		return exitError{2}
	}
	if *policyPath == "" || fs.NArg() != 0 {
		return usage()
	}
	pol, err := policies.LoadWith(*policyPath, policies.LoadOptions{Offline: true})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError{1}
	}
	st, err := openDumpStore(ctx, pol, log)
	if err != nil {
		return fmt.Errorf("opening the budget ledger: %w", err)
	}
	defer st.Close()
	if verb == "export" {
		d, err := st.Export(ctx)
		if err != nil {
			return err
		}
		w := bufio.NewWriter(stdout)
		enc := json.NewEncoder(w)
		enc.SetIndent("", " ")
		if err := enc.Encode(d); err != nil {
			return fmt.Errorf("writing the dump: %w", err)
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("writing the dump: %w", err)
		}
		fmt.Fprintf(stderr, "exported %d accounts, %d pending reservations, %d releases\n", len(d.Accounts), len(d.Pending), len(d.Releases))
		return nil
	}
	var d ledger.Dump
	dec := json.NewDecoder(bufio.NewReader(stdin))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return fmt.Errorf("reading the dump: %w", err)
	}
	if err := st.Import(ctx, &d); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "imported %d accounts, %d pending reservations (still charged), %d releases\n", len(d.Accounts), len(d.Pending), len(d.Releases))
	return nil
}
