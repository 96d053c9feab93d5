package policies

import (
	"fmt"
	"slices"

	"github.com/ddp-proxy/ddp-proxy/constraints"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// Analysis is what a blowfish or induced dataset's secrets and constraints
// mean for sensitivity, computed once at load (never per query).
type Analysis struct {
	// Induced is set for model: induced.
	Induced *constraints.Induced
	// Blowfish is set for model: blowfish (MaxT 1 without constraints).
	Blowfish *constraints.Blowfish
	// Published lists the column sets whose full marginal is published
	// exactly (total: the empty set). A count or histogram without WHERE
	// whose grouping columns are a subset of one of them is determined by
	// published data: it has sensitivity 0 under every neighbour relation
	// that keeps the constraints.
	Published [][]string
	// Constraints are the declared constraints in the policy's words.
	Constraints []string

	// domains are the resolved domains of the table's columns; counts are
	// the published count constraints as per-column value sets.
	domains  map[string][]ir.Value
	counts   []map[string][]ir.Value
	sys      *constraints.System
	colIndex map[string]int
}

// analyze builds the constraint system of d's private table t and runs the
// load-time analysis for d's model.
func analyze(d *Dataset, t *Table) (*Analysis, error) {
	an := &Analysis{domains: map[string][]ir.Value{}}
	for _, cn := range t.ColumnNames {
		if col := t.Columns[cn]; col.Domain != nil && len(col.Domain.Resolved) > 0 {
			an.domains[cn] = col.Domain.Resolved
		}
	}
	s := &constraints.System{}
	colIndex := map[string]int{}
	addCol := func(name string) int {
		if i, ok := colIndex[name]; ok {
			return i
		}
		col := t.Column(name)
		c := constraints.Column{Name: name, Size: len(col.Domain.Resolved)}
		if col.Type == TypeInteger || col.Type == TypeReal {
			for _, v := range col.Domain.Resolved {
				f, _ := v.AsFloat()
				c.Values = append(c.Values, f)
			}
		}
		colIndex[name] = len(s.Columns)
		s.Columns = append(s.Columns, c)
		return colIndex[name]
	}
	for _, ct := range d.Constraints {
		an.Constraints = append(an.Constraints, ct.String())
		sc := constraints.Constraint{Name: ct.String(), Kind: ct.Kind}
		switch ct.Kind {
		case ConstraintTotal:
			an.Published = append(an.Published, nil)
		case ConstraintMarginal:
			an.Published = append(an.Published, ct.Columns)
			for _, cn := range ct.Columns {
				sc.Columns = append(sc.Columns, addCol(cn))
			}
		case ConstraintRowsAndColumns:
			for _, cn := range ct.Columns {
				an.Published = append(an.Published, []string{cn})
				sc.Columns = append(sc.Columns, addCol(cn))
			}
		case ConstraintCount:
			// Allowed is filled once every column is known (below).
		}
		s.Constraints = append(s.Constraints, sc)
	}
	for _, ct := range d.Constraints {
		for _, cond := range ct.Count {
			addCol(cond.Column)
		}
	}
	for i, ct := range d.Constraints {
		if ct.Kind != ConstraintCount {
			continue
		}
		p := constraints.Predicate{Allowed: make([][]bool, len(s.Columns))}
		published := map[string][]ir.Value{}
		for _, cond := range ct.Count {
			col := t.Column(cond.Column)
			a := allowed(col, cond)
			p.Allowed[colIndex[cond.Column]] = a
			for j, ok := range a {
				if ok {
					published[cond.Column] = append(published[cond.Column], col.Domain.Resolved[j])
				}
			}
		}
		s.Constraints[i].Count = p
		an.counts = append(an.counts, published)
	}
	for _, cn := range t.ColumnNames {
		if _, ok := colIndex[cn]; !ok && cn != t.Unit {
			s.OtherColumns = true
		}
	}
	an.sys, an.colIndex = s, colIndex
	switch d.Model {
	case ModelInduced:
		r, err := constraints.InducedBound(s)
		if err != nil {
			return nil, err
		}
		an.Induced = &r
	case ModelBlowfish:
		g := secretsFor(d.Secrets, t, s, colIndex)
		r, err := constraints.BlowfishBound(s, g, d.Compensation == CompensationSecretsOnly)
		if err != nil {
			return nil, err
		}
		an.Blowfish = &r
	}
	return an, nil
}

// allowed evaluates one count condition on every value of col's domain.
func allowed(col *Column, cond Condition) []bool {
	out := make([]bool, len(col.Domain.Resolved))
	for i, v := range col.Domain.Resolved {
		if cond.Range != nil {
			f, _ := v.AsFloat()
			out[i] = cond.Range[0] <= f && f <= cond.Range[1]
			continue
		}
		for _, raw := range cond.Values {
			if w, why := convertValue(raw, col.Type); why == "" && w.Equal(v) {
				out[i] = true
			}
		}
	}
	return out
}

// secretsFor restricts the policy's secret graph to the constrained
// columns (a change of a column outside them is invisible to every count).
func secretsFor(sec *Secrets, t *Table, s *constraints.System, colIndex map[string]int) *constraints.Secrets {
	g := &constraints.Secrets{Kind: sec.Kind, Column: -1, Theta: sec.Theta}
	switch sec.Kind {
	case SecretsPartition:
		for _, cn := range sec.Columns {
			if i, ok := colIndex[cn]; ok {
				g.Columns = append(g.Columns, i)
			}
		}
		if sec.Column != "" {
			g.Bucket = []int{}
			if i, ok := colIndex[sec.Column]; ok {
				g.Column = i
				g.Bucket = BucketsOf(sec, t.Column(sec.Column))
			}
		}
	case SecretsDistance:
		if i, ok := colIndex[sec.Column]; ok {
			g.Column = i
		}
	}
	return g
}

// BucketsOf returns the bucket of every value of col's resolved domain
// under a bucketed partition (values in no bucket get a cell of their own:
// nothing protects them, which is what the DBA declared).
func BucketsOf(sec *Secrets, col *Column) []int {
	out := make([]int, len(col.Domain.Resolved))
	for i, v := range col.Domain.Resolved {
		out[i] = len(sec.Buckets) + i // own cell
		for b, bucket := range sec.Buckets {
			if inBucket(bucket, v, col.Type) {
				out[i] = b
				break
			}
		}
	}
	return out
}

func inBucket(bucket []any, v ir.Value, typ string) bool {
	if typ == TypeInteger || typ == TypeReal {
		lo, ok1 := asFloat(bucket, 0)
		hi, ok2 := asFloat(bucket, 1)
		f, _ := v.AsFloat()
		return ok1 && ok2 && lo <= f && f <= hi
	}
	for _, raw := range bucket {
		if w, why := convertValue(raw, typ); why == "" && w.Equal(v) {
			return true
		}
	}
	return false
}

// PublishedCovers reports whether a count or histogram without WHERE,
// grouped by cols, is determined by the published constraints.
func (an *Analysis) PublishedCovers(cols []string) bool {
	return an.PublishedQuery(cols, nil)
}

// PublishedQuery reports whether COUNT(*) grouped by group with the WHERE
// clause "every column of where takes one of its listed values" (a
// conjunction of = and IN, false on NULL) is determined by the published
// constraints, so that every neighbour (induced or blowfish) gives the same
// answer:
//   - group and the WHERE columns are exactly one published marginal's
//     columns and every listed value is in its column's declared domain:
//     each output cell is one published cell or a sum of them;
//   - or there is no GROUP BY and the WHERE selects exactly the tuples of
//     a published count.
func (an *Analysis) PublishedQuery(group []string, where map[string][]ir.Value) bool {
	for c, vs := range where {
		for _, v := range vs {
			if !containsValue(an.domains[c], v) {
				return false
			}
		}
	}
	// The GROUP BY and WHERE columns must be exactly the marginal's
	// columns: summing published cells over a free marginal column would
	// miss the rows whose value there is NULL (in no published cell), and
	// those rows are not public.
	used := slices.Clone(group)
	for c := range where {
		if !slices.Contains(used, c) {
			used = append(used, c)
		}
	}
	for _, p := range an.Published {
		ok := len(used) == len(p)
		for _, c := range used {
			ok = ok && slices.Contains(p, c)
		}
		if ok {
			return true
		}
	}
	if len(group) > 0 || len(where) == 0 {
		return false
	}
	for _, cnt := range an.counts {
		if sameSelection(an.domains, cnt, where) {
			return true
		}
	}
	return false
}

// sameSelection reports whether two conjunctions of per-column value sets
// restrict the same columns to the same values of their declared domains.
func sameSelection(domains map[string][]ir.Value, a, b map[string][]ir.Value) bool {
	if len(a) != len(b) {
		return false
	}
	covers := func(x, y map[string][]ir.Value) bool {
		for c, vs := range x {
			ws, ok := y[c]
			if !ok {
				return false // NULLs: an absent column also admits them
			}
			for _, d := range domains[c] {
				if containsValue(vs, d) != containsValue(ws, d) {
					return false
				}
			}
		}
		return true
	}
	return covers(a, b) && covers(b, a)
}

// containsValue compares numbers by value (3 = 3.0) and everything else
// exactly.
func containsValue(vs []ir.Value, v ir.Value) bool {
	for _, w := range vs {
		if v.IsNumber() && w.IsNumber() {
			x, _ := v.AsFloat()
			y, _ := w.AsFloat()
			if x == y {
				return true
			}
			continue
		}
		if v == w {
			return true
		}
	}
	return false
}

// String summarises the analysis for check output.
func (an *Analysis) String() string {
	switch {
	case an.Induced != nil:
		return fmt.Sprintf("induced neighbours: largest Graver L1 %d (%s)", an.Induced.MaxL1, an.Induced.Method)
	case an.Blowfish != nil:
		return fmt.Sprintf("blowfish: maxT %d (%s)", an.Blowfish.MaxT, an.Blowfish.Method)
	}
	return "no analysis"
}

// InducedCount is the induced sensitivity of COUNT(*) with the WHERE clause
// "every column of where takes one of its listed values" (= / IN), from
// the Graver basis kept at load (constraints.Induced.CountBound). ok is
// false when no refinement applies (then MaxHalf holds): another model, a
// closed form without a basis, or a listed value outside a declared
// domain.
func (an *Analysis) InducedCount(where map[string][]ir.Value) (int64, bool) {
	if an.Induced == nil {
		return 0, false
	}
	allowed := map[int][]bool{}
	restrictsOther := false
	for c, vs := range where {
		dom, ok := an.domains[c]
		if !ok {
			restrictsOther = true // no declared domain: assume it splits atoms
			continue
		}
		a := make([]bool, len(dom))
		none := true
		for i, d := range dom {
			a[i] = containsValue(vs, d)
			none = none && !a[i]
		}
		for _, v := range vs {
			if !containsValue(dom, v) {
				return 0, false
			}
		}
		if none {
			return 0, true // selects no tuple of the declared domain
		}
		if i, ok := an.colIndex[c]; ok {
			allowed[i] = a
		} else {
			// Nothing verifies the domain of a column outside the
			// constraints: it may hold NULL or an undeclared value, which
			// fails even a list of its whole declared domain.
			restrictsOther = true
		}
	}
	return an.Induced.CountBound(func(t []int) bool {
		for i, a := range allowed {
			if !a[t[i]] {
				return false
			}
		}
		return true
	}, restrictsOther)
}

// ConstrainedColumns lists the columns the published constraints read (in
// the analysis' order). The analysis assumes every row holds a declared
// domain value in each of them; serve verifies it before answering.
func (an *Analysis) ConstrainedColumns() []string {
	out := make([]string, len(an.colIndex))
	for c, i := range an.colIndex {
		out[i] = c
	}
	return out
}
