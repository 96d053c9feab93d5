package ir

import (
	"cmp"
	"math"
	"strconv"
)

// Kind is the type of a Value.
type Kind uint8

const (
	KindNull Kind = iota
	KindInt
	KindFloat
	KindString
	KindBool
	// KindDate is a calendar date: Int holds the days since 1970-01-01
	// (proleptic Gregorian), within MinDate..MaxDate.
	KindDate
	// KindTimestamp is a date and time without time zone: Int holds the
	// microseconds since 1970-01-01 00:00:00, within MinTimestamp..MaxTimestamp.
	KindTimestamp
	// KindTimestampTZ is an instant: Int holds the microseconds since
	// 1970-01-01 00:00:00 UTC. Every backend session runs in UTC, so it
	// is written and read in UTC.
	KindTimestampTZ
)

func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindInt:
		return "integer"
	case KindFloat:
		return "real"
	case KindString:
		return "text"
	case KindBool:
		return "boolean"
	case KindDate:
		return "date"
	case KindTimestamp:
		return "timestamp"
	case KindTimestampTZ:
		return "timestamptz"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is a scalar: a literal in a query, a group key, or a released cell.
type Value struct {
	Kind  Kind
	Int   int64
	Float float64
	Str   string
	Bool  bool
}

// Constructors.
func Null() Value              { return Value{} }
func Int(v int64) Value        { return Value{Kind: KindInt, Int: v} }
func Float(v float64) Value    { return Value{Kind: KindFloat, Float: v} }
func String(v string) Value    { return Value{Kind: KindString, Str: v} }
func Bool(v bool) Value        { return Value{Kind: KindBool, Bool: v} }
func (v Value) IsNull() bool   { return v.Kind == KindNull }
func (v Value) IsNumber() bool { return v.Kind == KindInt || v.Kind == KindFloat }

// IsTime reports a date, timestamp or timestamptz value.
func (v Value) IsTime() bool { return v.Kind.IsTime() }

// IsTime reports the date and time kinds.
func (k Kind) IsTime() bool { return k == KindDate || k == KindTimestamp || k == KindTimestampTZ }

// AsFloat returns the numeric value of an integer or real Value.
func (v Value) AsFloat() (float64, bool) {
	switch v.Kind {
	case KindInt:
		return float64(v.Int), true
	case KindFloat:
		return v.Float, true
	}
	return 0, false
}

// Text renders the value the way PostgreSQL's text format does (NULL as "").
func (v Value) Text() string {
	switch v.Kind {
	case KindInt:
		return strconv.FormatInt(v.Int, 10)
	case KindFloat:
		return string(AppendFloatPG(nil, v.Float))
	case KindString:
		return v.Str
	case KindBool:
		if v.Bool {
			return "t"
		}
		return "f"
	case KindDate, KindTimestamp, KindTimestampTZ:
		return FormatTime(v.Kind, v.Int)
	}
	return ""
}

// SQL renders the value as a canonical SQL literal (used for fingerprints
// and explain output, never for backend SQL, which binds parameters).
func (v Value) SQL() string {
	switch v.Kind {
	case KindNull:
		return "NULL"
	case KindString:
		return QuoteString(v.Str)
	case KindBool:
		if v.Bool {
			return "TRUE"
		}
		return "FALSE"
	case KindDate:
		return "DATE " + QuoteString(v.Text())
	case KindTimestamp:
		return "TIMESTAMP " + QuoteString(v.Text())
	case KindTimestampTZ:
		return "TIMESTAMPTZ " + QuoteString(v.Text())
	case KindFloat:
		return string(appendFloatKey(nil, v.Float))
	}
	return v.Text()
}

// appendFloatKey spells a real in SQL(): release and cache keys hold it,
// so it stays the spelling keys were written with (Go's shortest 'g'),
// whatever the text clients are shown.
func appendFloatKey(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// AppendSQL appends v.SQL() to b without building the string (release
// keys and cache keys format every key value of every answer).
func (v Value) AppendSQL(b []byte) []byte {
	switch v.Kind {
	case KindNull, KindBool:
		return append(b, v.SQL()...)
	case KindString:
		return appendQuoted(b, v.Str)
	case KindDate:
		return appendQuoted(append(b, "DATE "...), v.Text())
	case KindTimestamp:
		return appendQuoted(append(b, "TIMESTAMP "...), v.Text())
	case KindTimestampTZ:
		return appendQuoted(append(b, "TIMESTAMPTZ "...), v.Text())
	case KindInt:
		return strconv.AppendInt(b, v.Int, 10)
	case KindFloat:
		return appendFloatKey(b, v.Float)
	}
	return append(b, v.Text()...)
}

// Equal reports whether two values are identical (same kind and value).
func (v Value) Equal(o Value) bool { return v == o }

// CompareValues orders values: NULL first, then numbers (int and real compared
// numerically), then strings, then booleans, then dates, timestamps and
// timestamptz values (each kind in time order). It is the total order used to
// sort group keys deterministically.
func CompareValues(a, b Value) int {
	ra, rb := rank(a.Kind), rank(b.Kind)
	if ra != rb {
		return cmpInt(ra, rb)
	}
	switch a.Kind {
	case KindNull:
		return 0
	case KindInt, KindFloat:
		if a.Kind == KindInt && b.Kind == KindInt {
			// Not the sign of a.Int - b.Int, which overflows.
			return cmp.Compare(a.Int, b.Int)
		}
		fa, _ := a.AsFloat()
		fb, _ := b.AsFloat()
		switch {
		case fa < fb:
			return -1
		case fa > fb:
			return 1
		}
		return 0
	case KindString:
		switch {
		case a.Str < b.Str:
			return -1
		case a.Str > b.Str:
			return 1
		}
		return 0
	case KindBool:
		if a.Bool == b.Bool {
			return 0
		}
		if !a.Bool {
			return -1
		}
		return 1
	case KindDate, KindTimestamp, KindTimestampTZ:
		return cmp.Compare(a.Int, b.Int)
	}
	return 0
}

func rank(k Kind) int {
	switch k {
	case KindNull:
		return 0
	case KindInt, KindFloat:
		return 1
	case KindString:
		return 2
	case KindBool:
		return 3
	}
	return 4 + int(k-KindDate)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// QuoteString renders s as a standard SQL string literal.
func QuoteString(s string) string {
	return string(appendQuoted(make([]byte, 0, len(s)+2), s))
}

func appendQuoted(b []byte, s string) []byte {
	b = append(b, '\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			b = append(b, '\'')
		}
		b = append(b, s[i])
	}
	return append(b, '\'')
}
