package planner_test

import (
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
)

// TestBucketAlignedWhereOverStoredReals: a WHERE clause on a bucketed
// partition column is read as a union of buckets (no secret pair moves a
// row into or out of it) only where that holds for every value the column
// can hold. An integer column outside the constraints is not verified: a
// stored 0.5 (SQLite keeps it in an INTEGER column) lies in bucket
// [0, 1], fails x IN (0, 1), and its secret pair 1 passes — so that list
// is not a union of buckets, while x <= 1 is. A constrained column holds
// only its declared integers (verified before serving), so there the
// integer points decide.
func TestBucketAlignedWhereOverStoredReals(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	const secrets = "    model: blowfish\n    secrets: {partition: {column: x, buckets: [[0, 1], [2, 3]]}}\n"
	for _, c := range []struct {
		name, yaml, sql string
		zero            bool
	}{
		{"unverified list", secrets, "SELECT COUNT(*) FROM t WHERE x IN (0, 1)", false},
		{"unverified equality", secrets, "SELECT COUNT(*) FROM t WHERE x = 1 OR x = 0", false},
		{"unverified range", secrets, "SELECT COUNT(*) FROM t WHERE x <= 1", true},
		{"unverified between", secrets, "SELECT COUNT(*) FROM t WHERE x BETWEEN 2 AND 3", true},
		{"unverified half-open", secrets, "SELECT COUNT(*) FROM t WHERE x < 1.5", true},
		{"unverified inside a bucket", secrets, "SELECT COUNT(*) FROM t WHERE x < 0.5", false},
		{"verified list", secrets + "    compensation: secrets-only\n    constraints: [{count: {x: [0, 3]}}]\n", "SELECT COUNT(*) FROM t WHERE x IN (0, 1)", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := loadExprPolicy(t, exprPolicy{name: c.name, yaml: c.yaml})
			if p == nil {
				t.Fatal("policy refused")
			}
			pl, err := plan(t, p, c.sql, planArgs{eps: 1, dialect: parser.Postgres})
			if err != nil {
				t.Fatal(err)
			}
			if got := pl.Aggs[0].Sensitivity; (got == 0) != c.zero {
				t.Errorf("%s: sensitivity %d, want zero %v; notes %v", c.sql, got, c.zero, pl.Notes)
			}
		})
	}
}

// TestBucketAlignedKeyOverStoredReals: the same for a grouping key. A key
// that compares the bare column (x IN (0, 1)) reads the stored value, which
// may be 0.5 in bucket [0, 1] on an unverified column: it must not be read
// as aligned (its derived key set is both truth values, so it is not); a
// key that computes with the column reads its clamp, an integer
// (floor(x / 2)), and stays aligned. GROUP BY x IN (0, 1) also used to
// panic while deriving its key set (comparing two ir.In values): the
// front ends recover, but the connection was dropped for a valid query.
func TestBucketAlignedKeyOverStoredReals(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	const secrets = "    model: blowfish\n    secrets: {partition: {column: x, buckets: [[0, 1], [2, 3]]}}\n"
	for _, c := range []struct {
		name, yaml, sql string
		zero            bool
	}{
		{"unverified list", secrets, "SELECT x IN (0, 1) AS k, COUNT(*) FROM t GROUP BY 1", false},
		{"unverified equality", secrets, "SELECT (x = 0 OR x = 1) AS k, COUNT(*) FROM t GROUP BY 1", false},
		{"unverified computed", secrets, "SELECT floor(x / 2) AS k, COUNT(*) FROM t GROUP BY 1", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := loadExprPolicy(t, exprPolicy{name: c.name, yaml: c.yaml})
			if p == nil {
				t.Fatal("policy refused")
			}
			for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
				pl, err := plan(t, p, c.sql, planArgs{eps: 1, dialect: d})
				if err != nil {
					t.Fatal(err)
				}
				if got := pl.Aggs[0].Sensitivity; (got == 0) != c.zero {
					t.Errorf("%s: sensitivity %d, want zero %v; notes %v; backend %s", c.sql, got, c.zero, pl.Notes, pl.Backend.Canonical())
				}
			}
		})
	}
}
