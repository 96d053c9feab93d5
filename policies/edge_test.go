package policies

import (
	"strings"
	"testing"
)

// Null and oddly shaped entries are reported, never a panic.
func TestNullEntries(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"null user", "version: 1\nbackend: {driver: sqlite, dsn: x}\nusers:\n  -\ndatasets: {d: {tables: {t: {unit: id}}}}\n",
			[]string{"p.yaml:4: users.0: empty user entry"}},
		{"null dataset", "version: 1\nbackend: {driver: sqlite, dsn: x}\ndatasets:\n  d:\n",
			[]string{"p.yaml:4: datasets.d: dataset declares no tables"}},
		{"null table and column", "version: 1\nbackend: {driver: sqlite, dsn: x}\ndatasets:\n  d:\n    tables:\n      t:\n      u:\n        unit: id\n        columns:\n          c:\n",
			[]string{"p.yaml:6: datasets.d.tables.t.unit: a private table needs unit", "p.yaml:10: datasets.d.tables.u.columns.c.type: type is required"}},
		{"null domain and bounds", "version: 1\nbackend: {driver: sqlite, dsn: x}\ndatasets: {d: {tables: {t: {unit: id, columns: {c: {type: integer, bounds: , domain: }}}}}}\n",
			[]string{"p.yaml:3: datasets.d.tables.t.columns.c.bounds: bounds must be two numbers [lo, hi], not 0"}},
		{"scalar where a mapping belongs", "version: 1\nbackend: sqlite\ndatasets: {d: {tables: {t: {unit: id}}}}\n",
			[]string{"p.yaml:2: backend: expected a mapping (key: value lines), not \"sqlite\""}},
		{"list where a scalar belongs", "version: [1]\nbackend: {driver: sqlite, dsn: x}\ndatasets: {d: {tables: {t: {unit: id}}}}\n",
			[]string{"p.yaml:1: version: expected an integer, not a list"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps := problemsOf(t, tc.src)
			if len(ps) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(ps), len(tc.want), ps)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(ps[i].Error(), w) {
					t.Errorf("problem %d = %q, want prefix %q", i, ps[i].Error(), w)
				}
			}
		})
	}
}

func TestAnchorsAndMerge(t *testing.T) {
	fixtureEnv(t)
	p, err := Load("testdata/policies/anchors.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, r := p.LookupTable("", "returns")
	if r == nil {
		t.Fatal("returns not found")
	}
	reason, status := r.Column("reason"), r.Column("status")
	if reason.Type != TypeText || len(reason.Domain.Resolved) != 2 || reason.Domain.Resolved[0].Str != "broken" {
		t.Errorf("reason = %+v (merge must keep the explicit domain)", reason)
	}
	if len(status.Domain.Resolved) != 3 {
		t.Errorf("status = %+v", status)
	}
	if b, ok := p.User("ann").Budget("shop2"); !ok || b.Epsilon != 1 {
		t.Errorf("aliased budget = %+v %v", b, ok)
	}
	// MySQL DSN database "shop": a query naming that schema finds it.
	if _, tb := p.LookupTable("shop", "orders"); tb == nil {
		t.Error("shop.orders not found")
	}
}
