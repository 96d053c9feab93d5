package main

import (
	"database/sql"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// estimateFixture writes a SQLite database with users on a 6×6 grid of
// [0, 6]², friends placed by a known friend-distance model, and a policy
// declaring the attribute table.
func estimateFixture(t *testing.T, c float64) (policyPath string) {
	t.Helper()
	dir := t.TempDir()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "d.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE TABLE visits (uid INTEGER, x REAL, y REAL)",
		"CREATE TABLE friends (a INTEGER, b INTEGER)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	const users = 600
	cell := make([][2]int, users)
	tx, _ := db.Begin()
	for u := range users {
		cell[u] = [2]int{r.IntN(6), r.IntN(6)}
		for range 1 + r.IntN(3) { // every visit inside the user's cell
			tx.Exec("INSERT INTO visits VALUES (?, ?, ?)", u, float64(cell[u][0])+0.1+0.8*r.Float64(), float64(cell[u][1])+0.1+0.8*r.Float64())
		}
	}
	// Relate pairs with probability 0.05·(d + 1)^−c, d the L1 cell distance.
	for a := range users {
		for b := a + 1; b < users; b++ {
			d := math.Abs(float64(cell[a][0]-cell[b][0])) + math.Abs(float64(cell[a][1]-cell[b][1]))
			if r.Float64() < 0.05*math.Pow(d+1, -c) {
				tx.Exec("INSERT INTO friends VALUES (?, ?)", a, b)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	policyPath = filepath.Join(dir, "p.yaml")
	os.WriteFile(policyPath, []byte(`version: 1
backend: {driver: sqlite, dsn: d.db}
users: [{name: a, password_env: DDP_TEST_EST_PW, budgets: {d: {epsilon: 1}}}]
datasets:
  d:
    tables:
      visits:
        unit: uid
        max_rows_per_unit: 3
        columns:
          x: {type: real, bounds: [0, 6]}
          y: {type: real, bounds: [0, 6]}
`), 0o600)
	return policyPath
}

func TestEstimateDependence(t *testing.T) {
	pol := estimateFixture(t, 1.5)
	out, errOut, code := runCmd(t, "estimate-dependence", "--policy", pol, "--table", "friends", "--columns", "a,b",
		"--attributes", "x,y", "--cells", "6", "--epsilon", "0.5,2")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"pair MLE (Backstrom", "conditional MLE", "ρ Eq.14", "ρ Eq.18", "ρ used", "reference: the best-fitting conditional", "MIC between related units", "WARNING", "UNDERESTIMATES", "§VI-D3"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "relationships read") {
		t.Errorf("no progress on stderr:\n%s", errOut)
	}
	// The pair fit recovers the generating exponent (d in cell widths =
	// attribute units here).
	m := regexp.MustCompile(`pair MLE \(Backstrom et al\. 2010\):\s+a = (\S+)\s+b = (\S+)\s+c = (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no pair fit line:\n%s", out)
	}
	if c, _ := strconv.ParseFloat(m[3], 64); math.Abs(c-1.5) > 0.3 {
		t.Errorf("pair fit c = %v, generated with 1.5", c)
	}
	// Every ρ line: Eq. 14 ≤ Eq. 18, Eq. 14 ≤ ρ used, m exact ≥ 1 +
	// maxdeg·ρ used, m eq18 ≥ m exact and ≥ 1 + maxdeg·Eq. 18 (up to the
	// small change of Eq. 18 between the two σ), and m ≤ L.
	maxDeg := regexp.MustCompile(`largest out-degree (\d+)`).FindStringSubmatch(out)
	rows := regexp.MustCompile(`(?m)^\s+([\d.]+)\s+(conditional|pairs)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$`).FindAllStringSubmatch(out, -1)
	if maxDeg == nil || len(rows) != 4 {
		t.Fatalf("want 4 ρ rows and the degree:\n%s", out)
	}
	deg, _ := strconv.Atoi(maxDeg[1])
	for _, r := range rows {
		f := func(i int) float64 { v, _ := strconv.ParseFloat(r[i], 64); return v }
		e14, e18, used, mx, m18 := f(3), f(4), f(5), f(6), f(7)
		if e14 > e18+1e-4 || e14 > used+1e-4 {
			t.Errorf("%s: Eq. 14 %v above Eq. 18 %v or ρ used %v", r[0], e14, e18, used)
		}
		if mx < 1+float64(deg)*used-0.01 || m18 < mx-0.01 || mx > float64(deg+1)+0.01 || m18 > float64(deg+1)+0.01 {
			t.Errorf("%s: multipliers %v (exact), %v (eq18) with ρ used %v, L = %d", r[0], mx, m18, used, deg+1)
		}
	}
	// The snippet is accepted by the policy loader as a ddp dataset.
	i := strings.Index(out, "    dependence:\n")
	if i < 0 {
		t.Fatalf("no snippet:\n%s", out)
	}
	snippet := out[i:]
	data, _ := os.ReadFile(pol)
	ddp := strings.Replace(string(data), "  d:\n    tables:", "  d:\n    model: ddp\n"+snippet+"    tables:", 1)
	p2 := filepath.Join(filepath.Dir(pol), "ddp.yaml")
	os.WriteFile(p2, []byte(ddp), 0o600)
	loaded, err := policies.LoadWith(p2, policies.LoadOptions{Offline: true})
	if err != nil {
		t.Fatalf("the snippet does not load:\n%v\n%s", err, ddp)
	}
	mod := loaded.Datasets["d"].Dependence.Edges.Model
	if mod == nil || len(mod.Grid["x"].Resolved) != 6 || mod.Grid["x"].Resolved[0] != 0.5 || *mod.C <= 0 {
		t.Errorf("snippet model %+v", mod)
	}
}

// Independent attributes: the pair fit finds no distance effect, and the
// exact ρ of the fitted model is about 0.
func TestEstimateDependenceIndependent(t *testing.T) {
	pol := estimateFixture(t, 0)
	out, errOut, code := runCmd(t, "estimate-dependence", "--policy", pol, "--table", "friends", "--columns", "a,b",
		"--attributes", "x,y", "--cells", "6", "--epsilon", "1")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	rows := regexp.MustCompile(`(?m)^\s+1\s+pairs\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$`).FindStringSubmatch(out)
	if rows == nil {
		t.Fatalf("no pairs row:\n%s", out)
	}
	for _, k := range []int{1, 3} { // Eq. 14 and the ρ used
		if rho, _ := strconv.ParseFloat(rows[k], 64); rho > 0.05 {
			t.Errorf("independent data: ρ of the pair fit %v, want ≈ 0\n%s", rho, out)
		}
	}
	mic := regexp.MustCompile(`MIC between .*: x ([\d.]+) y ([\d.]+)`).FindStringSubmatch(out)
	if mic == nil {
		t.Fatalf("no MIC line:\n%s", out)
	}
	for _, s := range mic[1:] {
		// Few pairs (~900): MIC's bias at that size stays below 0.25.
		if v, _ := strconv.ParseFloat(s, 64); v > 0.25 {
			t.Errorf("independent data: MIC %v", v)
		}
	}
}

func TestEstimateDependenceUsage(t *testing.T) {
	pol := estimateFixture(t, 1)
	for _, args := range [][]string{
		{"estimate-dependence"},
		{"estimate-dependence", "--policy", pol, "--table", "friends", "--columns", "a", "--attributes", "x"},
		{"estimate-dependence", "--policy", pol, "--table", "friends", "--columns", "a,b", "--attributes", "x,y", "--epsilon", "-1"},
		{"estimate-dependence", "--policy", pol, "--table", "friends", "--columns", "a,b", "--attributes", "x,zz"},
	} {
		if _, errOut, code := runCmd(t, args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q; want usage error 2", args, code, errOut)
		}
	}
}
