package ir

import (
	"strconv"
	"strings"
)

// Grouping is GROUPING(k1, ..., kn) of a query with grouping sets: an
// integer whose bit n-1-i is 1 when key ki is rolled up (not in the grouping
// set of the output row), as in PostgreSQL and MySQL 8. It reads only which
// set a row belongs to, which is public: post-processing, never sent to a
// backend.
//
// Parsers read the arguments as written (Args) and then resolve each one to
// the GROUP BY entry it names (Keys indexes Query.GroupBy); a query whose
// Grouping is unresolved is refused. Walk and Rewrite treat the node as a
// leaf: its arguments are names of keys, not expressions over the row, and
// the query's own rewrites (flattening, binding) keep GroupBy indexes.
type Grouping struct {
	Args []Expr
	Keys []int
}

func (Grouping) exprNode() {}

// formatGrouping takes the concrete builder: through an interface the
// builder would escape, and every FormatExpr would allocate it.
func formatGrouping(b *strings.Builder, n Grouping) {
	b.WriteString("GROUPING(")
	for i, k := range n.Keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("#" + strconv.Itoa(k))
	}
	if n.Keys == nil {
		for i, a := range n.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(FormatExpr(a))
		}
	}
	b.WriteString(")")
}

// GroupingBits is the value of GROUPING(keys) for a row of grouping set
// set (indexes into GroupBy): bit n-1-i set when keys[i] is not in set.
func GroupingBits(keys []int, set []int) int64 {
	var v int64
	for _, k := range keys {
		v <<= 1
		in := false
		for _, s := range set {
			in = in || s == k
		}
		if !in {
			v |= 1
		}
	}
	return v
}
