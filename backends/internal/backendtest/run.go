package backendtest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// Aggregator is the part of backends.Backend the harness needs.
type Aggregator interface {
	Aggregate(ctx context.Context, q *ir.BackendQuery, fn func(ir.BackendRow) error) error
}

// Collect runs q and returns its rows sorted by key.
func Collect(ctx context.Context, b Aggregator, q *ir.BackendQuery) ([]ir.BackendRow, error) {
	var rows []ir.BackendRow
	err := b.Aggregate(ctx, q, func(r ir.BackendRow) error {
		rows = append(rows, r)
		return nil
	})
	Sort(rows)
	return rows, err
}

// Sort orders rows by their keys.
func Sort(rows []ir.BackendRow) {
	slices.SortFunc(rows, func(a, b ir.BackendRow) int {
		for i := range a.Keys {
			if c := ir.CompareValues(a.Keys[i], b.Keys[i]); c != 0 {
				return c
			}
		}
		return 0
	})
}

// NormalizeKeys converts the values of got's expression keys to the kind
// want holds for that key, as the release normalises keys by the key's
// analysed type: SQLite and MySQL return a truth value as 0 or 1, and
// SQLite an integral real as an integer. got is sorted again.
func NormalizeKeys(q *ir.BackendQuery, want, got []ir.BackendRow) {
	for i, g := range q.GroupBy {
		if _, isCol := g.(ir.ColumnRef); isCol {
			continue
		}
		kind := ir.KindNull
		for _, r := range want {
			if !r.Keys[i].IsNull() {
				kind = r.Keys[i].Kind
				break
			}
		}
		for _, r := range got {
			v := r.Keys[i]
			switch {
			case kind == ir.KindBool && v.Kind == ir.KindInt:
				r.Keys[i] = ir.Bool(v.Int != 0)
			case kind == ir.KindFloat && v.Kind == ir.KindInt:
				r.Keys[i] = ir.Float(float64(v.Int))
			}
		}
	}
	Sort(got)
}

// CanonicalKeys writes the expression keys of rows (two backends'
// answers to q, compared with each other) in one form: a truth value as
// the integer 0 or 1, an integral real as an integer — the kinds in which
// backends differ and which the release normalises by the key's type.
// rows is sorted again.
func CanonicalKeys(q *ir.BackendQuery, rows []ir.BackendRow) {
	for i, g := range q.GroupBy {
		if _, isCol := g.(ir.ColumnRef); isCol {
			continue
		}
		for _, r := range rows {
			switch v := r.Keys[i]; {
			case v.Kind == ir.KindBool && v.Bool:
				r.Keys[i] = ir.Int(1)
			case v.Kind == ir.KindBool:
				r.Keys[i] = ir.Int(0)
			case v.Kind == ir.KindFloat && v.Float == math.Trunc(v.Float) && math.Abs(v.Float) < 1<<53:
				r.Keys[i] = ir.Int(int64(v.Float))
			}
		}
	}
	Sort(rows)
}

// Diff describes the first difference between two sorted row sets, or
// returns "". Keys must match in kind too (Int 1 is not Float 1).
func Diff(want, got []ir.BackendRow) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d rows, want %d:\n got  %v\n want %v", len(got), len(want), got, want)
	}
	for i := range want {
		if !slices.Equal(want[i].Keys, got[i].Keys) || !slices.Equal(want[i].Aggs, got[i].Aggs) {
			return fmt.Sprintf("row %d: got %v, want %v", i, got[i], want[i])
		}
	}
	return ""
}

// CheckRandom runs n random queries (seeded, so a failure reproduces) on
// each backend and requires every result to equal the reference.
func CheckRandom(t *testing.T, d *Data, seed uint64, n int, backends map[string]Aggregator) {
	t.Helper()
	checkRandom(t, d, seed, n, d.RandomQuery, backends)
}

// CheckRandomDistinct is CheckRandom over RandomDistinctQuery: every
// query has a distinct count.
func CheckRandomDistinct(t *testing.T, d *Data, seed uint64, n int, backends map[string]Aggregator) {
	t.Helper()
	checkRandom(t, d, seed, n, d.RandomDistinctQuery, backends)
}

func checkRandom(t *testing.T, d *Data, seed uint64, n int, draw func(*rand.Rand) *ir.BackendQuery, backends map[string]Aggregator) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	ctx := context.Background()
	failures, nonzero := 0, 0
	for i := range n {
		q := draw(rng)
		want, err := d.Reference(q)
		if err != nil {
			t.Fatalf("query %d: reference: %v", i, err)
		}
		Sort(want)
		if slices.ContainsFunc(want, func(r ir.BackendRow) bool { return slices.ContainsFunc(r.Aggs, func(a int64) bool { return a != 0 }) }) {
			nonzero++
		}
		for name, b := range backends {
			got, err := Collect(ctx, b, q)
			if err == nil {
				NormalizeKeys(q, want, got)
			}
			if err != nil {
				t.Errorf("query %d on %s: %v (cause %v)\n%s", i, name, err, unwrap(err), q.Canonical())
				failures++
			} else if diff := Diff(want, got); diff != "" {
				t.Errorf("query %d on %s: %s\n%s", i, name, diff, q.Canonical())
				failures++
			}
		}
		if failures > 5 {
			t.Fatal("too many failures")
		}
	}
	// Guard against a generator whose predicates reject everything: the
	// comparison would then prove nothing.
	if nonzero < n/2 {
		t.Errorf("only %d of %d random queries had a non-zero aggregate", nonzero, n)
	}
	t.Logf("%d random queries, %d with non-zero aggregates", n, nonzero)
}

func unwrap(err error) error {
	if u, ok := err.(interface{ Unwrap() error }); ok {
		return u.Unwrap()
	}
	return nil
}
