package aggregate

import "github.com/ddp-proxy/ddp-proxy/ir"

// Count is COUNT(*), COUNT(x) and COUNT(DISTINCT x): one noisy count of
// rows, of non-NULL values or of distinct values (DistinctPart,
// count_distinct.go).
var Count = &Unit{
	Name: "count",
	Spellings: map[Dialect][]string{
		PostgreSQL: {"count"},
		MySQL:      {"count"},
	},
	Star:     true,
	Distinct: true,
	Parts: func(a Arg) []Part {
		if a.Distinct {
			return []Part{DistinctPart(a)}
		}
		return []Part{CountPart(a)}
	},
	Type:   func(string) string { return typeInteger },
	Double: func(string) bool { return false },
	Value: func(c Context, p []Noisy) ir.Value {
		v := p[0].Units
		if c.ClampCounts && v < 0 {
			v = 0
		}
		return ir.Int(v)
	},
	Summarize: onePart,
}
