package release_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlite"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// The kifer2011 §4.1 reconstruction attack through the proxy. A table has
// one attribute r with k values; the k−1 pair counts c(r_j) + c(r_{j+1})
// are published exactly. The analyst asks once for the histogram and
// combines each noisy count with the published pairs into k unbiased
// estimators of c(r_1) (E_j = Σ_{i<j} (−1)^{i−1} a_i + (−1)^{j−1} c̃_j),
// then averages them.
const attackK = 8

var attackCounts = [attackK]int{5, 9, 2, 7, 4, 11, 3, 6}

const attackPolicy = `
version: 1
backend: {driver: sqlite, dsn: %q}
ledger: {path: %q}
users:
  - name: eve
    password_env: DDP_TEST_RELEASE_PASSWORD
    budgets: {plain: {epsilon: 1000000}, guarded: {epsilon: 1000000}}
    max_epsilon: 10
datasets:
  plain:
    clamp_counts: false
    tables:
      rt: {unit: id, columns: {r: {type: integer, domain: {range: [1, 8]}}}}
  guarded:
    model: induced
    clamp_counts: false
    constraints:
%s    tables:
      rt2: {unit: id, columns: {r: {type: integer, domain: {range: [1, 8]}}}}
`

// dlVariance is the variance of the two-sided geometric distribution with
// scale t: 2p/(1−p)² with p = e^(−1/t).
func dlVariance(t float64) float64 {
	p := math.Exp(-1 / t)
	return 2 * p / ((1 - p) * (1 - p))
}

func TestKiferReconstructionAttack(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "attack.db")
	db, err := sql.Open("sqlite3", "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	id := 0
	for _, tbl := range []string{"rt", "rt2"} {
		if _, err := db.Exec("CREATE TABLE " + tbl + " (id INTEGER, r INTEGER)"); err != nil {
			t.Fatal(err)
		}
		for v, c := range attackCounts {
			for range c {
				id++
				if _, err := db.Exec(fmt.Sprintf("INSERT INTO %s VALUES (%d, %d)", tbl, id, v+1)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	db.Close()
	constraints := ""
	for j := 1; j < attackK; j++ {
		constraints += fmt.Sprintf("      - count: {r: [%d, %d]}\n", j, j+1)
	}
	t.Setenv("DDP_TEST_RELEASE_PASSWORD", "pw")
	ledgerPath := filepath.Join(dir, "ledger.db")
	pol, err := policies.LoadBytes(filepath.Join(dir, "policy.yaml"), []byte(fmt.Sprintf(attackPolicy, dbPath, ledgerPath, constraints)))
	if err != nil {
		t.Fatal(err)
	}
	be, err := sqlite.Open(context.Background(), dbPath, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	l, err := ledger.Open(ledgerPath, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p := planner.New(pol)
	user := pol.User("eve")

	// Published pair counts a_j.
	var a [attackK - 1]float64
	for j := range a {
		a[j] = float64(attackCounts[j] + attackCounts[j+1])
	}
	const eps = 1.0
	// 400 independent attacks per policy; each has a distinct ε (within
	// 1e-9 of 1) so that the ledger's release cache, which makes repeating
	// one query useless, does not return the first answer again. The
	// sample variance of 400 draws is within ±30% of the truth except with
	// probability below 10⁻⁴ (relative standard error ≈ 0.075 for these
	// light-tailed averages); the seeds are fixed, so the test is
	// deterministic.
	const trials = 400
	attack := func(table string, seed uint64) (mse, sens float64) {
		eng := release.New(be, l, release.Options{Source: noise.SeededSource(seed)})
		var sum2 float64
		for i := range trials {
			e := eps * (1 + float64(i)*1e-12)
			stmts, err := parser.Parse(parser.Postgres, "SELECT r, COUNT(*) FROM "+table+" GROUP BY r")
			if err != nil {
				t.Fatal(err)
			}
			pl, err := p.Plan(planner.Request{User: user, Epsilon: e, Dialect: "postgres", Statement: &stmts[0]})
			if err != nil {
				t.Fatal(err)
			}
			sens = float64(pl.Aggs[0].Sensitivity)
			res, err := eng.Run(context.Background(), user, pl)
			if err != nil {
				t.Fatal(err)
			}
			if res.Cached || len(res.Rows) != attackK {
				t.Fatalf("trial %d: cached %v, %d rows", i, res.Cached, len(res.Rows))
			}
			var noisy [attackK]float64
			for _, row := range res.Rows {
				r, _ := row[0].AsFloat()
				c, _ := row[1].AsFloat()
				noisy[int(r)-1] = c
			}
			// E_j for j = 1..k, averaged.
			var est, prefix float64
			for j := range attackK {
				sign := 1.0
				if j%2 == 1 {
					sign = -1
				}
				est += prefix + sign*noisy[j]
				if j < attackK-1 {
					prefix += sign * a[j]
				}
			}
			est /= attackK
			d := est - float64(attackCounts[0])
			sum2 += d * d
		}
		return sum2 / trials, sens
	}

	dpMSE, dpSens := attack("rt", 101)
	if dpSens != 1 {
		t.Fatalf("dp histogram sensitivity %g, want 1", dpSens)
	}
	dpWant := dlVariance(dpSens/eps) / attackK // ≈ 2/(kε²) for small ε
	if dpMSE < 0.7*dpWant || dpMSE > 1.3*dpWant {
		t.Errorf("dp: reconstruction error variance %.4f, want ≈ %.4f (2/(kε²) = %.4f)", dpMSE, dpWant, 2/(attackK*eps*eps))
	}
	t.Logf("dp: averaged estimator of c(r1) has error variance %.4f (theory %.4f): the published pairs make every noisy count about everyone", dpMSE, dpWant)

	indMSE, indSens := attack("rt2", 202)
	if indSens != attackK {
		t.Fatalf("induced histogram sensitivity %g, want k = %d", indSens, attackK)
	}
	indWant := dlVariance(indSens/eps) / attackK // ≈ 2k/ε²
	if indMSE < 0.7*indWant || indMSE > 1.3*indWant {
		t.Errorf("induced: reconstruction error variance %.4f, want ≈ %.4f", indMSE, indWant)
	}
	// The policy's promise: the table is indistinguishable from its
	// induced neighbour (the alternating ±1 move, which shifts c(r1) by
	// one) at level ε — the attack must do no better than a single
	// sensitivity-1 count at ε, whose variance is dlVariance(1/ε).
	if promised := dlVariance(1 / eps); indMSE < promised {
		t.Errorf("induced: reconstruction error variance %.4f beats the single-count level %.4f the policy promises", indMSE, promised)
	}
	if indMSE < 20*dpMSE {
		t.Errorf("induced error variance %.4f is not far above dp's %.4f", indMSE, dpMSE)
	}
	t.Logf("induced: error variance %.4f (theory %.4f), %.0f× the dp attack's", indMSE, indWant, indMSE/dpMSE)
}
