package sensitivity

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/constraints"
	"github.com/ddp-proxy/ddp-proxy/sensitivity/oracle"
)

// bfDomain is a tuple domain of ≤ 8 values over 1–3 columns c0, c1, c2;
// value v is the mixed-radix index of its tuple (c0 most significant).
type bfDomain []int

func (d bfDomain) size() int {
	n := 1
	for _, s := range d {
		n *= s
	}
	return n
}

func (d bfDomain) tuple(v int) []int {
	t := make([]int, len(d))
	for i := len(d) - 1; i >= 0; i-- {
		t[i] = v % d[i]
		v /= d[i]
	}
	return t
}

func colName(i int) string { return fmt.Sprintf("c%d", i) }

// bfQuery is a random aggregate over d written value by value for the
// oracle, with the column sets the planner would report.
type bfQuery struct {
	agg          oracle.Aggregate
	kind         Kind
	where, group []string
	value        string
	lo, hi       int64
	scale        int64 // summed value = scale · (column index value) + offset
}

// domainRange is q's aggregate with Lo and Hi narrowed to the smallest
// and largest clamped value a row can hold (the clamped domain).
func (q bfQuery) domainRange() Aggregate {
	a := Aggregate{Kind: q.kind, Lo: q.lo, Hi: q.hi}
	if q.agg.Value == nil {
		return a
	}
	a.Lo, a.Hi = q.hi, q.lo
	for _, v := range q.agg.Value {
		c := min(max(v, q.lo), q.hi)
		a.Lo, a.Hi = min(a.Lo, c), max(a.Hi, c)
	}
	return a
}

func randomBFQuery(r *rand.Rand, d bfDomain) bfQuery {
	n := d.size()
	var q bfQuery
	whereCols := map[int][]bool{}
	for c := range d {
		if r.IntN(3) == 0 {
			a := make([]bool, d[c])
			for v := range a {
				a[v] = r.IntN(2) == 0
			}
			whereCols[c] = a
			q.where = append(q.where, colName(c))
		}
	}
	groupCols := []int{}
	for c := range d {
		if r.IntN(3) == 0 {
			groupCols = append(groupCols, c)
			q.group = append(q.group, colName(c))
		}
	}
	where := make([]bool, n)
	groupOf := make([]int, n)
	groups := 1
	for _, c := range groupCols {
		groups *= d[c]
	}
	for v := range n {
		t := d.tuple(v)
		where[v] = true
		for c, a := range whereCols {
			where[v] = where[v] && a[t[c]]
		}
		g := 0
		for _, c := range groupCols {
			g = g*d[c] + t[c]
		}
		groupOf[v] = g
	}
	q.agg = oracle.Aggregate{Where: where}
	if len(groupCols) > 0 {
		q.agg.GroupOf, q.agg.Groups = groupOf, groups
	}
	if r.IntN(2) == 0 {
		q.kind = KindCount
		if len(groupCols) > 0 {
			q.kind = KindHistogram
		}
		return q
	}
	c := r.IntN(len(d))
	q.value = colName(c)
	q.scale = int64(1 + r.IntN(3))
	off := int64(r.IntN(5)) - 2
	q.lo, q.hi = int64(r.IntN(4))-3, int64(r.IntN(6))
	vals := make([]int64, n)
	for v := range n {
		vals[v] = q.scale*int64(d.tuple(v)[c]) + off
	}
	q.agg.Value, q.agg.Lo, q.agg.Hi = vals, q.lo, q.hi
	q.kind = KindSum
	if len(groupCols) > 0 {
		q.kind = KindGroupedSum
	}
	return q
}

// randomGraph returns a secret graph over d, its sensitivity.Secrets
// description (for a value scale), and its edge function written from the
// definitions.
func randomGraph(r *rand.Rand, d bfDomain, scale int64, valueCol string) (Secrets, *constraints.Secrets, func(x, y int) bool) {
	switch r.IntN(4) {
	case 0:
		return Secrets{Kind: SecretsFull}, &constraints.Secrets{Kind: constraints.SecretsFull, Column: -1}, func(x, y int) bool { return true }
	case 1:
		return Secrets{Kind: SecretsAttribute}, &constraints.Secrets{Kind: constraints.SecretsAttribute, Column: -1}, func(x, y int) bool {
			tx, ty := d.tuple(x), d.tuple(y)
			diff := 0
			for i := range tx {
				if tx[i] != ty[i] {
					diff++
				}
			}
			return diff == 1
		}
	case 2:
		c := r.IntN(len(d))
		if r.IntN(2) == 0 {
			// Bucketed partition of column c: contiguous buckets of index
			// values; the summed value moves by at most scale × the widest
			// bucket's index span when c is the summed column.
			bucket := make([]int, d[c])
			widest, start := 0, 0
			for v := 1; v < d[c]; v++ {
				if r.IntN(2) == 0 {
					bucket[v] = bucket[v-1] + 1
					start = v
				} else {
					bucket[v] = bucket[v-1]
				}
				widest = max(widest, v-start)
			}
			var step int64
			if colName(c) == valueCol {
				step = scale * int64(widest)
			}
			return Secrets{Kind: SecretsPartition, Column: colName(c), Step: step},
				&constraints.Secrets{Kind: constraints.SecretsPartition, Column: c, Bucket: bucket},
				func(x, y int) bool { return bucket[d.tuple(x)[c]] == bucket[d.tuple(y)[c]] }
		}
		return Secrets{Kind: SecretsPartition, Partition: []string{colName(c)}},
			&constraints.Secrets{Kind: constraints.SecretsPartition, Columns: []int{c}, Column: -1},
			func(x, y int) bool { return d.tuple(x)[c] == d.tuple(y)[c] }
	default:
		c := r.IntN(len(d))
		theta := int64(1 + r.IntN(2)) // in index units
		var step int64
		if colName(c) == valueCol {
			step = theta * scale // the summed value moves by scale per index
		}
		return Secrets{Kind: SecretsDistance, Column: colName(c), Step: step},
			&constraints.Secrets{Kind: constraints.SecretsDistance, Column: c, Theta: float64(theta)},
			func(x, y int) bool {
				tx, ty := d.tuple(x), d.tuple(y)
				for i := range tx {
					if i != c && tx[i] != ty[i] {
						return false
					}
				}
				diff := int64(tx[c] - ty[c])
				return max(diff, -diff) <= theta
			}
	}
}

func randomBFDomain(r *rand.Rand) bfDomain {
	shapes := []bfDomain{{4}, {6}, {8}, {2, 2}, {2, 3}, {2, 4}, {4, 2}, {2, 2, 2}}
	return shapes[r.IntN(len(shapes))]
}

// TestBlowfishNoConstraintsAgainstOracle: without constraints, maxT = 1
// and PerChange with G's reach is ≥ the oracle for random secret graphs
// and random counts, histograms, sums and grouped sums.
func TestBlowfishNoConstraintsAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 4))
	zeros, tight := 0, 0
	for trial := range 400 {
		d := randomBFDomain(r)
		q := randomBFQuery(r, d)
		g, _, edge := randomGraph(r, d, q.scale, q.value)
		per, err := PerChange(Aggregate{Kind: q.kind, Lo: q.lo, Hi: q.hi}, g.Reach(q.where, q.group, q.value))
		if err != nil {
			t.Fatal(err)
		}
		w, err := oracle.BlowfishMaxL1(oracle.BlowfishPolicy{Domain: d.size(), N: 2, Edge: edge}, q.agg.Query())
		if err != nil {
			t.Fatal(err)
		}
		if w.L1 > per {
			t.Fatalf("trial %d %v %+v %v where %v group %v value %q [%d,%d]: oracle %d > %d; witness %v → %v",
				trial, d, g, q.kind, q.where, q.group, q.value, q.lo, q.hi, w.L1, per, w.D1, w.D2)
		}
		// The clamped domain with no NULL (the oracle's rows) holds too.
		nn := g.Reach(q.where, q.group, q.value)
		nn.NonNull = true
		narrow, err := PerChange(q.domainRange(), nn)
		if err != nil {
			t.Fatal(err)
		}
		if w.L1 > narrow || narrow > per {
			t.Fatalf("trial %d %v %+v %v where %v group %v value %q [%d,%d]: oracle %d, narrowed %d, bounds %d",
				trial, d, g, q.kind, q.where, q.group, q.value, q.lo, q.hi, w.L1, narrow, per)
		}
		if per == 0 {
			zeros++
		}
		if w.L1 == per {
			tight++
		}
	}
	t.Logf("%d zero-sensitivity queries, %d tight", zeros, tight)
	if zeros < 20 {
		t.Errorf("only %d zero-sensitivity cases", zeros)
	}
}

// TestBlowfishConstraintsAgainstOracle: with random disjoint published
// counts, maxT · c(q) bounds every random query under the literal reading
// (c from an arbitrary change) and under secrets-only (c from G's edges).
func TestBlowfishConstraintsAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 5))
	checked := 0
	for trial := range 300 {
		d := randomBFDomain(r)
		q := randomBFQuery(r, d)
		g, cg, edge := randomGraph(r, d, q.scale, q.value)
		s, preds := randomPublished(r, d)
		agg := Aggregate{Kind: q.kind, Lo: q.lo, Hi: q.hi}
		for _, secretsOnly := range []bool{false, true} {
			b, err := constraints.BlowfishBound(s, cg, secretsOnly)
			if errors.Is(err, constraints.ErrUnbounded) {
				continue
			} else if err != nil {
				t.Fatal(err)
			}
			// b.SecretsOnly: every change between neighbours is an edge of
			// G (the opt-in reading, or no edge changes a published
			// count under either reading).
			reach := AnyChange(q.where, q.group, q.value)
			if b.SecretsOnly {
				reach = g.Reach(q.where, q.group, q.value)
			}
			w, err := oracle.BlowfishMaxL1(oracle.BlowfishPolicy{Domain: d.size(), N: 3, Edge: edge, Counts: preds, SecretsOnly: secretsOnly}, q.agg.Query())
			if err != nil {
				t.Fatal(err)
			}
			// Both the clamping bounds and the clamped domain (the values
			// the oracle's rows can hold; none is NULL) must hold.
			narrow, nonNull := q.domainRange(), reach
			nonNull.NonNull = true
			for _, c := range []struct {
				agg   Aggregate
				reach Reach
			}{{agg, reach}, {narrow, nonNull}} {
				per, err := PerChange(c.agg, c.reach)
				if err != nil {
					t.Fatal(err)
				}
				bound, err := Blowfish(b.MaxT, per)
				if err != nil {
					t.Fatal(err)
				}
				checked++
				if w.L1 > bound {
					t.Fatalf("trial %d %v %+v secretsOnly=%v %v where %v group %v value %q [%d,%d] (%+v %+v): oracle %d > maxT %d × %d; witness %v → %v",
						trial, d, g, secretsOnly, q.kind, q.where, q.group, q.value, q.lo, q.hi, c.agg, c.reach, w.L1, b.MaxT, per, w.D1, w.D2)
				}
			}
		}
	}
	if checked < 400 {
		t.Errorf("only %d cases checked", checked)
	}
}

// TestInducedAggregatesAgainstOracle: Induced(bounds, agg) is ≥ the
// induced-neighbour oracle for random counts, sums and grouped sums.
func TestInducedAggregatesAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 6))
	for trial := range 150 {
		d := randomBFDomain(r)
		q := randomBFQuery(r, d)
		s, preds := randomInducedPublished(r, d)
		checkInducedAgainstOracle(t, trial, d, q, s, preds)
	}
}

// TestBlowfishHandValues pins values derived by hand in DESIGN.md.
func TestBlowfishHandValues(t *testing.T) {
	cases := []struct {
		name string
		g    Secrets
		agg  Aggregate
		w, r []string
		v    string
		want int64
	}{
		{"SUM(salary) under distance θ uses θ", Secrets{Kind: SecretsDistance, Column: "salary", Step: 7}, Aggregate{Kind: KindSum, Lo: 0, Hi: 1000}, nil, nil, "salary", 7},
		{"θ beyond the bounds is capped", Secrets{Kind: SecretsDistance, Column: "salary", Step: 7000}, Aggregate{Kind: KindSum, Lo: 0, Hi: 1000}, nil, nil, "salary", 1000},
		{"filter on the distance column: in/out", Secrets{Kind: SecretsDistance, Column: "salary", Step: 7}, Aggregate{Kind: KindSum, Lo: 0, Hi: 1000}, []string{"salary"}, nil, "salary", 1000},
		{"histogram grouped by the partition column", Secrets{Kind: SecretsPartition, Partition: []string{"city"}}, Aggregate{Kind: KindHistogram}, []string{"city"}, []string{"city"}, "", 0},
		{"count not touching the distance column", Secrets{Kind: SecretsDistance, Column: "salary", Step: 1}, Aggregate{Kind: KindCount}, []string{"age"}, nil, "", 0},
		{"COUNT(*) (n is public)", Secrets{Kind: SecretsFull}, Aggregate{Kind: KindCount}, nil, nil, "", 0},
		{"histogram under full", Secrets{Kind: SecretsFull}, Aggregate{Kind: KindHistogram}, nil, []string{"age"}, "", 2},
		{"histogram by city, filtered on age, partition by city", Secrets{Kind: SecretsPartition, Partition: []string{"city"}}, Aggregate{Kind: KindHistogram}, []string{"age"}, []string{"city"}, "", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := PerChange(c.agg, c.g.Reach(c.w, c.r, c.v))
			if err != nil || got != c.want {
				t.Fatalf("got %d, %v; want %d", got, err, c.want)
			}
		})
	}
}

// randomPublished draws published counts over d for the Blowfish
// property tests: a marginal or one or two region counts on one column,
// sometimes a second marginal (overlapping counts); with the oracle's
// predicates.
func randomPublished(r *rand.Rand, d bfDomain) (*constraints.System, []func(int) bool) {
	s := &constraints.System{}
	for i, n := range d {
		vals := make([]float64, n)
		for v := range vals {
			vals[v] = float64(v)
		}
		s.Columns = append(s.Columns, constraints.Column{Name: colName(i), Size: n, Values: vals})
	}
	c := r.IntN(len(d))
	if r.IntN(2) == 0 {
		s.Constraints = []constraints.Constraint{{Name: "marginal", Kind: constraints.KindMarginal, Columns: []int{c}}}
	} else {
		for reg := range 1 + r.IntN(2) {
			a := make([]bool, d[c])
			for v := range a {
				a[v] = r.IntN(3) == reg
			}
			p := constraints.Predicate{Allowed: make([][]bool, len(d))}
			p.Allowed[c] = a
			s.Constraints = append(s.Constraints, constraints.Constraint{Name: fmt.Sprint("count ", reg), Kind: constraints.KindCount, Count: p})
		}
	}
	if len(d) > 1 && r.IntN(3) == 0 {
		c2 := (c + 1) % len(d)
		s.Constraints = append(s.Constraints, constraints.Constraint{Name: "marginal 2", Kind: constraints.KindMarginal, Columns: []int{c2}})
	}
	var preds []func(int) bool
	for _, ct := range s.Constraints {
		if ct.Kind == constraints.KindMarginal {
			mc := ct.Columns[0]
			for v := range d[mc] {
				preds = append(preds, func(x int) bool { return d.tuple(x)[mc] == v })
			}
			continue
		}
		preds = append(preds, func(x int) bool { return ct.Count.Allowed[c][d.tuple(x)[c]] })
	}
	return s, preds
}

// randomInducedPublished draws the published counts of the induced
// property tests: the total, a marginal or one count on one column; with
// the oracle's predicates.
func randomInducedPublished(r *rand.Rand, d bfDomain) (*constraints.System, []func(int) bool) {
	s := &constraints.System{}
	for i, n := range d {
		s.Columns = append(s.Columns, constraints.Column{Name: colName(i), Size: n})
	}
	var preds []func(int) bool
	switch c := r.IntN(len(d)); r.IntN(3) {
	case 0:
		s.Constraints = []constraints.Constraint{{Name: "total", Kind: constraints.KindTotal}}
		preds = []func(int) bool{func(int) bool { return true }}
	case 1:
		s.Constraints = []constraints.Constraint{{Name: "marginal", Kind: constraints.KindMarginal, Columns: []int{c}}}
		for v := range d[c] {
			preds = append(preds, func(x int) bool { return d.tuple(x)[c] == v })
		}
	default:
		a := make([]bool, d[c])
		for v := range a {
			a[v] = r.IntN(2) == 0
		}
		p := constraints.Predicate{Allowed: make([][]bool, len(d))}
		p.Allowed[c] = a
		s.Constraints = []constraints.Constraint{{Name: "count", Kind: constraints.KindCount, Count: p}}
		preds = []func(int) bool{func(x int) bool { return a[d.tuple(x)[c]] }}
	}
	return s, preds
}

// checkInducedAgainstOracle fails t when Induced's bound for q under the
// published counts s is below the induced-neighbour oracle (predicates
// preds, up to four units of one row).
func checkInducedAgainstOracle(t *testing.T, trial int, d bfDomain, q bfQuery, s *constraints.System, preds []func(int) bool) {
	t.Helper()
	ib, err := constraints.InducedBound(s)
	if err != nil {
		t.Fatal(err)
	}
	bound, err := Induced(InducedBounds{MaxL1: ib.MaxL1, MaxHalf: ib.MaxHalf}, Aggregate{Kind: q.kind, Lo: q.lo, Hi: q.hi})
	if err != nil {
		t.Fatal(err)
	}
	w, err := oracle.MaxL1(oracle.Space{Domain: d.size(), MaxUnits: 4, RowsPerUnit: 1}, oracle.Induced(preds), q.agg.Query())
	if err != nil {
		t.Fatal(err)
	}
	if w.L1 > bound {
		t.Fatalf("trial %d %v %s %v [%d,%d]: oracle %d > %d; witness %v → %v", trial, d, s.Constraints[0].Name, q.kind, q.lo, q.hi, w.L1, bound, w.D1, w.D2)
	}
}
