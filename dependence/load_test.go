package dependence_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/postgres"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlite"
	"github.com/ddp-proxy/ddp-proxy/dependence"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

const loadPolicy = `version: 1
backend: {driver: sqlite, dsn: x.db}
users:
  - name: a
    password_env: DDP_TEST_DEP_PW
    budgets: {hh: {epsilon: 1}, fr: {epsilon: 1}, md: {epsilon: 1}, mm: {epsilon: 1}}
datasets:
  hh:
    model: ddp
    dependence: {groups: {column: household_id, rho: 0.5}}
    tables:
      %[1]speople: {%[2]sunit: person_id, columns: {household_id: {type: integer}}}
  mm:
    model: ddp
    dependence: {groups: {column: hh, rho: 0.5}}
    tables:
      %[1]smembers: {%[2]sunit: pid, columns: {hh: {type: integer}}}
  fr:
    model: ddp
    dependence: {edges: {%[2]stable: %[1]sfollows, columns: [src, dst], rho_column: w, directed: true}}
    tables:
      %[1]sposts: {%[2]sunit: uid}
  md:
    model: ddp
    dependence:
      edges: {%[2]stable: %[1]sfollows, columns: [src, dst], model: {a: 1, b: 0.5, c: 2, columns: [x], grid: {x: {values: [0, 1]}}}}
    tables:
      %[1]scells: {%[2]sunit: uid}
`

var loadSetup = []string{
	`CREATE TABLE %[1]speople (person_id INTEGER, household_id INTEGER)`,
	// households {1,2,3} (person 3 twice), {4,5}; 6 alone; 7 without one.
	`INSERT INTO %[1]speople VALUES (1,10),(2,10),(3,10),(3,10),(4,20),(5,20),(6,30),(7,NULL)`,
	`CREATE TABLE %[1]smembers (pid INTEGER, hh INTEGER)`,
	// unit 3 is in groups 1 and 2: it reaches 1, 2, 4, 5.
	`INSERT INTO %[1]smembers VALUES (1,1),(2,1),(3,1),(3,2),(4,2),(5,2),(5,2)`,
	`CREATE TABLE %[1]sfollows (src INTEGER, dst INTEGER, w DOUBLE PRECISION)`,
	`INSERT INTO %[1]sfollows VALUES (1,2,0.5),(1,3,0.25),(2,1,0.75),(3,1,0.1),(3,2,0.1),(3,4,0.1),(1,2,0.3),(5,5,1),(NULL,2,0.9)`,
	`CREATE TABLE %[1]sposts (uid INTEGER)`,
	`CREATE TABLE %[1]scells (uid INTEGER)`,
}

func iv(x int64) ir.Value   { return ir.Int(x) }
func fv(x float64) ir.Value { return ir.Float(x) }

func checkLoaded(t *testing.T, pol *policies.Policy) {
	t.Helper()
	hh := pol.Datasets["hh"].Dependence.Structure
	if hh == nil || hh.L != 3 || hh.MaxWeightedDegree != 1 || hh.Units != 5 || hh.Links != 8 {
		t.Errorf("groups: %+v, want L 3, max weighted degree 1, 5 units, 8 links", hh)
	}
	if m, _ := hh.Solver.Multiplier(0.3); m.M != 2 {
		t.Errorf("groups multiplier %v, want 2", m.M)
	}
	mm := pol.Datasets["mm"].Dependence.Structure
	if mm == nil || mm.L != 5 || mm.MaxWeightedDegree != 2 || mm.Units != 5 || mm.Links != 12 {
		t.Errorf("multi-groups: %+v, want L 5, max weighted degree 2, 5 units, 12 links (2+2+4+2+2)", mm)
	}
	if m, _ := mm.Solver.Multiplier(1); m.M != 3 {
		t.Errorf("multi-groups multiplier %v, want 3", m.M)
	}
	fr := pol.Datasets["fr"].Dependence.Structure
	if fr == nil || fr.L != 4 || fr.MaxWeightedDegree != 0.75 || fr.Units != 3 || fr.Links != 6 || fr.Skipped != 2 {
		t.Errorf("edges: %+v, want L 4, max weighted degree 0.75, 3 units, 6 links, 2 skipped", fr)
	}
	if m, _ := fr.Solver.Multiplier(2); m.M != 1.75 {
		t.Errorf("edges multiplier %v, want 1.75", m.M)
	}
	md := pol.Datasets["md"].Dependence.Structure
	if md == nil || md.L != 4 || md.RhoMethod != "exact" {
		t.Fatalf("model: %+v", md)
	}
	m, err := md.Solver.Multiplier(1)
	if err != nil || m.M < m.F || m.M <= 1 || m.M >= 4 {
		t.Errorf("model multiplier %+v (%v)", m, err)
	}
}

func TestLoadSQLite(t *testing.T) {
	t.Setenv("DDP_TEST_DEP_PW", "pw")
	path := filepath.Join(t.TempDir(), "dep.db")
	raw, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range loadSetup {
		if _, err := raw.Exec(fmt.Sprintf(s, "")); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	be, err := sqlite.Open(context.Background(), path, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	pol, err := policies.LoadBytes("p.yaml", []byte(fmt.Sprintf(loadPolicy, "", "")))
	if err != nil {
		t.Fatal(err)
	}
	if err := dependence.Load(context.Background(), pol, be, nil); err != nil {
		t.Fatal(err)
	}
	checkLoaded(t, pol)
}

func TestLoadPostgres(t *testing.T) {
	dsn := os.Getenv("DDP_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("DDP_TEST_POSTGRES_DSN is not set")
	}
	t.Setenv("DDP_TEST_DEP_PW", "pw")
	raw, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("ddpdep_%d", rand.Uint32())
	if _, err := raw.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := raw.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			t.Errorf("dropping %s: %v", schema, err)
		}
		raw.Close()
	})
	for _, s := range loadSetup {
		if _, err := raw.Exec(fmt.Sprintf(s, schema+".")); err != nil {
			t.Fatal(err)
		}
	}
	be, err := postgres.Open(context.Background(), dsn, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	// Tables in the schema: the policy names the schema per table.
	y := fmt.Sprintf(loadPolicy, "", "schema: "+schema+", ")
	pol, err := policies.LoadBytes("p.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	if err := dependence.Load(context.Background(), pol, be, nil); err != nil {
		t.Fatal(err)
	}
	checkLoaded(t, pol)
}

func TestLoadRefusesBadRho(t *testing.T) {
	rows := edgeRows{{iv(1), iv(2), fv(0.5)}, {iv(2), iv(3), fv(1.5)}}
	ds := &policies.Dataset{Name: "d", Model: policies.ModelDDP, Dependence: &policies.Dependence{
		Edges: &policies.DependenceEdges{Table: "e", Columns: []string{"a", "b"}, RhoColumn: "w"}}}
	_, err := dependence.Read(context.Background(), ds, rows)
	if err == nil || !strings.Contains(err.Error(), "outside [0, 1]") {
		t.Fatalf("err = %v", err)
	}
	// Without a backend only size works.
	if _, err := dependence.Read(context.Background(), ds, nil); err == nil || !strings.Contains(err.Error(), "no backend") {
		t.Fatalf("err = %v", err)
	}
}

// social50k writes n random friendships among users (undirected, weights in
// [0, 1]) into a fresh SQLite file and returns the open backend and the
// expected max weighted degree, computed here independently.
func social50k(t testing.TB, n int) (*sqlite.Backend, float64, int) {
	path := filepath.Join(t.TempDir(), "social.db")
	raw, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`CREATE TABLE friendships (user_a INTEGER, user_b INTEGER, w REAL)`); err != nil {
		t.Fatal(err)
	}
	tx, _ := raw.Begin()
	st, _ := tx.Prepare(`INSERT INTO friendships VALUES (?, ?, ?)`)
	r := rand.New(rand.NewPCG(11, 12))
	users := n / 5
	// Weights are whole thousandths, summed exactly in integers below, so
	// the expected maximum is the exact decimal sum (float sums would
	// depend on the order of addition).
	w := map[[2]int]int{}
	for range n {
		a, b := r.IntN(users), r.IntN(users)
		xi := r.IntN(1000)
		x := float64(xi) / 1000
		if _, err := st.Exec(a, b, x); err != nil {
			t.Fatal(err)
		}
		if a == b {
			continue
		}
		k := [2]int{min(a, b), max(a, b)}
		w[k] = max(w[k], xi)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	sum, deg := map[int]int{}, map[int]int{}
	for k, x := range w {
		sum[k[0]] += x
		sum[k[1]] += x
		deg[k[0]]++
		deg[k[1]]++
	}
	maxSum, maxD := 0, 0
	for u, s := range sum {
		maxSum = max(maxSum, s)
		maxD = max(maxD, deg[u])
	}
	maxW := float64(maxSum) / 1000
	be, err := sqlite.Open(context.Background(), path, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return be, maxW, maxD
}

func socialDataset() *policies.Dataset {
	return &policies.Dataset{Name: "social", Model: policies.ModelDDP, Dependence: &policies.Dependence{
		Edges: &policies.DependenceEdges{Table: "friendships", Columns: []string{"user_a", "user_b"}, RhoColumn: "w"}}}
}

// A 50,000-edge relationship table loads in well under the seconds the
// issue allows, and its summary matches an independent computation.
func TestLoad50kEdges(t *testing.T) {
	be, wantW, wantD := social50k(t, 50000)
	defer be.Close()
	start := time.Now()
	s, err := dependence.Read(context.Background(), socialDataset(), be)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if took > 5*time.Second {
		t.Errorf("loading 50,000 edges took %v", took)
	}
	if math.Abs(s.MaxWeightedDegree-wantW) > 1e-9 || s.L != wantD+1 {
		t.Errorf("max weighted degree %v L %d, want %v %d", s.MaxWeightedDegree, s.L, wantW, wantD+1)
	}
	m, _ := s.Solver.Multiplier(1)
	if m.M < 1+wantW || m.M > (1+wantW)*(1+1e-12) {
		t.Errorf("multiplier %v, want 1 + %v", m.M, wantW)
	}
	t.Logf("50,000 edges: %v (%s)", took, s.Source)
}

// One unit written as 1, 1.0 and '1' in different columns is one node: its
// degree is not split.
func TestLoadMergesUnitSpellings(t *testing.T) {
	rows := edgeRows{
		{iv(1), iv(2), fv(0.5)},
		{ir.String("3"), ir.String("1"), fv(0.5)},
		{ir.Float(1), iv(4), fv(0.5)},
	}
	ds := &policies.Dataset{Name: "d", Model: policies.ModelDDP, Dependence: &policies.Dependence{
		Edges: &policies.DependenceEdges{Table: "e", Columns: []string{"a", "b"}, RhoColumn: "w"}}}
	s, err := dependence.Read(context.Background(), ds, rows)
	if err != nil {
		t.Fatal(err)
	}
	if s.L != 4 || s.MaxWeightedDegree != 1.5 {
		t.Fatalf("L %d max weighted degree %v, want 4 and 1.5", s.L, s.MaxWeightedDegree)
	}
}
