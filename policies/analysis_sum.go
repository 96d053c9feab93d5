package policies

import (
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// VerifiedDomain returns col's declared domain when the load-time analysis
// models the table over it (a constrained column): serve and check
// --connect verify that every row holds one of these values, never NULL,
// before answering (the constraint bounds already rely on it), so a
// sensitivity bound may rely on it too. ok is false for every other
// column: nothing enforces their declared domains on the data.
func (an *Analysis) VerifiedDomain(col string) ([]ir.Value, bool) {
	if _, ok := an.colIndex[col]; !ok {
		return nil, false
	}
	dom, ok := an.domains[col]
	return dom, ok && len(dom) > 0
}

// SumRows describes what one row adds to a SUM, for InducedSum. Amounts are
// in the aggregate's lattice units.
type SumRows struct {
	// Column is the summed column.
	Column string
	// Lo and Hi are the clamping bounds: a row adds a value in [Lo, Hi],
	// or 0 when the column is NULL.
	Lo, Hi int64
	// Lattice gives the smallest and largest amount a row adds when
	// Column holds domain value v and the row passes the WHERE clause (the
	// clamped, quantized value); ok false means unknown (then [Lo, Hi]).
	Lattice func(v ir.Value) (lo, hi int64, ok bool)
	// Where is the WHERE clause as "every listed column takes one of its
	// values" (= / IN); nil is no WHERE clause.
	Where map[string][]ir.Value
	// Opaque: the WHERE clause (or an inner join) cannot be evaluated per
	// tuple, so any row may fail it.
	Opaque bool
	// Grouped: the L1 norm over the groups of a GROUP BY.
	Grouped bool
}

// InducedSum is the induced sensitivity of a SUM described by q, from the
// Graver basis kept at load (constraints.Induced.SumBound) and, per tuple
// of the constrained columns, the range of what one row adds: the clamped
// verified domain value when Column is constrained (else [Lo, Hi] and 0
// for NULL), and 0 too when the row may fail the WHERE clause (a listed
// column outside the constraints may hold NULL or any value; an opaque
// clause may fail anywhere). ok is false when no basis was kept or
// another model is in force: the closed form holds then. exact is set
// when the bound is attained (ungrouped sums, given enough rows).
func (an *Analysis) InducedSum(q SumRows) (sens int64, exact, ok bool) {
	if an.Induced == nil || q.Lo > q.Hi {
		return 0, false, false
	}
	valueIdx, constrained := an.colIndex[q.Column]
	dom := an.domains[q.Column]
	type test struct {
		idx     int
		allowed []bool
	}
	var tests []test
	maybe := q.Opaque
	for c, vs := range q.Where {
		i, ok := an.colIndex[c]
		if !ok {
			maybe = true // NULL or an unlisted value can fail it
			continue
		}
		d := an.domains[c]
		a := make([]bool, len(d))
		for j, v := range d {
			a[j] = containsValue(vs, v)
		}
		tests = append(tests, test{i, a})
	}
	rng := func(t []int) (lo, hi int64) {
		for _, x := range tests {
			if !x.allowed[t[x.idx]] {
				return 0, 0 // fails the WHERE clause: adds nothing
			}
		}
		lo, hi = q.Lo, q.Hi
		nullable := true
		if constrained && valueIdx < len(t) && t[valueIdx] < len(dom) {
			if l, h, ok := q.Lattice(dom[t[valueIdx]]); ok {
				lo, hi, nullable = max(l, q.Lo), min(h, q.Hi), false
			}
		}
		if nullable || maybe {
			lo, hi = min(lo, 0), max(hi, 0)
		}
		return lo, hi
	}
	return an.Induced.SumBound(rng, q.Grouped)
}
