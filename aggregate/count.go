package aggregate

import "github.com/ddp-proxy/ddp-proxy/ir"

// Count is COUNT(*) and COUNT(x): one noisy count of rows or of non-NULL
// values.
var Count = &Unit{
	Name: "count",
	Spellings: map[Dialect][]string{
		PostgreSQL: {"count"},
		MySQL:      {"count"},
	},
	Star:   true,
	Parts:  func(a Arg) []Part { return []Part{CountPart(a)} },
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
