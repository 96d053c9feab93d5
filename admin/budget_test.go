package admin

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/internal/chromium"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// fakeSource is a fixed ledger: two users on one dataset with different
// budgets, one refund.
type fakeSource struct {
	accounts []Account
	charges  []Charge
}

func (f fakeSource) Accounts(context.Context) ([]Account, error) { return f.accounts, nil }

func (f fakeSource) Charges(_ context.Context, fn func(Charge) error) error {
	for _, c := range f.charges {
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

var t0 = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

func testSource() fakeSource {
	eps := func(e float64) policies.Budget { return policies.Budget{Epsilon: e} }
	return fakeSource{
		accounts: []Account{
			{User: "bob", Dataset: "census", Limit: eps(2), Spent: eps(0.5), Left: eps(1.5), Queries: 1},
			{User: "alice", Dataset: "census", Limit: eps(3), Spent: eps(0.75), Left: eps(2.25), Queries: 3},
		},
		charges: []Charge{
			{Time: t0, User: "alice", Dataset: "census", Cost: eps(0.25), Fingerprint: "fpA"},
			{Time: t0.Add(10 * time.Minute), User: "bob", Dataset: "census", Cost: eps(0.5), Fingerprint: "fpB"},
			{Time: t0.Add(20 * time.Minute), User: "alice", Dataset: "census", Cost: eps(0.25), Fingerprint: "fpA"},
			{Time: t0.Add(25 * time.Minute), User: "alice", Dataset: "census", Cost: eps(1), Fingerprint: "fpC", Refunded: true},
			{Time: t0.Add(30 * time.Minute), User: "alice", Dataset: "census", Cost: eps(0.25), Fingerprint: "fpC"},
		},
	}
}

// polylines returns the plot lines of the page's dataset section, by user.
func polylines(t *testing.T, dom string) map[string]*chromium.Element {
	t.Helper()
	root, err := chromium.Parse(dom)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*chromium.Element{}
	for _, e := range root.FindAll(func(e *chromium.Element) bool { return e.Name == "polyline" }) {
		out[e.Attr["data-user"]] = e
	}
	return out
}

func parseFloats(t *testing.T, s string) []float64 {
	t.Helper()
	var out []float64
	for _, f := range strings.Fields(strings.ReplaceAll(s, ",", " ")) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		out = append(out, v)
	}
	return out
}

// checkPlot checks a user's polyline: its data-epsilon are the given
// cumulative totals, and its drawn points rise by exactly those steps on
// the page's y scale, at the charges' times on its x scale.
func checkPlot(t *testing.T, pl *chromium.Element, svg map[string]string, want []float64, times []time.Time) {
	t.Helper()
	got := parseFloats(t, pl.Attr["data-epsilon"])
	if len(got) != len(want) {
		t.Fatalf("%s: data-epsilon %v, want %v", pl.Attr["data-user"], got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: cumulative ε %d is %v, want %v", pl.Attr["data-user"], i, got[i], want[i])
		}
	}
	ymax := parseFloats(t, svg["data-y-max"])[0]
	t0 := parseFloats(t, svg["data-t0"])[0]
	t1 := parseFloats(t, svg["data-t1"])[0]
	pts := parseFloats(t, pl.Attr["points"])
	// Two points per charge (before and after the step), then the run to
	// the right edge.
	if len(pts) != 4*len(want)+2 {
		t.Fatalf("%d coordinates for %d charges", len(pts), len(want))
	}
	bottom, top := float64(plotHeight-24), 14.0
	left, right := float64(plotMargin), float64(plotWidth-10)
	for i, w := range want {
		x, y := pts[4*i+2], pts[4*i+3]
		wantY := bottom - (bottom-top)*w/ymax
		wantX := left + (right-left)*(float64(times[i].UnixMilli())-t0)/(t1-t0)
		if d := y - wantY; d > 0.01 || d < -0.01 {
			t.Errorf("%s: point %d at y %v, want %v (ε %v of %v)", pl.Attr["data-user"], i, y, wantY, w, ymax)
		}
		if d := x - wantX; d > 0.01 || d < -0.01 {
			t.Errorf("%s: point %d at x %v, want %v", pl.Attr["data-user"], i, x, wantX)
		}
	}
}

// wantLimit is a dashed budget line a plot should have: the ε budget and
// the users it belongs to, as its title names them.
type wantLimit struct {
	epsilon float64
	users   string
}

// checkLimits checks a plot's dashed budget lines: exactly one per wanted
// budget, largest first, each across the plot at the height of its ε on
// the plot's y scale (the one checkPlot checks the users' lines on),
// titled "budget ε = E (users)" and labelled with that text just above it.
func checkLimits(t *testing.T, svg *chromium.Element, want []wantLimit) {
	t.Helper()
	lines := svg.FindAll(func(e *chromium.Element) bool { return e.Name == "line" && e.Attr["class"] == "limit" })
	labels := svg.FindAll(func(e *chromium.Element) bool { return e.Name == "text" && e.Attr["class"] == "limit-label" })
	if len(lines) != len(want) || len(labels) != len(want) {
		t.Fatalf("%d budget lines and %d labels, want %d (%v)", len(lines), len(labels), len(want), want)
	}
	ymax := parseFloats(t, svg.Attr["data-y-max"])[0]
	bottom, top := float64(plotHeight-24), 14.0
	left, right := float64(plotMargin), float64(plotWidth-10)
	for i, w := range want {
		l := lines[i]
		wantTitle := "budget ε = " + num(w.epsilon) + " (" + w.users + ")"
		var title string
		for _, c := range l.Children {
			if c.Name == "title" {
				title = c.Text
			}
		}
		if title != wantTitle {
			t.Errorf("budget line %d: title %q, want %q", i, title, wantTitle)
		}
		wantY := bottom - (bottom-top)*w.epsilon/ymax
		x1, y1 := parseFloats(t, l.Attr["x1"])[0], parseFloats(t, l.Attr["y1"])[0]
		x2, y2 := parseFloats(t, l.Attr["x2"])[0], parseFloats(t, l.Attr["y2"])[0]
		if d := y1 - wantY; d > 0.01 || d < -0.01 || y2 != y1 {
			t.Errorf("%s: from y %v to y %v, want level at %v (ε %v of %v)", wantTitle, y1, y2, wantY, w.epsilon, ymax)
		}
		if x1 != left || x2 != right {
			t.Errorf("%s: from x %v to x %v, want across the plot from %v to %v", wantTitle, x1, x2, left, right)
		}
		if got := strings.TrimSpace(labels[i].Text); got != wantTitle {
			t.Errorf("budget label %d: %q, want %q", i, got, wantTitle)
		}
		if ly := parseFloats(t, labels[i].Attr["y"])[0]; ly != y1-3 {
			t.Errorf("%s: label at y %v, want just above the line (%v)", wantTitle, ly, y1-3)
		}
	}
}

// TestBudgetPageContent renders the page without a browser: the plot's
// lines carry each user's cumulative ε (the refund left out), the table
// the ledger's totals, and the costliest statement comes first.
func TestBudgetPageContent(t *testing.T) {
	src := testSource()
	now := t0.Add(time.Hour)
	rec := httptest.NewRecorder()
	BudgetPage(src, func() time.Time { return now }).ServeHTTP(rec, httptest.NewRequest("GET", "/budget", nil))
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("status %d, %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	body := rec.Body.String()
	if strings.Contains(strings.ToLower(body), "<script") {
		t.Error("the page has a script")
	}
	lines := polylines(t, body)
	root, _ := chromium.Parse(body)
	svg := root.FindAll(func(e *chromium.Element) bool { return e.Name == "svg" })[0].Attr
	checkPlot(t, lines["alice"], svg, []float64{0.25, 0.5, 0.75}, []time.Time{t0, t0.Add(20 * time.Minute), t0.Add(30 * time.Minute)})
	checkPlot(t, lines["bob"], svg, []float64{0.5}, []time.Time{t0.Add(10 * time.Minute)})
	checkLimits(t, root.FindAll(func(e *chromium.Element) bool { return e.Name == "svg" })[0], []wantLimit{{3, "alice"}, {2, "bob"}})
	if strings.Index(body, "fpA") > strings.Index(body, "fpB") || strings.Index(body, "fpB") > strings.Index(body, "fpC") {
		t.Error("statements not by decreasing ε (fpA 0.5, fpB 0.5 then fpC 0.25)")
	}
	for _, want := range []string{`data-user="alice" data-epsilon-spent="0.75" data-epsilon-left="2.25"`, `data-user="bob" data-epsilon-spent="0.5" data-epsilon-left="1.5"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the table lacks %s", want)
		}
	}
}

// TestBudgetPageChromium renders the page in headless Chromium: the DOM
// the browser built has the plot with every user's cumulative ε and a
// dashed line for each user's budget (alice ε 3, bob ε 2) at its height,
// and a screenshot is a non-empty image with more than one colour.
func TestBudgetPageChromium(t *testing.T) {
	chromium.Find(t)
	src := testSource()
	srv := httptest.NewServer(BudgetPage(src, func() time.Time { return t0.Add(time.Hour) }))
	defer srv.Close()
	dom := chromium.DumpDOM(t, srv.URL+"/budget")
	lines := polylines(t, dom)
	root, err := chromium.Parse(dom)
	if err != nil {
		t.Fatal(err)
	}
	svgs := root.FindAll(func(e *chromium.Element) bool { return e.Name == "svg" })
	if len(svgs) != 1 || len(lines) != 2 {
		t.Fatalf("%d plots and %d lines in the browser's DOM:\n%s", len(svgs), len(lines), dom)
	}
	checkPlot(t, lines["alice"], svgs[0].Attr, []float64{0.25, 0.5, 0.75}, []time.Time{t0, t0.Add(20 * time.Minute), t0.Add(30 * time.Minute)})
	checkPlot(t, lines["bob"], svgs[0].Attr, []float64{0.5}, []time.Time{t0.Add(10 * time.Minute)})
	checkLimits(t, svgs[0], []wantLimit{{3, "alice"}, {2, "bob"}})

	img, err := png.Decode(bytes.NewReader(chromium.Screenshot(t, srv.URL+"/budget", 900, 700)))
	if err != nil {
		t.Fatal(err)
	}
	colours := map[[3]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
		}
	}
	if b.Dx() < 100 || b.Dy() < 100 || len(colours) < 3 {
		t.Errorf("screenshot %v with %d colours", b, len(colours))
	}
}

// TestBudgetPageChromiumExactSums renders, in headless Chromium, a page
// whose float64 sums would show noise (0.1 + 0.7 is 0.7999999999999999 in
// float64, 0.1 + 0.2 is 0.30000000000000004) over charges less than a
// minute apart: every amount reads as the table's exact totals do (0.8,
// 0.3), in the plot's data, its hover titles and the statements table,
// and the time axis' two labels differ (to the second).
func TestBudgetPageChromiumExactSums(t *testing.T) {
	chromium.Find(t)
	eps := func(e float64) policies.Budget { return policies.Budget{Epsilon: e} }
	at := time.Date(2026, 11, 27, 23, 10, 5, 0, time.UTC)
	src := fakeSource{
		accounts: []Account{
			{User: "carol", Dataset: "checkins", Limit: eps(2), Spent: eps(0.8), Left: eps(1.2), Queries: 2},
			{User: "dave", Dataset: "checkins", Limit: eps(2), Spent: eps(0.3), Left: eps(1.7), Queries: 2},
		},
		charges: []Charge{
			{Time: at, User: "carol", Dataset: "checkins", Cost: eps(0.1), Fingerprint: "fpA"},
			{Time: at.Add(5 * time.Second), User: "dave", Dataset: "checkins", Cost: eps(0.1), Fingerprint: "fpB"},
			{Time: at.Add(10 * time.Second), User: "carol", Dataset: "checkins", Cost: eps(0.7), Fingerprint: "fpA"},
			{Time: at.Add(15 * time.Second), User: "dave", Dataset: "checkins", Cost: eps(0.2), Fingerprint: "fpB"},
		},
	}
	srv := httptest.NewServer(BudgetPage(src, func() time.Time { return at.Add(30 * time.Second) }))
	defer srv.Close()
	dom := chromium.DumpDOM(t, srv.URL+"/budget")
	root, err := chromium.Parse(dom)
	if err != nil {
		t.Fatal(err)
	}
	lines := polylines(t, dom)
	for user, want := range map[string]struct{ cum, title string }{
		"carol": {"0.1 0.8", "carol: ε 0.8 spent"},
		"dave":  {"0.1 0.3", "dave: ε 0.3 spent"},
	} {
		pl := lines[user]
		if pl == nil {
			t.Fatalf("no line for %s in the browser's DOM", user)
		}
		if got := pl.Attr["data-epsilon"]; got != want.cum {
			t.Errorf("%s: data-epsilon %q, want %q", user, got, want.cum)
		}
		var title string
		for _, c := range pl.Children {
			if c.Name == "title" {
				title = c.Text
			}
		}
		if title != want.title {
			t.Errorf("%s: hover title %q, want %q", user, title, want.title)
		}
	}
	tops := root.FindAll(func(e *chromium.Element) bool { return e.Name == "table" && e.Attr["class"] == "top" })
	if len(tops) != 1 {
		t.Fatalf("%d statement tables", len(tops))
	}
	var cells []string
	for _, td := range tops[0].FindAll(func(e *chromium.Element) bool { return e.Name == "td" }) {
		cells = append(cells, td.Text)
	}
	if got, want := strings.Join(cells, "|"), "fpA|carol|2|0.8|0|fpB|dave|2|0.3|0"; got != want {
		t.Errorf("statements table %q, want %q", got, want)
	}
	for _, noise := range []string{"0000000", "9999999"} {
		if strings.Contains(dom, noise) {
			t.Errorf("the page shows float noise (%s)", noise)
		}
	}
	label := func(class string) string {
		es := root.FindAll(func(e *chromium.Element) bool { return e.Name == "text" && e.Attr["class"] == class })
		if len(es) != 1 {
			t.Fatalf("%d %s labels", len(es), class)
		}
		return es[0].Text
	}
	if from, to := label("time-from"), label("time-to"); from != "2026-11-27 23:10:05" || to != "2026-11-27 23:10:35" {
		t.Errorf("time axis from %q to %q, want 2026-11-27 23:10:05 to 2026-11-27 23:10:35", from, to)
	}
	// carol and dave share a budget: one line, naming both.
	checkLimits(t, root.FindAll(func(e *chromium.Element) bool { return e.Name == "svg" })[0], []wantLimit{{2, "carol, dave"}})
}

// TestAxisLayout: the time axis' labels are to the second under a
// minute, to the minute from there, and the two ends of any span differ.
func TestAxisLayout(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 23, 10, 59, 900e6, time.UTC)
	for _, tt := range []struct {
		span     time.Duration
		from, to string
	}{
		{0, "2026-11-27 23:10:59", "2026-11-27 23:11:00"}, // drawn as one second
		{time.Second, "2026-11-27 23:10:59", "2026-11-27 23:11:00"},
		{59 * time.Second, "2026-11-27 23:10:59", "2026-11-27 23:11:58"},
		{time.Minute, "2026-11-27 23:10", "2026-11-27 23:11"},
		{26 * time.Hour, "2026-11-27 23:10", "2026-11-29 01:10"},
	} {
		lines := []*line{{User: "u", steps: []step{{t: t0, cum: 1}}}}
		p := drawPlot("d", lines, map[string]float64{"u": 1}, t0.Add(tt.span))
		if p.From != tt.from || p.To != tt.to {
			t.Errorf("span %v: axis from %q to %q, want %q to %q", tt.span, p.From, p.To, tt.from, tt.to)
		}
	}
}

// TestDrawPlotLimits: the budget lines of a plot are those of the users
// plotted, one per distinct budget, largest first; the scale reaches the
// largest; labels of budgets closer than a line of text are pushed apart;
// a label names at most labelUsers users, the title all of them.
func TestDrawPlotLimits(t *testing.T) {
	at := t0.Add(time.Minute)
	plotted := func(users ...string) []*line {
		var out []*line
		for _, u := range users {
			out = append(out, &line{User: u, steps: []step{{t: at, cum: 0.5}}})
		}
		return out
	}
	for _, tt := range []struct {
		name    string
		lines   []*line
		budgets map[string]float64
		ymax    float64
		want    []plotLimit // Y and LabelY are checked against the scale
	}{
		{
			name:  "different budgets",
			lines: plotted("carol", "dave"), budgets: map[string]float64{"carol": 3, "dave": 2},
			ymax: 3,
			want: []plotLimit{{Epsilon: 3, Users: "carol", Label: "carol"}, {Epsilon: 2, Users: "dave", Label: "dave"}},
		},
		{
			name:  "a budget of no user plotted",
			lines: plotted("carol"), budgets: map[string]float64{"carol": 3, "erin": 8},
			ymax: 3,
			want: []plotLimit{{Epsilon: 3, Users: "carol", Label: "carol"}},
		},
		{
			name:  "no budget any more",
			lines: plotted("carol", "gone"), budgets: map[string]float64{"carol": 0.25, "gone": 0},
			ymax: 0.5,
			want: []plotLimit{{Epsilon: 0.25, Users: "carol", Label: "carol"}},
		},
		{
			name:  "many users on one budget",
			lines: plotted("a", "b", "c", "d", "e"), budgets: map[string]float64{"a": 1, "b": 1, "c": 1, "d": 1, "e": 1},
			ymax: 1,
			want: []plotLimit{{Epsilon: 1, Users: "a, b, c, d, e", Label: "a, b, c, 2 more"}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := drawPlot("d", tt.lines, tt.budgets, at.Add(time.Hour))
			if p.YMax != tt.ymax {
				t.Errorf("y scale to %v, want %v", p.YMax, tt.ymax)
			}
			if len(p.Limits) != len(tt.want) {
				t.Fatalf("limits %+v, want %+v", p.Limits, tt.want)
			}
			for i, w := range tt.want {
				g := p.Limits[i]
				wantY := p.Bottom - (p.Bottom-p.Top)*w.Epsilon/p.YMax
				if g.Epsilon != w.Epsilon || g.Users != w.Users || g.Label != w.Label || g.Y != wantY || g.LabelY != wantY-3 {
					t.Errorf("limit %d: %+v, want %+v at y %v, its label at %v", i, g, w, wantY, wantY-3)
				}
			}
		})
	}
	// Budgets 2 and 1.95 are 5 pixels apart on a scale to 2: the lower
	// one's label goes below its line, a line of text under it, where it
	// is clear of the higher label and of its own dash.
	p := drawPlot("d", plotted("carol", "dave"), map[string]float64{"carol": 2, "dave": 1.95}, at.Add(time.Hour))
	if len(p.Limits) != 2 {
		t.Fatalf("limits %+v, want two", p.Limits)
	}
	hi, lo := p.Limits[0], p.Limits[1]
	if lo.Y-hi.Y >= labelGap {
		t.Fatalf("lines at %v and %v: not close enough for the test", hi.Y, lo.Y)
	}
	if hi.Epsilon != 2 || hi.LabelY != hi.Y-3 || lo.LabelY != lo.Y+labelGap {
		t.Errorf("labels of close budgets at %v and %v (lines at %v and %v), want %v and %v", hi.LabelY, lo.LabelY, hi.Y, lo.Y, hi.Y-3, lo.Y+labelGap)
	}
}

// TestBudgetPageUnreadable: a ledger that cannot be read gives 503, not
// a page with made-up totals.
func TestBudgetPageUnreadable(t *testing.T) {
	rec := httptest.NewRecorder()
	BudgetPage(failingSource{}, nil).ServeHTTP(rec, httptest.NewRequest("GET", "/budget", nil))
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != http.StatusServiceUnavailable || strings.Contains(string(body), "<svg") {
		t.Errorf("status %d: %s", rec.Code, body)
	}
}

type failingSource struct{}

func (failingSource) Accounts(context.Context) ([]Account, error) { return nil, io.ErrUnexpectedEOF }
func (failingSource) Charges(context.Context, func(Charge) error) error {
	return io.ErrUnexpectedEOF
}
