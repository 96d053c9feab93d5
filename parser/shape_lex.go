package parser

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file finds the literal constants of a PostgreSQL text, so that texts
// differing only in literal values can share one parse (shape.go). It is a
// second reader of SQL text, which this package otherwise avoids (one
// grammar decides), so it decides nothing on its own: it only proposes
// where the literals are, libpg_query's tree of the first text of a shape
// must confirm every proposed literal (shape.go validates it), and whatever
// this lexer is not sure of makes the text "no shape", which parses the
// usual way. Being wrong here therefore costs a cache miss, never a tree.

// litClass is the token type PostgreSQL's scanner gives a literal: the
// grammar sees only the type, so two texts whose literals have the same
// types in the same places parse to the same tree up to the constants'
// values (and the locations after them).
type litClass uint8

const (
	litInt    litClass = iota + 1 // ICONST: decimal digits that fit an int32
	litFloat                      // FCONST: digits '.' digits, or too many digits for ICONST
	litString                     // SCONST: a plain '...' string
)

// marker stands for a literal of the class in a shape key. A NUL never
// occurs in a text that has a shape (pgLiterals refuses it), so markers
// cannot collide with the verbatim bytes around them.
func (c litClass) marker() string {
	switch c {
	case litInt:
		return "\x00I"
	case litFloat:
		return "\x00F"
	}
	return "\x00S"
}

// pgLiteral is one literal token of a text.
type pgLiteral struct {
	start, end int // byte span in the text, quotes included
	class      litClass
	// minus is the offset of a "-" operator token directly before the
	// literal (only blanks and comments between), or -1. The grammar folds
	// a unary minus into the constant and reports the constant at the
	// minus sign; whether this "-" is unary is the tree's to say.
	minus int
	ival  int32  // litInt
	text  string // litFloat: the token as written; litString: the value
}

// pgShape returns the shape key of a PostgreSQL text (the text with each
// literal replaced by its class marker) and its literals, or ok=false when
// the lexer is not sure of the text.
func pgShape(sql string) (key string, lits []pgLiteral, ok bool) {
	lits, ok = pgLiterals(sql)
	if !ok {
		return "", nil, false
	}
	var b strings.Builder
	b.Grow(len(sql) + len(lits))
	prev := 0
	for _, l := range lits {
		b.WriteString(sql[prev:l.start])
		b.WriteString(l.class.marker())
		prev = l.end
	}
	b.WriteString(sql[prev:])
	return b.String(), lits, true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isIdentStart and isIdentCont are scan.l's ident_start and ident_cont
// (any byte ≥ 0x80 is a letter to PostgreSQL).
func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isIdentCont(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '$' }

// isOpChar is scan.l's op_chars.
func isOpChar(c byte) bool { return strings.IndexByte("~!@#^&|`?+-*/%<>=", c) >= 0 }

// pgLiterals lexes sql the way PostgreSQL's scanner does for the subset it
// knows, returning the literal tokens in order.
func pgLiterals(sql string) ([]pgLiteral, bool) {
	if strings.IndexByte(sql, 0) >= 0 || !utf8.ValidString(sql) {
		return nil, false // the C parser stops at a NUL; protobuf wants UTF-8
	}
	var lits []pgLiteral
	minus := -1 // offset of the previous token when it was the "-" operator
	i, n := 0, len(sql)
	for i < n {
		c := sql[i]
		switch {
		case isSpace(c):
			i++
			continue
		case c == '-' && i+1 < n && sql[i+1] == '-':
			// A line comment runs to the next newline (scan.l: [\n\r]).
			for i < n && sql[i] != '\n' && sql[i] != '\r' {
				i++
			}
			continue
		case c == '/' && i+1 < n && sql[i+1] == '*':
			end, ok := skipBlockComment(sql, i)
			if !ok {
				return nil, false
			}
			i = end
			continue
		}
		// A token: every branch below sets next and whether the token is
		// the bare "-" operator.
		start, next, isMinus := i, 0, false
		switch {
		case c == '\'':
			if start > 0 && (isIdentCont(sql[start-1]) || sql[start-1] == '&') {
				return nil, false // E'', B'', X'', N'', U&'', date'...' (typed, no blank)
			}
			end, val, ok := scanString(sql, start)
			if !ok || continuesString(sql, end) {
				return nil, false
			}
			lits = append(lits, pgLiteral{start: start, end: end, class: litString, minus: minus, text: val})
			next = end
		case c == '"':
			if start > 0 && sql[start-1] == '&' {
				return nil, false // U&"..."
			}
			end, ok := scanQuotedIdent(sql, start)
			if !ok {
				return nil, false
			}
			next = end
		case isDigit(c):
			l, ok := scanNumber(sql, start)
			if !ok {
				return nil, false
			}
			l.minus = minus
			lits = append(lits, l)
			next = l.end
		case c == '.':
			if i+1 < n && isDigit(sql[i+1]) {
				return nil, false // .5
			}
			next = i + 1
		case c == '$':
			// Only a parameter $n; $$ and $tag$ quote strings.
			j := i + 1
			for j < n && isDigit(sql[j]) {
				j++
			}
			if j == i+1 || j < n && isIdentCont(sql[j]) {
				return nil, false
			}
			next = j
		case isIdentStart(c):
			j := i + 1
			for j < n && isIdentCont(sql[j]) {
				j++
			}
			if j < n && (sql[j] == '\'' || sql[j] == '"') {
				return nil, false
			}
			if j-i == 1 && (c == 'u' || c == 'U') && j < n && sql[j] == '&' {
				return nil, false // U& (unicode escapes)
			}
			next = j
		case isOpChar(c):
			n, ok := operatorLen(sql[start:])
			if !ok {
				return nil, false
			}
			next = start + n
			isMinus = next == start+1 && c == '-'
		default:
			next = i + 1 // ( ) , ; : [ ] and the like
		}
		minus = -1
		if isMinus {
			minus = start
		}
		i = next
	}
	return lits, true
}

// skipBlockComment returns the offset after the (nested, as in
// PostgreSQL) comment that starts at i.
func skipBlockComment(sql string, i int) (int, bool) {
	depth := 0
	for i+1 < len(sql) {
		switch {
		case sql[i] == '/' && sql[i+1] == '*':
			depth++
			i += 2
		case sql[i] == '*' && sql[i+1] == '/':
			depth--
			i += 2
			if depth == 0 {
				return i, true
			}
		default:
			i++
		}
	}
	return 0, false
}

// scanString reads a plain '...' string with ” for a quote. A backslash
// makes the lexer unsure (its meaning depends on standard_conforming_strings).
func scanString(sql string, i int) (end int, val string, ok bool) {
	var b strings.Builder
	j := i + 1
	for j < len(sql) {
		switch sql[j] {
		case '\\':
			return 0, "", false
		case '\'':
			if j+1 < len(sql) && sql[j+1] == '\'' {
				b.WriteByte('\'')
				j += 2
				continue
			}
			return j + 1, b.String(), true
		default:
			b.WriteByte(sql[j])
			j++
		}
	}
	return 0, "", false
}

// continuesString reports whether a string ending at end may be continued
// by another one (SQL's 'a' <newline> 'b'): the next token after blanks
// and comments is a quote. The lexer refuses these rather than deciding.
func continuesString(sql string, end int) bool {
	for i := end; i < len(sql); {
		switch c := sql[i]; {
		case isSpace(c):
			i++
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' && sql[i] != '\r' {
				i++
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			e, ok := skipBlockComment(sql, i)
			if !ok {
				return true
			}
			i = e
		default:
			return c == '\''
		}
	}
	return false
}

func scanQuotedIdent(sql string, i int) (int, bool) {
	for j := i + 1; j < len(sql); j++ {
		if sql[j] == '"' {
			if j+1 < len(sql) && sql[j+1] == '"' {
				j++
				continue
			}
			return j + 1, true
		}
	}
	return 0, false
}

// scanNumber reads digits or digits '.' digits. Anything else that
// PostgreSQL reads as part of a number (exponents, 0x/0o/0b, underscores,
// a trailing or second dot) or as junk after one makes the lexer unsure.
func scanNumber(sql string, i int) (pgLiteral, bool) {
	j := i
	for j < len(sql) && isDigit(sql[j]) {
		j++
	}
	class := litInt
	if j < len(sql) && sql[j] == '.' {
		if j+1 >= len(sql) || !isDigit(sql[j+1]) {
			return pgLiteral{}, false // 1. or 1..
		}
		j++
		for j < len(sql) && isDigit(sql[j]) {
			j++
		}
		class = litFloat
	}
	if j < len(sql) && (isIdentCont(sql[j]) || sql[j] == '.') {
		return pgLiteral{}, false
	}
	l := pgLiteral{start: i, end: j, class: class, text: sql[i:j]}
	if class == litInt {
		// scan.l's process_integer_literal: what does not fit an int
		// is a float constant, spelled as written.
		v, err := strconv.ParseInt(l.text, 10, 32)
		if err != nil {
			l.class = litFloat
		} else {
			l.ival, l.text = int32(v), ""
		}
	}
	return l, true
}

// operatorLen is the length of the operator token at the start of s, which
// starts with an operator character: scan.l's {operator} rule, which stops
// at a comment start and drops trailing + and - from a multi-character
// operator unless it contains one of ~ ! @ # % ^ & | ` ? (so "<>-5" is
// "<>", "-", "5"). ok is false for a run of more than maxOperatorRun
// operator characters.
func operatorLen(s string) (int, bool) {
	n := 0
	for n < len(s) && isOpChar(s[n]) {
		n++
	}
	if n > maxOperatorRun {
		return 0, false
	}
	op := s[:n]
	if k := strings.Index(op, "/*"); k >= 0 {
		n = k
	}
	if k := strings.Index(op[:n], "--"); k >= 0 {
		n = k
	}
	if n > 1 && (s[n-1] == '+' || s[n-1] == '-') && !strings.ContainsAny(s[:n-1], "~!@#^&|`?%") {
		for n > 1 && (s[n-1] == '+' || s[n-1] == '-') {
			n--
		}
	}
	return n, true
}

// maxOperatorRun bounds the operator characters in a row the lexer reads.
// Dropping trailing + and - leaves the rest of a run to be read again as
// the next token ("+-+-+-" is six tokens, each found by reading to the
// run's end), which is quadratic in the run's length: a 16 kB run cost
// the lexer as much time as libpg_query's own scanner (1.5 s), spent a
// second time before the parse. PostgreSQL rejects an operator longer
// than NAMEDATALEN-1 = 63 bytes, so a longer run is that or many tokens,
// never an ordinary statement's: no shape, parsed the usual way.
const maxOperatorRun = 63
