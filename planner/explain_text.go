package planner

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/aggregate"
)

// The figures of the text form are written as the cost notices write
// them, so EXPLAIN and the answer's notice read alike: noise scales and
// interval half-widths to four digits without an exponent
// (aggregate.AppendNoise: ±2996000, not ±2.996e+06); sensitivities and
// rank errors, which are bounds, with every digit (a sensitivity of
// 1000000, not 1e+06; %g's six digits could write less than a rank
// error's bound).
func noiseFig(x float64) string { return string(aggregate.AppendNoise(nil, x)) }
func exactFig(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// WriteText writes the explanation for people: explain without --json,
// and EXPLAIN through the wire (one line per output row).
func (x Explanation) WriteText(w io.Writer) { x.writeText(w, "") }

func (x Explanation) writeText(w io.Writer, indent string) {
	if len(x.Statements) > 0 {
		for i, s := range x.Statements {
			fmt.Fprintf(w, "%sstatement %d:\n", indent, i+1)
			s.writeText(w, indent+"  ")
		}
		return
	}
	if x.Refused {
		fmt.Fprintf(w, "%srefused (SQLSTATE %s): %s\n", indent, x.SQLState, x.Reason)
		if x.Hint != "" {
			fmt.Fprintf(w, "%shint: %s\n", indent, x.Hint)
		}
		return
	}
	fmt.Fprintf(w, "%sclass: %s\n", indent, x.StatementClass)
	if x.Passthrough != nil {
		fmt.Fprintf(w, "%sforwarded: %s\n", indent, x.Passthrough.SQL)
	}
	if x.StatementClass == "private_aggregate" {
		fmt.Fprintf(w, "%sdataset: %s (model %s, %s neighbours)\n", indent, x.Dataset, x.Model, x.Neighbors)
		fmt.Fprintf(w, "%scost: ε = %g, δ = %g\n", indent, x.Epsilon, x.Delta)
		for _, c := range x.Columns {
			if c.PostProcessing != "" {
				fmt.Fprintf(w, "%s  %-20s = %s: %s\n", indent, c.Name, c.PostProcessing, c.Mechanism)
				continue
			}
			if c.Aggregate == "" {
				fmt.Fprintf(w, "%s  %-20s %s\n", indent, c.Name, c.Mechanism)
				continue
			}
			if len(c.Parts) > 0 {
				fmt.Fprintf(w, "%s  %-20s %s: %s; ε %g in all", indent, c.Name, c.Aggregate, c.Mechanism, c.Epsilon)
				if c.CI95 > 0 {
					fmt.Fprintf(w, ", 95%% of answers within ±%s", noiseFig(c.CI95))
				}
				fmt.Fprintf(w, "\n")
				for _, p := range c.Parts {
					fmt.Fprintf(w, "%s  %-20s   part %s: sensitivity %s, ε %g, %s scale %s\n",
						indent, "", p.Label, exactFig(p.Sensitivity), p.Epsilon, p.Mechanism, noiseFig(p.Scale))
				}
				continue
			}
			if c.RankError > 0 {
				fmt.Fprintf(w, "%s  %-20s %s: histogram sensitivity %s, ε %g, %s; rank error ≤ %s rows (95%%)\n",
					indent, c.Name, c.Aggregate, exactFig(c.Sensitivity), c.Epsilon, c.Mechanism, exactFig(c.RankError))
				continue
			}
			fmt.Fprintf(w, "%s  %-20s %s: sensitivity %s, ε %g, %s scale %s, 95%% of answers within ±%s\n",
				indent, c.Name, c.Aggregate, exactFig(c.Sensitivity), c.Epsilon, c.Mechanism, noiseFig(c.Scale), noiseFig(c.CI95))
		}
		if x.BackendSQL != "" {
			fmt.Fprintf(w, "%sbackend SQL:\n%s  %s\n", indent, indent, strings.ReplaceAll(x.BackendSQL, "\n", "\n"+indent+"  "))
		}
		x.GroupingSets.writeText(w, indent)
	}
	for _, n := range x.Notes {
		fmt.Fprintf(w, "%snote: %s\n", indent, n)
	}
}
