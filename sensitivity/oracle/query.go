package oracle

// Aggregate is a GROUP BY aggregate over the domain, written out value by
// value so that tests can draw random ones: a predicate, a grouping and
// either a count or a clamped sum.
type Aggregate struct {
	// Where[v] says whether rows of value v pass the WHERE clause; nil
	// passes every row. A row of a value outside Where is rejected.
	Where []bool
	// GroupOf[v] is the group (0..Groups-1) of rows of value v; nil puts
	// every row in one group (no GROUP BY).
	GroupOf []int
	Groups  int
	// Value[v] is the summed column of rows of value v, clamped to [Lo,
	// Hi] before summing; nil makes the aggregate a count.
	Value  []int64
	Lo, Hi int64
	// Distinct, when set, makes the aggregate COUNT(DISTINCT x) per group:
	// Distinct[v] is x of rows of value v, a negative entry NULL (not
	// counted). Value is then ignored.
	Distinct []int
	// Units makes the aggregate COUNT(DISTINCT unit) per group: the
	// number of units with at least one row in the group that passes
	// Where. Value and Distinct are then ignored.
	Units bool
}

// Query returns a's answer vector: one entry per group.
func (a Aggregate) Query() Query {
	groups := max(a.Groups, 1)
	if a.GroupOf == nil {
		groups = 1
	}
	if a.Units || a.Distinct != nil {
		return a.distinct(groups)
	}
	return func(d Database) []int64 {
		out := make([]int64, groups)
		for _, un := range d {
			for _, r := range un {
				if a.Where != nil && (r >= len(a.Where) || !a.Where[r]) {
					continue
				}
				g := 0
				if a.GroupOf != nil {
					g = a.GroupOf[r]
				}
				if a.Value == nil {
					out[g]++
				} else {
					out[g] += min(max(a.Value[r], a.Lo), a.Hi)
				}
			}
		}
		return out
	}
}

// distinct is the query of a distinct count: per group, the number of
// distinct x (or of units) among the rows that pass Where.
func (a Aggregate) distinct(groups int) Query {
	return func(d Database) []int64 {
		out := make([]int64, groups)
		seen := make([]map[int]bool, groups)
		for i := range seen {
			seen[i] = map[int]bool{}
		}
		for u, un := range d {
			for _, r := range un {
				if a.Where != nil && (r >= len(a.Where) || !a.Where[r]) {
					continue
				}
				g := 0
				if a.GroupOf != nil {
					g = a.GroupOf[r]
				}
				x := u // the unit's position: distinct per unit
				if !a.Units {
					if x = a.Distinct[r]; x < 0 {
						continue
					}
				}
				if !seen[g][x] {
					seen[g][x] = true
					out[g]++
				}
			}
		}
		return out
	}
}
