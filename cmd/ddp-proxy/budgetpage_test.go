package main

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"maps"
	"math"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/internal/chromium"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// TestBudgetPageOverLedger answers real queries over pgx as two users,
// then renders /budget in headless Chromium and checks the plot and the
// table against the ledger: each user's line on census carries the
// cumulative ε of that user's audit entries, in order, summed exactly as
// the ledger sums them (0.1 + 0.2 reads 0.3, not the float64 sum
// 0.30000000000000004), ending at the ledger's spent total, in its data
// and its hover title; the table shows the ledger's spent and left; the
// time axis' two labels differ though the charges are seconds apart; no
// literal of a query is on the page. The two users have different ε
// budgets on census, and the plot has a dashed line for each, at its
// height on the plot's scale, titled with the budget and its user.
func TestBudgetPageOverLedger(t *testing.T) {
	chromium.Find(t)
	p := serveDemoAdmin(t, func(pol *policies.Policy) {
		second := *pol.User("analyst")
		second.Name = "auditor"
		// Its own map: the copy shares analyst's.
		second.Budgets = maps.Clone(second.Budgets)
		b := second.Budgets["census"]
		b.Epsilon /= 2
		second.Budgets["census"] = b
		pol.Users = append(pol.Users, &second)
	})
	ctx := context.Background()
	analyst := connectDemo(t, p.pgAddr)
	var n int64
	for _, q := range []struct{ eps, sql string }{
		{"0.1", "SELECT COUNT(*) FROM people WHERE workclass = 'Never-worked'"},
		{"0.2", "SELECT COUNT(*) FROM people WHERE age > 60"},
		{"0.2", "SELECT COUNT(*) FROM people WHERE age > 60"}, // the release: no charge
	} {
		if _, err := analyst.Exec(ctx, "SET ddp.epsilon = "+q.eps); err != nil {
			t.Fatal(err)
		}
		if err := analyst.QueryRow(ctx, q.sql).Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	auditor := connectDemoUser(t, p.pgAddr, "auditor")
	if err := auditor.QueryRow(ctx, "SELECT COUNT(*) FROM people WHERE education = 'Doctorate'").Scan(&n); err != nil {
		t.Fatal(err)
	}

	// The ledger's side: cumulative ε per user on census, from its audit,
	// summed as the ledger sums (exact decimals) and shown as the table
	// shows the ledger's totals.
	want := map[string][]string{}
	sums := map[string]*big.Rat{}
	err := p.ledger.Audit(ctx, budget.AuditFilter{Dataset: "census"}, func(e budget.AuditEntry) error {
		if e.Refunded.IsZero() {
			x, err := budget.ExactDecimal(e.Cost.Epsilon)
			if err != nil {
				return err
			}
			if sums[e.User] == nil {
				sums[e.User] = new(big.Rat)
			}
			sums[e.User].Add(sums[e.User], x)
			f, _ := sums[e.User].Float64()
			want[e.User] = append(want[e.User], strconv.FormatFloat(f, 'g', -1, 64))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want["analyst"]) != 2 || len(want["auditor"]) != 1 {
		t.Fatalf("audit history %v: want two charges of analyst and one of auditor", want)
	}
	if want["analyst"][1] != "0.3" {
		t.Fatalf("analyst's charges add up to %s in the ledger, want 0.3 (0.1 + 0.2)", want["analyst"][1])
	}

	dom := chromium.DumpDOM(t, "http://"+p.adminAddr+"/budget")
	root, err := chromium.Parse(dom)
	if err != nil {
		t.Fatal(err)
	}
	sections := root.FindAll(func(e *chromium.Element) bool { return e.Name == "section" && e.Attr["data-dataset"] == "census" })
	if len(sections) != 1 {
		t.Fatalf("%d census sections in the browser's DOM", len(sections))
	}
	census := sections[0]
	lines := map[string]*chromium.Element{}
	for _, e := range census.FindAll(func(e *chromium.Element) bool { return e.Name == "polyline" }) {
		lines[e.Attr["data-user"]] = e
	}
	for _, user := range []string{"analyst", "auditor"} {
		pl := lines[user]
		if pl == nil {
			t.Fatalf("no line for %s in the plot", user)
		}
		got := strings.Fields(pl.Attr["data-epsilon"])
		if strings.Join(got, " ") != strings.Join(want[user], " ") {
			t.Errorf("%s: plotted cumulative ε %q, audit %q", user, got, want[user])
		}
		if len(got) == 0 {
			t.Fatalf("%s: nothing plotted", user)
		}
		last := got[len(got)-1]
		var title string
		for _, c := range pl.Children {
			if c.Name == "title" {
				title = c.Text
			}
		}
		if wantTitle := user + ": ε " + want[user][len(want[user])-1] + " spent"; title != wantTitle {
			t.Errorf("%s: hover title %q, want %q", user, title, wantTitle)
		}
		// Each charge is a rise of the line: 2 points per charge + the end.
		if pts := strings.Fields(pl.Attr["points"]); len(pts) != 2*len(got)+1 {
			t.Errorf("%s: %d points for %d charges", user, len(pts), len(got))
		}
		acct, err := p.ledger.Account(ctx, user, "census")
		if err != nil {
			t.Fatal(err)
		}
		if spent := strconv.FormatFloat(acct.Spent.Epsilon, 'g', -1, 64); last != spent {
			t.Errorf("%s: the line ends at %s, the ledger has %s spent", user, last, spent)
		}
		left, err := p.ledger.Remaining(ctx, user, "census", p.sessions.Policy().User(user).Budgets["census"])
		if err != nil {
			t.Fatal(err)
		}
		rows := census.FindAll(func(e *chromium.Element) bool { return e.Name == "tr" && e.Attr["data-user"] == user })
		if len(rows) != 1 {
			t.Fatalf("%s: %d table rows", user, len(rows))
		}
		if s, l := rows[0].Attr["data-epsilon-spent"], rows[0].Attr["data-epsilon-left"]; s != strconv.FormatFloat(acct.Spent.Epsilon, 'g', -1, 64) ||
			l != strconv.FormatFloat(left.Epsilon, 'g', -1, 64) {
			t.Errorf("%s: table says spent %s left %s; ledger %v and %v", user, s, l, acct.Spent.Epsilon, left.Epsilon)
		}
	}
	// One dashed line per budget, each at its ε on the scale the users'
	// lines are drawn on (read from the plot's axis and data-y-max).
	svgs := census.FindAll(func(e *chromium.Element) bool { return e.Name == "svg" })
	if len(svgs) != 1 {
		t.Fatalf("%d plots in the census section", len(svgs))
	}
	checkBudgetLines(t, svgs[0], p.sessions.Policy(), []string{"analyst", "auditor"})
	// The charges are seconds apart: the axis' labels still differ.
	var from, to string
	for _, e := range census.FindAll(func(e *chromium.Element) bool { return e.Name == "text" }) {
		switch e.Attr["class"] {
		case "time-from":
			from = e.Text
		case "time-to":
			to = e.Text
		}
	}
	if from == "" || from == to {
		t.Errorf("time axis from %q to %q: want two different times", from, to)
	}
	for _, lit := range []string{"Never-worked", "Doctorate", "age > 60"} {
		if strings.Contains(dom, lit) {
			t.Errorf("the budget page shows %q", lit)
		}
	}
	// The ledger's own views are mounted too: auditor's one charge.
	resp, err := http.Get("http://" + p.adminAddr + "/ledger/audit?user=auditor")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Count(strings.TrimSpace(string(body)), "\n") != 0 || !strings.Contains(string(body), `"user":"auditor"`) {
		t.Errorf("/ledger/audit?user=auditor: %s %s", resp.Status, body)
	}
	img, err := png.Decode(bytes.NewReader(chromium.Screenshot(t, "http://"+p.adminAddr+"/budget", 1000, 900)))
	if err != nil || img.Bounds().Dx() == 0 {
		t.Fatalf("screenshot: %v", err)
	}
}

// checkBudgetLines checks a census plot's dashed budget lines against the
// policy: users (of different ε budgets) each have one, titled and
// labelled "budget ε = E (user)", level across the plot at the height of
// E on the plot's y scale: from the bottom axis (ε 0) to the top of the
// y axis (data-y-max).
func checkBudgetLines(t *testing.T, svg *chromium.Element, pol *policies.Policy, users []string) {
	t.Helper()
	attr := func(e *chromium.Element, name string) float64 {
		t.Helper()
		v, err := strconv.ParseFloat(e.Attr[name], 64)
		if err != nil {
			t.Fatalf("<%s> %s=%q: %v", e.Name, name, e.Attr[name], err)
		}
		return v
	}
	var yAxis *chromium.Element
	for _, e := range svg.FindAll(func(e *chromium.Element) bool { return e.Name == "line" && e.Attr["class"] == "axis" }) {
		if e.Attr["x1"] == e.Attr["x2"] {
			yAxis = e
		}
	}
	if yAxis == nil {
		t.Fatal("the plot has no y axis")
	}
	top, bottom, ymax := attr(yAxis, "y1"), attr(yAxis, "y2"), attr(svg, "data-y-max")
	type want struct {
		title string
		y     float64
	}
	var wants []want
	seen := map[float64]bool{}
	for _, u := range users {
		eps := pol.User(u).Budgets["census"].Epsilon
		if seen[eps] {
			t.Fatalf("%s's ε budget %v is another user's too: the test needs different budgets", u, eps)
		}
		seen[eps] = true
		wants = append(wants, want{"budget ε = " + strconv.FormatFloat(eps, 'g', -1, 64) + " (" + u + ")", bottom - (bottom-top)*eps/ymax})
	}
	lines := svg.FindAll(func(e *chromium.Element) bool { return e.Name == "line" && e.Attr["class"] == "limit" })
	labels := map[string]bool{}
	for _, e := range svg.FindAll(func(e *chromium.Element) bool { return e.Name == "text" && e.Attr["class"] == "limit-label" }) {
		labels[strings.TrimSpace(e.Text)] = true
	}
	if len(lines) != len(wants) || len(labels) != len(wants) {
		t.Fatalf("%d budget lines and %d labels, want %d: %v", len(lines), len(labels), len(wants), wants)
	}
	for _, w := range wants {
		var found *chromium.Element
		for _, l := range lines {
			for _, c := range l.Children {
				if c.Name == "title" && c.Text == w.title {
					found = l
				}
			}
		}
		if found == nil {
			t.Errorf("no budget line titled %q", w.title)
			continue
		}
		if y1, y2 := attr(found, "y1"), attr(found, "y2"); math.Abs(y1-w.y) > 0.01 || y2 != y1 {
			t.Errorf("%s: from y %v to y %v, want level at %v (axis %v..%v, ε to %v)", w.title, y1, y2, w.y, bottom, top, ymax)
		}
		if x1, x2 := attr(found, "x1"), attr(found, "x2"); x1 != attr(yAxis, "x1") || x2 <= x1 {
			t.Errorf("%s: from x %v to x %v, want from the y axis (%v) rightwards", w.title, x1, x2, attr(yAxis, "x1"))
		}
		if !labels[w.title] {
			t.Errorf("no label %q on the plot (labels %v)", w.title, labels)
		}
	}
}
