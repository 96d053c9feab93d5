package admin

import (
	"context"
	"fmt"
	"html/template"
	"math/big"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// Account is one (user, dataset) line of the budget page: the user's
// budget on the dataset (policy), what the ledger has charged and what is
// left (computed exactly by the ledger).
type Account struct {
	User, Dataset string
	Limit         policies.Budget
	Spent         policies.Budget
	Left          policies.Budget
	Queries       uint64
}

// Charge is one charge of the ledger's audit history.
type Charge struct {
	Time          time.Time
	User, Dataset string
	Cost          policies.Budget
	// Fingerprint identifies the statement's shape (no literal).
	Fingerprint string
	// Refunded charges do not count.
	Refunded bool
}

// BudgetSource is what the budget page reads.
type BudgetSource interface {
	// Accounts lists every user's budget on every dataset the policy
	// gives them, charged or not.
	Accounts(ctx context.Context) ([]Account, error)
	// Charges calls fn for every charge of the audit history, oldest
	// first.
	Charges(ctx context.Context, fn func(Charge) error) error
}

// BudgetPage serves the DBA's budget page: per dataset, a plot of each
// user's cumulative ε over time drawn from the audit history with a
// dashed line per distinct ε budget of the users plotted, the table of
// spent and left budget, and the statements that cost the most. Plain
// HTML and SVG, no script.
func BudgetPage(src BudgetSource, now func() time.Time) http.Handler {
	if now == nil {
		now = time.Now
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, err := buildPage(r.Context(), src, now())
		if err != nil {
			http.Error(w, "the budget ledger is unreadable", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		if err := pageTemplate.Execute(w, page); err != nil {
			return // the client went away; nothing to tell it
		}
	})
}

// topQueries is how many of the costliest statements a dataset lists.
const topQueries = 10

type pageData struct {
	Generated string
	Datasets  []*datasetView
}

type datasetView struct {
	Name     string
	Accounts []Account
	Plot     plot
	Top      []*queryCost
}

// queryCost sums the charges of one statement shape on a dataset.
type queryCost struct {
	Fingerprint string
	Users       string
	Count       int
	Epsilon     float64
	Delta       float64
	sum         exactSum
}

// exactSum adds charges up as the ledgers do: each amount read as its
// exact decimal (budget.ExactDecimal), the total rounded to float64 only
// to be shown. Adding the float64s instead shows 0.1 + 0.2 as
// 0.30000000000000004 next to the ledger's exact total of 0.3.
type exactSum struct{ eps, delta big.Rat }

// exactCost reads a charge's cost as the ledgers charged it; an amount no
// ledger could hold (negative, NaN) is an error.
func exactCost(b budget.Budget) (eps, delta *big.Rat, err error) {
	if eps, err = budget.ExactDecimal(b.Epsilon); err != nil {
		return nil, nil, fmt.Errorf("epsilon: %w", err)
	}
	if delta, err = budget.ExactDecimal(b.Delta); err != nil {
		return nil, nil, fmt.Errorf("delta: %w", err)
	}
	return eps, delta, nil
}

func (s *exactSum) add(eps, delta *big.Rat) {
	s.eps.Add(&s.eps, eps)
	s.delta.Add(&s.delta, delta)
}

// budget is the sum as the nearest float64s, which num shows in the
// shortest form that reads back as them, as the table shows the ledger's
// exact totals.
func (s *exactSum) budget() budget.Budget {
	e, _ := s.eps.Float64()
	d, _ := s.delta.Float64()
	return budget.Budget{Epsilon: e, Delta: d}
}

func buildPage(ctx context.Context, src BudgetSource, now time.Time) (*pageData, error) {
	accts, err := src.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]*datasetView{}
	view := func(name string) *datasetView {
		d := byName[name]
		if d == nil {
			d = &datasetView{Name: name}
			byName[name] = d
		}
		return d
	}
	for _, a := range accts {
		d := view(a.Dataset)
		d.Accounts = append(d.Accounts, a)
	}
	series := map[string]map[string]*line{} // dataset → user → line
	costs := map[string]map[string]*queryCost{}
	users := map[string]map[string]map[string]bool{}
	err = src.Charges(ctx, func(c Charge) error {
		if c.Refunded {
			return nil
		}
		view(c.Dataset)
		if series[c.Dataset] == nil {
			series[c.Dataset] = map[string]*line{}
			costs[c.Dataset] = map[string]*queryCost{}
			users[c.Dataset] = map[string]map[string]bool{}
		}
		l := series[c.Dataset][c.User]
		if l == nil {
			l = &line{User: c.User}
			series[c.Dataset][c.User] = l
		}
		eps, delta, err := exactCost(c.Cost)
		if err != nil {
			return fmt.Errorf("charge of %s on %s at %s: %w", c.User, c.Dataset, c.Time.UTC().Format(time.RFC3339Nano), err)
		}
		l.sum.add(eps, delta)
		l.steps = append(l.steps, step{t: c.Time, cum: l.sum.budget().Epsilon})
		fp := c.Fingerprint
		if fp == "" {
			fp = "(not recorded)"
		}
		q := costs[c.Dataset][fp]
		if q == nil {
			q = &queryCost{Fingerprint: fp}
			costs[c.Dataset][fp] = q
			users[c.Dataset][fp] = map[string]bool{}
		}
		q.Count++
		q.sum.add(eps, delta)
		users[c.Dataset][fp][c.User] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	p := &pageData{Generated: now.UTC().Format(time.RFC3339)}
	for _, d := range byName {
		sort.Slice(d.Accounts, func(i, j int) bool { return d.Accounts[i].User < d.Accounts[j].User })
		budgets := map[string]float64{}
		for _, a := range d.Accounts {
			budgets[a.User] = a.Limit.Epsilon
		}
		var lines []*line
		for _, l := range series[d.Name] {
			lines = append(lines, l)
		}
		sort.Slice(lines, func(i, j int) bool { return lines[i].User < lines[j].User })
		d.Plot = drawPlot(d.Name, lines, budgets, now)
		for fp, q := range costs[d.Name] {
			var us []string
			for u := range users[d.Name][fp] {
				us = append(us, u)
			}
			sort.Strings(us)
			q.Users = strings.Join(us, ", ")
			total := q.sum.budget()
			q.Epsilon, q.Delta = total.Epsilon, total.Delta
			d.Top = append(d.Top, q)
		}
		sort.Slice(d.Top, func(i, j int) bool {
			if d.Top[i].Epsilon != d.Top[j].Epsilon {
				return d.Top[i].Epsilon > d.Top[j].Epsilon
			}
			return d.Top[i].Fingerprint < d.Top[j].Fingerprint
		})
		if len(d.Top) > topQueries {
			d.Top = d.Top[:topQueries]
		}
		p.Datasets = append(p.Datasets, d)
	}
	sort.Slice(p.Datasets, func(i, j int) bool { return p.Datasets[i].Name < p.Datasets[j].Name })
	return p, nil
}

// num formats an amount for the page, everywhere on it (table, plot,
// titles, data attributes): the shortest decimal that reads back as the
// same float64. Sums reach it exact and rounded once (exactSum), so it
// never shows float noise the ledger does not have.
func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

var pageTemplate = template.Must(template.New("budget").Funcs(template.FuncMap{"num": num}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>ddp-proxy: privacy budget</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child, td.fp { text-align: left; }
td.fp { font-family: monospace; }
svg { border: 1px solid #ddd; background: #fff; }
svg text { font-size: 11px; fill: #444; }
.limit { stroke: #c00; stroke-dasharray: 4 3; }
svg text.limit-label { fill: #c00; }
.axis { stroke: #888; }
</style>
</head>
<body>
<h1>Privacy budget</h1>
<p>Generated {{.Generated}}. ε spent over time is read from the ledger's audit history (refunded
charges left out); each dashed line is a budget, labelled with its ε and the users whose budget it
is; spent and left are the ledger's exact totals. Statements are shown by
fingerprint (their shape, without literals); <code>ddp-proxy audit</code> shows their text.</p>
{{range .Datasets}}
<section id="dataset-{{.Name}}" data-dataset="{{.Name}}">
<h2>Dataset {{.Name}}</h2>
{{template "plot" .Plot}}
<table class="accounts">
<tr><th>user</th><th>ε budget</th><th>ε spent</th><th>ε left</th><th>δ budget</th><th>δ spent</th><th>δ left</th><th>queries</th></tr>
{{range .Accounts}}<tr data-user="{{.User}}" data-epsilon-spent="{{num .Spent.Epsilon}}" data-epsilon-left="{{num .Left.Epsilon}}">
<td>{{.User}}</td><td>{{num .Limit.Epsilon}}</td><td>{{num .Spent.Epsilon}}</td><td>{{num .Left.Epsilon}}</td><td>{{num .Limit.Delta}}</td><td>{{num .Spent.Delta}}</td><td>{{num .Left.Delta}}</td><td>{{.Queries}}</td></tr>
{{end}}</table>
<h3>Most expensive statements</h3>
{{if .Top}}<table class="top">
<tr><th>fingerprint</th><th>users</th><th>charges</th><th>ε</th><th>δ</th></tr>
{{range .Top}}<tr><td class="fp">{{.Fingerprint}}</td><td>{{.Users}}</td><td>{{.Count}}</td><td>{{num .Epsilon}}</td><td>{{num .Delta}}</td></tr>
{{end}}</table>{{else}}<p>No charge recorded.</p>{{end}}
</section>
{{else}}<p>No user has a budget.</p>
{{end}}
</body>
</html>
{{define "plot"}}<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="cumulative ε spent on {{.Dataset}}" data-y-max="{{num .YMax}}" data-t0="{{.T0}}" data-t1="{{.T1}}">
<line class="axis" x1="{{.Left}}" y1="{{.Bottom}}" x2="{{.Right}}" y2="{{.Bottom}}"/>
<line class="axis" x1="{{.Left}}" y1="{{.Top}}" x2="{{.Left}}" y2="{{.Bottom}}"/>
<text x="4" y="{{.Top}}">{{num .YMax}}</text><text x="4" y="{{.Bottom}}">0</text>
<text class="time-from" x="{{.Left}}" y="{{.Height}}" dy="-4">{{.From}}</text><text class="time-to" x="{{.Right}}" y="{{.Height}}" dy="-4" text-anchor="end">{{.To}}</text>
{{range .Limits}}<line class="limit" x1="{{$.Left}}" y1="{{.Y}}" x2="{{$.Right}}" y2="{{.Y}}" data-epsilon="{{num .Epsilon}}" data-users="{{.Users}}"><title>budget ε = {{num .Epsilon}} ({{.Users}})</title></line>
<text class="limit-label" x="{{$.Left}}" dx="4" y="{{.LabelY}}">budget ε = {{num .Epsilon}} ({{.Label}})</text>
{{end}}{{range .Lines}}<polyline fill="none" stroke="{{.Color}}" stroke-width="2" points="{{.Points}}" data-user="{{.User}}" data-epsilon="{{.Cumulative}}" data-times="{{.Times}}"><title>{{.User}}: ε {{.Last}} spent</title></polyline>
<text x="{{.LabelX}}" y="{{.LabelY}}" fill="{{.Color}}" text-anchor="end">{{.User}}</text>
{{end}}</svg>{{end}}`))
