package aggregate

import (
	"math"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// Avg is AVG(x): noisy sum / noisy count of x, clamped to x's bounds
// (post-processing); NULL when the noisy count is not positive.
var Avg = &Unit{
	Name: "avg",
	Spellings: map[Dialect][]string{
		PostgreSQL: {"avg"},
		MySQL:      {"avg"},
	},
	Numeric: true,
	Parts:   func(a Arg) []Part { return []Part{SumPart(a), CountPart(a)} },
	Type:    func(string) string { return typeReal },
	// An average of integers is numeric (exact) in PostgreSQL and
	// DECIMAL in MySQL; of reals, a double.
	Double: func(t string) bool { return t == typeReal },
	Value: func(c Context, p []Noisy) ir.Value {
		n := p[1].Units
		if n <= 0 {
			return ir.Null()
		}
		avg := p[0].Value() / float64(n)
		return ir.Float(min(max(avg, c.Arg.Lo), c.Arg.Hi))
	},
	Summarize: func(p []PartNoise) Summary {
		return Summary{
			Sensitivity: p[0].Sensitivity,
			Mechanism:   "ratio of noisy sum and noisy count, clamped to bounds",
			Scale:       p[0].Scale,
			Epsilon:     p[0].Epsilon + p[1].Epsilon,
			CI95:        math.NaN(),
		}
	},
	Notice: "noisy sum / noisy count, clamped to the column bounds",
}
