package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

func cmdBudget(args []string, stdout, stderr io.Writer) error {
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
	l, err := openLedgerStore(context.Background(), pol, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer l.Close()
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
			spent, err := l.Spent(u.Name, ds)
			if err != nil {
				return fmt.Errorf("reading the ledger: %w", err)
			}
			left, err := l.Left(u.Name, ds, limit)
			if err != nil {
				return fmt.Errorf("reading the ledger: %w", err)
			}
			fmt.Fprintf(tw, "%s\t%s\t%g\t%g\t%g\t%g\t%g\n", u.Name, ds, limit.Epsilon, spent.Epsilon,
				left.Epsilon, limit.Delta, spent.Delta)
		}
	}
	return tw.Flush()
}
