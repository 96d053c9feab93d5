package ir

import (
	"strconv"
	"strings"
)

// FormatExpr renders e as canonical SQL-like text: fully parenthesised,
// identifiers quoted, literals inline. It is deterministic, so it serves as
// a fingerprint of the expression (release-cache keys, explain notes); it
// is never sent to a backend.
func FormatExpr(e Expr) string {
	var b strings.Builder
	b.Grow(32) // most texts fit: one allocation instead of three or four
	formatExpr(&b, e)
	return b.String()
}

func formatCol(b *strings.Builder, c ColumnRef) {
	if c.Schema != "" {
		quote(b, c.Schema)
		b.WriteByte('.')
	}
	if c.Qualifier != "" {
		quote(b, c.Qualifier)
		b.WriteByte('.')
	}
	quote(b, c.Name)
}

// quote writes strconv.Quote(s) without allocating the quoted string
// (names are short: the buffer stays on the stack): the formatted text
// keys every release, and every column of a planned query is formatted
// several times.
func quote(b *strings.Builder, s string) {
	if plainASCII(s) {
		// What strconv.Quote writes for such a name, without its
		// per-rune escaping decisions.
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	var buf [64]byte
	b.Write(strconv.AppendQuote(buf[:0], s))
}

// plainASCII reports whether strconv.Quote would copy every byte of s
// unchanged: printable ASCII other than the quote and the backslash.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func formatExpr(b *strings.Builder, e Expr) {
	switch n := e.(type) {
	case nil:
		b.WriteString("TRUE")
	case ColumnRef:
		formatCol(b, n)
	case Literal:
		var buf [64]byte // most literals: no string built
		b.Write(n.Value.AppendSQL(buf[:0]))
		if n.Value.Kind == KindFloat {
			b.WriteString("::real") // 1 and 1.0 must not share a fingerprint
		}
	case Param:
		b.WriteString("$" + strconv.Itoa(n.Index))
	case Compare:
		bin(b, n.L, n.Op.String(), n.R)
	case Between:
		b.WriteByte('(')
		formatExpr(b, n.X)
		if n.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" BETWEEN ")
		formatExpr(b, n.Lo)
		b.WriteString(" AND ")
		formatExpr(b, n.Hi)
		b.WriteByte(')')
	case In:
		b.WriteByte('(')
		formatExpr(b, n.X)
		if n.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" IN (")
		for i, x := range n.List {
			if i > 0 {
				b.WriteString(", ")
			}
			formatExpr(b, x)
		}
		b.WriteString("))")
	case Like:
		op := " LIKE "
		if n.CaseInsensitive {
			op = " ILIKE "
		}
		if n.Not {
			op = " NOT" + op
		}
		bin(b, n.X, strings.TrimSpace(op), n.Pattern)
	case IsNull:
		b.WriteByte('(')
		formatExpr(b, n.X)
		if n.Not {
			b.WriteString(" IS NOT NULL)")
		} else {
			b.WriteString(" IS NULL)")
		}
	case And:
		bin(b, n.L, "AND", n.R)
	case Or:
		bin(b, n.L, "OR", n.R)
	case Not:
		b.WriteString("(NOT ")
		formatExpr(b, n.X)
		b.WriteByte(')')
	case Arith:
		if n.Op == OpRealDiv {
			// Distinct from OpDiv, which truncates integers.
			b.WriteString("(real(")
			formatExpr(b, n.L)
			b.WriteString(") / ")
			formatExpr(b, n.R)
			b.WriteByte(')')
			break
		}
		bin(b, n.L, n.Op.String(), n.R)
	case Neg:
		b.WriteString("(-")
		formatExpr(b, n.X)
		b.WriteByte(')')
	case Func:
		b.WriteString(n.Name)
		b.WriteByte('(')
		for i, x := range n.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			formatExpr(b, x)
		}
		b.WriteByte(')')
	case Case:
		b.WriteString("(CASE")
		for _, w := range n.Whens {
			b.WriteString(" WHEN ")
			formatExpr(b, w.Cond)
			b.WriteString(" THEN ")
			formatExpr(b, w.Then)
		}
		if n.Else != nil {
			b.WriteString(" ELSE ")
			formatExpr(b, n.Else)
		}
		b.WriteString(" END)")
	case CurrentTime:
		switch n.Kind {
		case KindDate:
			b.WriteString("CURRENT_DATE")
		case KindTimestamp:
			b.WriteString("LOCALTIMESTAMP")
		default:
			b.WriteString("now()")
		}
	case Cast:
		b.WriteString("CAST(")
		formatExpr(b, n.X)
		b.WriteString(" AS " + n.TypeName() + ")")
	case Grouping:
		formatGrouping(b, n)
	case Aggregate:
		b.WriteString(n.Func.String())
		b.WriteByte('(')
		if n.Fraction != nil {
			b.WriteString(strconv.FormatFloat(*n.Fraction, 'g', -1, 64) + "; ")
		}
		if n.Distinct {
			b.WriteString("DISTINCT ")
		}
		switch {
		case n.ArgExpr != nil:
			formatExpr(b, n.ArgExpr)
		case n.Arg == nil:
			b.WriteByte('*')
		default:
			formatCol(b, *n.Arg)
		}
		b.WriteByte(')')
	case OutputRef:
		b.WriteString("#" + strconv.Itoa(n.Index+1))
	case Window:
		formatWindow(b, n)
	case Clamp:
		b.WriteString("clamp(")
		formatExpr(b, n.X)
		b.WriteString(", ")
		formatExpr(b, Literal{Value: n.Lo})
		b.WriteString(", ")
		formatExpr(b, Literal{Value: n.Hi})
		b.WriteByte(')')
	default:
		b.WriteString("?unknown?")
	}
}

func bin(b *strings.Builder, l Expr, op string, r Expr) {
	b.WriteByte('(')
	formatExpr(b, l)
	b.WriteByte(' ')
	b.WriteString(op)
	b.WriteByte(' ')
	formatExpr(b, r)
	b.WriteByte(')')
}

func formatTable(b *strings.Builder, t TableRef) {
	if t.Schema != "" {
		quote(b, t.Schema)
		b.WriteByte('.')
	}
	quote(b, t.Name)
	if t.Alias != "" {
		b.WriteString(" AS ")
		quote(b, t.Alias)
	}
}

// Canonical renders q deterministically. Two BackendQuery values with the
// same Canonical text compute the same true aggregates, so the text keys
// the release cache.
func (q *BackendQuery) Canonical() string {
	var b strings.Builder
	b.Grow(256) // a typical statement's text: one allocation instead of five
	b.WriteString("SELECT ")
	for i, g := range q.GroupBy {
		if i > 0 {
			b.WriteString(", ")
		}
		formatExpr(&b, g)
	}
	for i, a := range q.Aggs {
		if i > 0 || len(q.GroupBy) > 0 {
			b.WriteString(", ")
		}
		switch a.Kind {
		case CountRows:
			b.WriteString("count(*)")
		case CountValues:
			b.WriteString("count(")
			a.formatInput(&b)
			b.WriteByte(')')
		case CountDistinct:
			b.WriteString("count(distinct ")
			a.formatInput(&b)
			b.WriteByte(')')
		case SumClamped:
			b.WriteString("sum_clamped(")
			a.formatInput(&b)
			b.WriteString(", " + fmtFloat(a.Lo) + ", " + fmtFloat(a.Hi) + ", " + fmtFloat(a.Quantum) + ")")
		}
	}
	b.WriteString(" FROM ")
	formatTable(&b, q.From)
	for _, j := range q.Joins {
		if j.Outer {
			b.WriteString(" LEFT")
		}
		b.WriteString(" JOIN ")
		formatTable(&b, j.Table)
		b.WriteString(" ON ")
		formatCol(&b, j.Left)
		if j.NullSafe {
			b.WriteString(" IS NOT DISTINCT FROM ")
		} else {
			b.WriteString(" = ")
		}
		formatCol(&b, j.Right)
	}
	if q.Where != nil {
		b.WriteString(" WHERE ")
		formatExpr(&b, q.Where)
	}
	if q.MaxRowsPerUnit > 0 {
		b.WriteString(" BOUND ")
		formatCol(&b, q.Unit)
		b.WriteString(" TO " + strconv.Itoa(q.MaxRowsPerUnit))
	}
	if len(q.GroupBy) > 0 {
		b.WriteString(" GROUP BY ")
		for i, g := range q.GroupBy {
			if i > 0 {
				b.WriteString(", ")
			}
			formatExpr(&b, g)
		}
	}
	return b.String()
}

// formatInput writes the aggregate's input: its column or expression.
func (a BackendAgg) formatInput(b *strings.Builder) {
	if a.Expr != nil {
		formatExpr(b, a.Expr)
		return
	}
	formatCol(b, *a.Column)
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
