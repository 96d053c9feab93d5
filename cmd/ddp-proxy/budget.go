package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// cmdBudget prints spent and remaining budget per user and dataset. It
// works while serve runs (openLedgerReader).
func cmdBudget(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("budget", flag.ContinueOnError)
	fs.SetOutput(stderr)
	policyPath := fs.String("policy", "", "policy file (required)")
	userName := fs.String("user", "", "show only this user")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	if *policyPath == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: ddp-proxy budget --policy FILE [--user U]")
		return exitError{2}
	}
	pol, err := policies.LoadWith(*policyPath, policies.LoadOptions{Offline: true})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError{1}
	}
	if *userName != "" && pol.User(*userName) == nil {
		fmt.Fprintf(stderr, "no user %q in the policy\n", *userName)
		return exitError{2}
	}
	l, closeLedger, err := openPolicyLedgerReader(ctx, pol)
	if err != nil {
		return err
	}
	defer closeLedger()
	accts, err := l.Accounts(ctx)
	if err != nil {
		return fmt.Errorf("reading the ledger: %w", err)
	}
	spent := map[[2]string]budget.Budget{}
	for _, a := range accts {
		spent[[2]string{a.User, a.Dataset}] = a.Spent
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "USER\tDATASET\tε TOTAL\tε SPENT\tε LEFT\tδ TOTAL\tδ SPENT\tδ LEFT")
	for _, u := range pol.Users {
		if *userName != "" && !strings.EqualFold(u.Name, *userName) {
			continue
		}
		for _, ds := range pol.DatasetNames {
			limit, ok := u.Budgets[ds]
			if !ok {
				continue
			}
			s := spent[[2]string{u.Name, ds}]
			// What is left is the ledger's to say (exact, never
			// negative), as in SHOW ddp.budget and on the budget page:
			// subtracting the rounded totals here would be a second
			// formula that can disagree with them.
			left, err := l.Remaining(ctx, u.Name, ds, limit)
			if err != nil {
				return fmt.Errorf("reading what is left of %s's budget on %s: %w", u.Name, ds, err)
			}
			fmt.Fprintf(tw, "%s\t%s\t%g\t%g\t%g\t%g\t%g\t%g\n", u.Name, ds,
				limit.Epsilon, s.Epsilon, left.Epsilon, limit.Delta, s.Delta, left.Delta)
		}
	}
	return tw.Flush()
}
