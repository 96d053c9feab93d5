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

// SumRows describes what one row adds to a SUM (or a COUNT), for
// InducedSum and PassingRange. Amounts are in the aggregate's lattice
// units.
type SumRows struct {
	// Column is the summed column; "" is a count (a passing row adds 1).
	Column string
	// Lo and Hi are the clamping bounds: a row adds a value in [Lo, Hi],
	// or 0 when the column is NULL.
	Lo, Hi int64
	// Lattice gives the smallest and largest amount a row adds when
	// Column holds domain value v and the row passes the WHERE clause (the
	// clamped, quantized value); ok false means unknown (then [Lo, Hi]).
	Lattice func(v ir.Value) (lo, hi int64, ok bool)
	// Pass, when set, evaluates the WHERE clause exactly on a row whose
	// constrained columns hold the values get returns (ok false: the
	// clause reads something else). It is used when it answers for every
	// tuple; otherwise Where and Opaque describe the clause.
	Pass func(get func(col string) (ir.Value, bool)) (pass, ok bool)
	// Where is the WHERE clause as "every listed column takes one of its
	// values" (= / IN); nil is no WHERE clause.
	Where map[string][]ir.Value
	// Opaque: the WHERE clause (or an inner join) cannot be evaluated per
	// tuple, so any row may fail it.
	Opaque bool
	// Grouped: the L1 norm over the groups of a GROUP BY.
	Grouped bool
}

// filter is the WHERE clause per tuple of the constrained columns: whether
// every row of the tuple passes (always) or fails (never); neither means
// it depends on other columns.
func (an *Analysis) filter(q SumRows) func(t []int) (always, never bool) {
	if q.Pass != nil && an.passTuples() {
		var exact []bool
		complete := true
		if err := an.sys.Tuples(func(t []int) {
			pass, ok := q.Pass(an.getter(t))
			complete = complete && ok
			exact = append(exact, pass)
		}); err == nil && complete {
			return func(t []int) (bool, bool) {
				p := exact[an.tupleIndex(t)]
				return p, !p
			}
		}
	}
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
		if !allIn(d, vs) {
			// A value outside the declared domain may still match a row
			// under the backend's collation ('f' = 'F'): read the
			// condition as unknown, as InducedCount does.
			maybe = true
			continue
		}
		a := make([]bool, len(d))
		for j, v := range d {
			a[j] = containsValue(vs, v)
		}
		tests = append(tests, test{i, a})
	}
	return func(t []int) (bool, bool) {
		for _, x := range tests {
			if !x.allowed[t[x.idx]] {
				return false, true
			}
		}
		return !maybe, false
	}
}

// maxPassTuples caps the tuples a per-query exact WHERE evaluation visits
// (planning stays fast; above it the = / IN reading or the closed forms
// hold).
const maxPassTuples = 1 << 16

func (an *Analysis) passTuples() bool {
	n := 1
	for _, c := range an.sys.Columns {
		n *= max(c.Size, 1)
		if n > maxPassTuples {
			return false
		}
	}
	return true
}

// tupleIndex is t's position in the order System.Tuples enumerates.
func (an *Analysis) tupleIndex(t []int) int {
	i := 0
	for c, col := range an.sys.Columns {
		i = i*col.Size + t[c]
	}
	return i
}

func (an *Analysis) getter(t []int) func(col string) (ir.Value, bool) {
	return func(col string) (ir.Value, bool) {
		i, ok := an.colIndex[col]
		if !ok || i >= len(t) || t[i] >= len(an.domains[col]) {
			return ir.Value{}, false
		}
		return an.domains[col][t[i]], true
	}
}

// amounts returns what a passing row of tuple t adds: [lo, hi] and whether
// it may also be NULL (then it adds 0).
func (an *Analysis) amounts(q SumRows) func(t []int) (lo, hi int64, nullable bool) {
	if q.Column == "" {
		return func([]int) (int64, int64, bool) { return 1, 1, false }
	}
	valueIdx, constrained := an.colIndex[q.Column]
	dom := an.domains[q.Column]
	return func(t []int) (int64, int64, bool) {
		if constrained && valueIdx < len(t) && t[valueIdx] < len(dom) {
			if l, h, ok := q.Lattice(dom[t[valueIdx]]); ok && max(l, q.Lo) <= min(h, q.Hi) {
				return max(l, q.Lo), min(h, q.Hi), false
			}
		}
		return q.Lo, q.Hi, true
	}
}

// InducedSum is the induced sensitivity of the SUM (or COUNT) described by
// q, from the Graver basis kept at load (constraints.Induced.SumBound)
// and, per tuple of the constrained columns, the range of what one row
// adds: the clamped verified domain value when Column is constrained (else
// [Lo, Hi], and 0 for NULL), and 0 when the row fails the WHERE clause (a
// listed column outside the constraints may hold NULL or any value; an
// opaque clause may fail anywhere). ok is false when no basis was kept or
// another model is in force: the closed form holds then. exact is set when
// the bound is attained (ungrouped, given enough rows).
func (an *Analysis) InducedSum(q SumRows) (sens int64, exact, ok bool) {
	if an.Induced == nil || q.Lo > q.Hi {
		return 0, false, false
	}
	pass := an.filter(q)
	amount := an.amounts(q)
	return an.Induced.SumBound(func(t []int) (lo, hi int64) {
		always, never := pass(t)
		if never {
			return 0, 0
		}
		lo, hi, nullable := amount(t)
		if nullable || !always {
			lo, hi = min(lo, 0), max(hi, 0)
		}
		return lo, hi
	}, q.Grouped)
}

// PassingRange reads the WHERE clause exactly (q.Pass for every tuple, or
// no clause at all: Pass nil, Where empty, not Opaque) and returns the smallest and largest amount a passing
// row adds, whether some row can fail the clause (fails) and whether some
// row can pass it (passes). A row whose summed column is unconstrained
// adds [Lo, Hi] or 0 (NULL: reported as nullable). ok is false when the
// clause cannot be read exactly.
func (an *Analysis) PassingRange(q SumRows) (lo, hi int64, nullable, fails, passes, ok bool) {
	if (q.Pass == nil && (q.Opaque || len(q.Where) > 0)) || an.sys == nil || !an.passTuples() {
		return 0, 0, false, false, false, false
	}
	amount := an.amounts(q)
	complete := true
	if err := an.sys.Tuples(func(t []int) {
		p := true
		if q.Pass != nil {
			var ok bool
			p, ok = q.Pass(an.getter(t))
			complete = complete && ok
		}
		if !p {
			fails = true
			return
		}
		l, h, n := amount(t)
		if !passes {
			lo, hi = l, h
		}
		lo, hi, nullable, passes = min(lo, l), max(hi, h), nullable || n, true
	}); err != nil || !complete {
		return 0, 0, false, false, false, false
	}
	return lo, hi, nullable, fails, passes, true
}

func allIn(dom, vs []ir.Value) bool {
	for _, v := range vs {
		if !containsValue(dom, v) {
			return false
		}
	}
	return true
}
