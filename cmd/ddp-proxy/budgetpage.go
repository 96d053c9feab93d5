package main

import (
	"context"
	"net/http"
	"sort"

	"github.com/ddp-proxy/ddp-proxy/admin"
	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// budgetSource is the budget page's view of the ledger and the policy in
// force (budgets change on reload).
type budgetSource struct {
	policy func() *policies.Policy
	ledger ledgerView
}

var _ admin.BudgetSource = budgetSource{}

// Accounts lists every (user, dataset) the policy gives a budget, and
// those the ledger has charged that the policy no longer names (with no
// budget and nothing left).
func (s budgetSource) Accounts(ctx context.Context) ([]admin.Account, error) {
	charged, err := s.ledger.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	type key struct{ user, dataset string }
	byKey := map[key]budget.Account{}
	for _, a := range charged {
		byKey[key{a.User, a.Dataset}] = a
	}
	var out []admin.Account
	seen := map[key]bool{}
	for _, u := range s.policy().Users {
		for ds, limit := range u.Budgets {
			k := key{u.Name, ds}
			seen[k] = true
			a := byKey[k]
			left, err := s.ledger.Remaining(ctx, u.Name, ds, limit)
			if err != nil {
				return nil, err
			}
			out = append(out, admin.Account{User: u.Name, Dataset: ds, Limit: limit, Spent: a.Spent, Left: left, Queries: a.Queries})
		}
	}
	for _, a := range charged {
		if !seen[key{a.User, a.Dataset}] {
			out = append(out, admin.Account{User: a.User, Dataset: a.Dataset, Spent: a.Spent, Queries: a.Queries})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Dataset != out[j].Dataset {
			return out[i].Dataset < out[j].Dataset
		}
		return out[i].User < out[j].User
	})
	return out, nil
}

// Charges reads the whole audit history, oldest first.
func (s budgetSource) Charges(ctx context.Context, fn func(admin.Charge) error) error {
	return s.ledger.Audit(ctx, budget.AuditFilter{}, func(e budget.AuditEntry) error {
		return fn(admin.Charge{Time: e.Time, User: e.User, Dataset: e.Dataset, Cost: e.Cost,
			Fingerprint: e.Fingerprint, Refunded: !e.Refunded.IsZero()})
	})
}

// budgetPage is the admin listener's /budget.
func (p *proxy) budgetPage(led ledgerView) http.Handler {
	return admin.BudgetPage(budgetSource{policy: p.sessions.Policy, ledger: led}, nil)
}
