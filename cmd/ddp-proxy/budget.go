package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/big"
	"strconv"
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
	fmt.Fprintln(tw, "USER\tDATASET\tε TOTAL\tε SPENT\tε LEFT\tδ TOTAL\tδ SPENT")
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
			fmt.Fprintf(tw, "%s\t%s\t%g\t%g\t%s\t%g\t%g\n", u.Name, ds, limit.Epsilon, s.Epsilon,
				leftText(limit.Epsilon, s.Epsilon), limit.Delta, s.Delta)
		}
	}
	return tw.Flush()
}

// leftText is limit − spent for display, in decimal, never negative: both
// are read as the decimals they print as (0.3 − 0.1 is 0.2, not
// 0.19999999999999998). The ledger's own check is exact on its rationals.
func leftText(limit, spent float64) string {
	l, ok1 := new(big.Rat).SetString(strconv.FormatFloat(limit, 'g', -1, 64))
	s, ok2 := new(big.Rat).SetString(strconv.FormatFloat(spent, 'g', -1, 64))
	if !ok1 || !ok2 {
		return strconv.FormatFloat(max(limit-spent, 0), 'g', -1, 64)
	}
	d := l.Sub(l, s)
	if d.Sign() < 0 {
		d.SetInt64(0)
	}
	f, _ := d.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}
