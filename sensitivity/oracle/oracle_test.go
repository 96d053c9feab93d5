package oracle

import (
	"iter"
	"slices"
	"testing"
)

// Every expected value in this file is computed by hand from the
// definitions, so that a broken oracle cannot make the closed-form tests in
// package sensitivity pass.

func TestUniverseEnumeration(t *testing.T) {
	tests := []struct {
		name      string
		space     Space
		wantUnits int
		wantDBs   int
	}{
		// Units over {0,1} with ≤2 rows: {0} {1} {0,0} {0,1} {1,1}.
		// Databases of ≤2 of them: 1 + 5 + C(5+1,2)=15 → 21.
		{name: "domain 2 k 2 n 2", space: Space{Domain: 2, MaxUnits: 2, RowsPerUnit: 2}, wantUnits: 5, wantDBs: 21},
		// Tuples over 3 values, ≤3 of them: C(3+3,3) = 20.
		{name: "domain 3 k 1 n 3", space: Space{Domain: 3, MaxUnits: 3, RowsPerUnit: 1}, wantUnits: 3, wantDBs: 20},
		// Only the empty database.
		{name: "n 0", space: Space{Domain: 4, MaxUnits: 0, RowsPerUnit: 3}, wantUnits: 4 + 10 + 20, wantDBs: 1},
		// Two tuples over {0,1} whose value-0 count is exactly 1: {0,1} only.
		{name: "constraint", space: Space{Domain: 2, MaxUnits: 2, RowsPerUnit: 1, Satisfies: func(d Database) bool {
			return len(d) == 2 && countValue(d, 0) == 1
		}}, wantUnits: 2, wantDBs: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := NewUniverse(tt.space)
			if err != nil {
				t.Fatal(err)
			}
			if len(u.Units) != tt.wantUnits || len(u.DBs) != tt.wantDBs {
				t.Fatalf("got %d units, %d databases; want %d, %d", len(u.Units), len(u.DBs), tt.wantUnits, tt.wantDBs)
			}
			seen := map[string]bool{}
			for i, d := range u.DBs {
				if !slices.EqualFunc(d, d.Canonical(), slices.Equal) {
					t.Errorf("database %v is not canonical", d)
				}
				if seen[d.String()] {
					t.Errorf("database %v enumerated twice", d)
				}
				seen[d.String()] = true
				if j, ok := u.Index(reversed(d)); !ok || j != i {
					t.Errorf("Index(reversed %v) = %d, %v; want %d, true", d, j, ok, i)
				}
			}
		})
	}
}

func TestNewUniverseRejects(t *testing.T) {
	tests := []struct {
		name  string
		space Space
	}{
		{name: "empty domain", space: Space{Domain: 0, MaxUnits: 1, RowsPerUnit: 1}},
		{name: "huge domain", space: Space{Domain: 65, MaxUnits: 1, RowsPerUnit: 1}},
		{name: "negative units", space: Space{Domain: 2, MaxUnits: -1, RowsPerUnit: 1}},
		{name: "zero rows", space: Space{Domain: 2, MaxUnits: 1, RowsPerUnit: 0}},
		// 8 values, k = 4: 494 units; 4 of them: C(498, 4) ≈ 2.5e9.
		{name: "blow-up", space: Space{Domain: 8, MaxUnits: 4, RowsPerUnit: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewUniverse(tt.space); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestPairCounts(t *testing.T) {
	tests := []struct {
		name  string
		space Space
		nb    Neighbours
		want  int
	}{
		// {} – {0}, {} – {1}.
		{name: "unbounded domain 2 n 1", space: Space{Domain: 2, MaxUnits: 1, RowsPerUnit: 1}, nb: Unbounded, want: 2},
		// {0} – {1} only; the empty database has no neighbour.
		{name: "bounded domain 2 n 1", space: Space{Domain: 2, MaxUnits: 1, RowsPerUnit: 1}, nb: Bounded, want: 1},
		// Sizes 0–1: 2 pairs; sizes 1–2: {0}–{0,0}, {0}–{0,1}, {1}–{0,1}, {1}–{1,1}.
		{name: "unbounded domain 2 n 2", space: Space{Domain: 2, MaxUnits: 2, RowsPerUnit: 1}, nb: Unbounded, want: 6},
		// {0}–{1}; {0,0}–{0,1}, {0,1}–{1,1}.
		{name: "bounded domain 2 n 2", space: Space{Domain: 2, MaxUnits: 2, RowsPerUnit: 1}, nb: Bounded, want: 3},
		// Units {0} {1} {0,0} {0,1} {1,1}: every two of the 5 one-unit databases.
		{name: "bounded domain 2 k 2 n 1", space: Space{Domain: 2, MaxUnits: 1, RowsPerUnit: 2}, nb: Bounded, want: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := NewUniverse(tt.space)
			if err != nil {
				t.Fatal(err)
			}
			if got := NewPairs(u, tt.nb).Len(); got != tt.want {
				t.Fatalf("got %d pairs, want %d", got, tt.want)
			}
		})
	}
}

func TestMaxL1HandComputed(t *testing.T) {
	all2 := []bool{true, true}
	tests := []struct {
		name  string
		space Space
		nb    Neighbours
		agg   Aggregate
		want  int64
	}{
		{name: "unbounded count", space: sp(2, 1, 1), nb: Unbounded, agg: Aggregate{Where: all2}, want: 1},
		// One tuple, public count: COUNT(*) never changes.
		{name: "bounded count no predicate", space: sp(2, 2, 1), nb: Bounded, agg: Aggregate{}, want: 0},
		// {0} → {1} with WHERE v = 1.
		{name: "bounded count predicate", space: sp(2, 2, 1), nb: Bounded, agg: Aggregate{Where: []bool{false, true}}, want: 1},
		// A unit of 1 row replaced by 2 rows: the row count is not public.
		{name: "bounded count k 2 no predicate", space: sp(2, 1, 2), nb: Bounded, agg: Aggregate{}, want: 1},
		// {0} → {1}: (1,0) → (0,1).
		{name: "bounded histogram", space: sp(2, 1, 1), nb: Bounded, agg: Aggregate{GroupOf: []int{0, 1}, Groups: 2}, want: 2},
		{name: "unbounded histogram k 2", space: sp(2, 2, 2), nb: Unbounded, agg: Aggregate{GroupOf: []int{0, 1}, Groups: 2}, want: 2},
		// {0,0} → {1,1}: (2,0) → (0,2).
		{name: "bounded histogram k 2", space: sp(2, 1, 2), nb: Bounded, agg: Aggregate{GroupOf: []int{0, 1}, Groups: 2}, want: 4},
		// Values −3 and 5: adding {1,1} adds 10.
		{name: "unbounded sum", space: sp(2, 1, 2), nb: Unbounded, agg: Aggregate{Value: []int64{-3, 5}, Lo: -10, Hi: 10}, want: 10},
		// {0,0} = −6 → {1,1} = 10.
		{name: "bounded sum", space: sp(2, 1, 2), nb: Bounded, agg: Aggregate{Value: []int64{-3, 5}, Lo: -10, Hi: 10}, want: 16},
		// Clamping: values −30, 50 clamped to [−2, 4]: {0,0} = −4 → {1,1} = 8.
		{name: "bounded sum clamped", space: sp(2, 1, 2), nb: Bounded, agg: Aggregate{Value: []int64{-30, 50}, Lo: -2, Hi: 4}, want: 12},
		// Values 4, 4, 0 in groups 0, 1, 0 (value 2 rejected by WHERE):
		// {0} → {1}: (4,0) → (0,4).
		{name: "bounded grouped sum", space: sp(3, 1, 1), nb: Bounded, agg: Aggregate{Where: []bool{true, true, false}, GroupOf: []int{0, 1, 0}, Groups: 2, Value: []int64{4, 4, 9}, Lo: 0, Hi: 9}, want: 8},
		// Up to two tuples, exactly one of value 0: {0} and {0,1}. No
		// replacement keeps the constraint, so there are no bounded pairs.
		{name: "constraint removes pairs", space: Space{Domain: 2, MaxUnits: 2, RowsPerUnit: 1, Satisfies: func(d Database) bool {
			return countValue(d, 0) == 1
		}}, nb: Bounded, agg: Aggregate{GroupOf: []int{0, 1}, Groups: 2}, want: 0},
		// Same constraint without the size: {0} – {0,1} are unbounded neighbours.
		{name: "constraint unbounded", space: Space{Domain: 2, MaxUnits: 2, RowsPerUnit: 1, Satisfies: func(d Database) bool {
			return countValue(d, 0) == 1
		}}, nb: Unbounded, agg: Aggregate{GroupOf: []int{0, 1}, Groups: 2}, want: 1},
		// Distinct counts. Adding {0,1} to {} adds two distinct values.
		{name: "unbounded distinct k 2", space: sp(3, 2, 2), nb: Unbounded, agg: Aggregate{Distinct: []int{0, 1, 2}}, want: 2},
		// Every value has the same x: at most one distinct value.
		{name: "unbounded distinct of a constant", space: sp(3, 2, 2), nb: Unbounded, agg: Aggregate{Distinct: []int{7, 7, 7}}, want: 1},
		// x of value 0 is NULL: {1} adds one, {0} none.
		{name: "unbounded distinct with NULL", space: sp(2, 2, 1), nb: Unbounded, agg: Aggregate{Distinct: []int{-1, 0}}, want: 1},
		// {0,1} → {2,3} in a database of that one unit: 2 → 2 distinct,
		// but next to a unit {2,3}: {0,1,2,3} (4) → {2,3} (2).
		{name: "bounded distinct k 2", space: sp(4, 2, 2), nb: Bounded, agg: Aggregate{Distinct: []int{0, 1, 2, 3}}, want: 2},
		// Groups {0,1} and {2,3}: {0,1} → {2,3} moves two values: (2,0) → (0,2).
		{name: "bounded grouped distinct k 2", space: sp(4, 1, 2), nb: Bounded, agg: Aggregate{Distinct: []int{0, 1, 2, 3}, GroupOf: []int{0, 0, 1, 1}, Groups: 2}, want: 4},
		// A unit counts once however many rows it has.
		{name: "unbounded units k 3", space: sp(2, 2, 3), nb: Unbounded, agg: Aggregate{Units: true}, want: 1},
		// {0} → {1} with WHERE v = 1: the unit starts to count.
		{name: "bounded units", space: sp(2, 2, 2), nb: Bounded, agg: Aggregate{Units: true, Where: []bool{false, true}}, want: 1},
		// One group per value: {0,1} → {2,3} leaves two groups, joins two.
		{name: "bounded grouped units k 2", space: sp(4, 1, 2), nb: Bounded, agg: Aggregate{Units: true, GroupOf: []int{0, 1, 2, 3}, Groups: 4}, want: 4},
		{name: "unbounded grouped units k 2", space: sp(4, 2, 2), nb: Unbounded, agg: Aggregate{Units: true, GroupOf: []int{0, 1, 2, 3}, Groups: 4}, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := MaxL1(tt.space, tt.nb, tt.agg.Query())
			if err != nil {
				t.Fatal(err)
			}
			if w.L1 != tt.want {
				t.Fatalf("MaxL1 = %d (witness %v – %v), want %d", w.L1, w.D1, w.D2, tt.want)
			}
			if w.L1 > 0 {
				q := tt.agg.Query()
				if got := l1(q(w.D1), q(w.D2)); got != w.L1 {
					t.Errorf("witness %v – %v has distance %d, reported %d", w.D1, w.D2, got, w.L1)
				}
			}
		})
	}
}

// TestDistinctQuery evaluates distinct counts on one database by hand:
// units {0,1}, {0}, {2} with x = v for v < 2 and NULL for 2, groups
// {0} and {1, 2}.
func TestDistinctQuery(t *testing.T) {
	d := Database{{0, 1}, {0}, {2}}
	groups := []int{0, 1, 1}
	for _, tt := range []struct {
		name string
		agg  Aggregate
		want []int64
	}{
		{"distinct x", Aggregate{Distinct: []int{0, 1, -1}}, []int64{2}},
		{"grouped distinct x", Aggregate{Distinct: []int{0, 1, -1}, GroupOf: groups, Groups: 2}, []int64{1, 1}},
		// Two units hold the same rows {0}: still two people.
		{"units", Aggregate{Units: true}, []int64{3}},
		{"grouped units", Aggregate{Units: true, GroupOf: groups, Groups: 2}, []int64{2, 2}},
		{"units where v > 0", Aggregate{Units: true, Where: []bool{false, true, true}}, []int64{2}},
	} {
		if got := tt.agg.Query()(d); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A relation that yields nothing in the space has sensitivity 0, and a
// relation may be asymmetric: the oracle takes the pairs it yields.
func TestCustomNeighbours(t *testing.T) {
	s := sp(3, 1, 1)
	hist := Aggregate{GroupOf: []int{0, 1, 2}, Groups: 3}.Query()
	self := func(_ *Universe, d Database) iter.Seq[Database] {
		return func(yield func(Database) bool) { yield(d) }
	}
	w, err := MaxL1(s, self, hist)
	if err != nil || w.L1 != 0 || w.D1 != nil {
		t.Fatalf("self relation: %+v, %v; want L1 0 and no witness", w, err)
	}
	// Only 0 → 1: histogram distance 2, and exactly one pair.
	shift := func(_ *Universe, d Database) iter.Seq[Database] {
		return func(yield func(Database) bool) {
			if len(d) == 1 && d[0][0] == 0 {
				yield(Database{{1}})
			}
		}
	}
	u, err := NewUniverse(s)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPairs(u, shift)
	if p.Len() != 1 || p.MaxL1(hist).L1 != 2 {
		t.Fatalf("shift relation: %d pairs, L1 %d; want 1, 2", p.Len(), p.MaxL1(hist).L1)
	}
}

func TestL1PadsWithZeros(t *testing.T) {
	if got := l1([]int64{1, -2}, []int64{4}); got != 3+2 {
		t.Fatalf("l1 = %d, want 5", got)
	}
}

func sp(domain, units, k int) Space {
	return Space{Domain: domain, MaxUnits: units, RowsPerUnit: k}
}

func countValue(d Database, v int) int {
	n := 0
	for _, r := range d.Rows() {
		if r == v {
			n++
		}
	}
	return n
}

func reversed(d Database) Database {
	r := make(Database, len(d))
	for i, un := range d {
		u := slices.Clone(un)
		slices.Reverse(u)
		r[len(d)-1-i] = u
	}
	return r
}
