package planner

import (
	"fmt"
	"io"
	"strings"
)

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
					fmt.Fprintf(w, ", 95%% of answers within ±%g", c.CI95)
				}
				fmt.Fprintf(w, "\n")
				for _, p := range c.Parts {
					fmt.Fprintf(w, "%s  %-20s   part %s: sensitivity %g, ε %g, %s scale %g\n",
						indent, "", p.Label, p.Sensitivity, p.Epsilon, p.Mechanism, p.Scale)
				}
				continue
			}
			if c.RankError > 0 {
				fmt.Fprintf(w, "%s  %-20s %s: histogram sensitivity %g, ε %g, %s; rank error ≤ %g rows (95%%)\n",
					indent, c.Name, c.Aggregate, c.Sensitivity, c.Epsilon, c.Mechanism, c.RankError)
				continue
			}
			fmt.Fprintf(w, "%s  %-20s %s: sensitivity %g, ε %g, %s scale %g, 95%% of answers within ±%g\n",
				indent, c.Name, c.Aggregate, c.Sensitivity, c.Epsilon, c.Mechanism, c.Scale, c.CI95)
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
