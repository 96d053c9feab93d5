package aggregate

import "github.com/ddp-proxy/ddp-proxy/ir"

// Sum is SUM(x): one noisy sum of x clamped to its bounds, of x's type.
var Sum = &Unit{
	Name: "sum",
	Spellings: map[Dialect][]string{
		PostgreSQL: {"sum"},
		MySQL:      {"sum"},
	},
	Numeric: true,
	Parts:   func(a Arg) []Part { return []Part{SumPart(a)} },
	Type:    func(t string) string { return t },
	Double:  func(t string) bool { return t == typeReal },
	Value: func(c Context, p []Noisy) ir.Value {
		if c.Arg.Type == typeInteger {
			return ir.Int(p[0].Units)
		}
		return ir.Float(p[0].Value())
	},
	Summarize: onePart,
}
