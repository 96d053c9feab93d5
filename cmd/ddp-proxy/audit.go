package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// cmdAudit prints the ledger's audit history: one line per charge. It
// works while serve runs (openLedgerReader).
func cmdAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	policyPath := fs.String("policy", "", "policy file (required)")
	userName := fs.String("user", "", "show only this user's charges")
	dataset := fs.String("dataset", "", "show only charges on this dataset")
	since := fs.String("since", "", "show charges from this time on: RFC 3339 (2026-11-27T10:00:00Z), a date (2026-11-27, UTC) or a duration back from now (24h)")
	asJSON := fs.Bool("json", false, "one JSON object per charge")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	if *policyPath == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: ddp-proxy audit --policy FILE [--user U] [--dataset D] [--since T] [--json]")
		return exitError{2}
	}
	f := budget.AuditFilter{Dataset: *dataset}
	if *since != "" {
		t, err := budget.ParseSince(*since, time.Now())
		if err != nil {
			fmt.Fprintf(stderr, "--since %v\n", err)
			return exitError{2}
		}
		f.Since = t
	}
	pol, err := policies.LoadWith(*policyPath, policies.LoadOptions{Offline: true})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError{1}
	}
	if *userName != "" {
		u := pol.User(*userName)
		if u == nil {
			fmt.Fprintf(stderr, "no user %q in the policy\n", *userName)
			return exitError{2}
		}
		f.User = u.Name // as the ledger spells it
	}
	if *dataset != "" && pol.Dataset(*dataset) == nil {
		// As --user: a typo would otherwise print an empty history.
		fmt.Fprintf(stderr, "no dataset %q in the policy\n", *dataset)
		return exitError{2}
	}
	l, closeLedger, err := openPolicyLedgerReader(ctx, pol)
	if err != nil {
		return err
	}
	defer closeLedger()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		return l.Audit(ctx, f, func(e budget.AuditEntry) error { return enc.Encode(e) })
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tUSER\tDATASET\tε\tδ\tREPLICA\tRELEASE\tFINGERPRINT\tQUERY")
	err = l.Audit(ctx, f, func(e budget.AuditEntry) error {
		q := strings.Join(strings.Fields(e.Query), " ") // one line per charge
		if !e.Refunded.IsZero() {
			q = "(refunded " + e.Refunded.UTC().Format(time.RFC3339) + ") " + q
		}
		rel := e.Release
		if len(rel) > 12 {
			rel = rel[:12]
		}
		_, err := fmt.Fprintf(tw, "%s\t%s\t%s\t%g\t%g\t%s\t%s\t%s\t%s\n", e.Time.UTC().Format(time.RFC3339),
			e.User, e.Dataset, e.Cost.Epsilon, e.Cost.Delta, e.Replica, rel, e.Fingerprint, q)
		return err
	})
	if ferr := tw.Flush(); err == nil {
		err = ferr
	}
	return err
}
