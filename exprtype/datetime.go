package exprtype

import (
	"errors"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Dates and times (see ir.KindDate). Values are exact integers — days or
// microseconds since 1970-01-01 — so their ranges are IntRanges, exact.
//
// Time zones: every backend session runs with its time zone set to UTC
// (PostgreSQL's TimeZone, MySQL's time_zone; the embedded SQLite stores
// UTC text), and a timestamptz is read and written in UTC, so no result
// depends on a server setting. A timestamp without time zone is a wall
// clock reading, never converted.
//
// Literals are typed at plan time: DATE '…', TIMESTAMP '…', '…'::date,
// CAST('…' AS DATE) and a quoted string compared with a date or time
// column are parsed here, and an invalid one ('2010-13-45') is refused
// with 22007 or 22008 before anything is charged. A literal of one time
// type meeting a column of another is converted exactly (a date is its
// midnight; a timestamp and a timestamptz are the same reading in UTC);
// two columns of different time types are not compared (SQLite would
// compare their texts).

// MinComputedDate and MaxComputedDate bound every computed date or time
// value (an interval added, a truncation): MySQL's DATE and DATETIME hold
// 1000-01-01 to 9999-12-31, and PostgreSQL and SQLite hold more. Stored
// values and literals may be anywhere in the years 1 to 9999.
const (
	MinComputedDate = -354285 // 1000-01-01
	MaxComputedDate = ir.MaxDate
)

// inTimeRange reports whether [lo, hi] of type t lies within the years 1
// to 9999.
func inTimeRange(t Type, lo, hi int64) bool {
	if t == Date {
		return lo >= ir.MinDate && hi <= ir.MaxDate
	}
	return lo >= ir.MinTimestamp && hi <= ir.MaxTimestamp
}

// parseTimeLiteral reads the text of a literal as a value of type t;
// other names the operand it meets, for the message (the literal itself
// is not repeated: it may be a bound parameter).
func parseTimeLiteral(t Type, s string, other *node) (ir.Value, error) {
	v, err := ir.ParseTime(t.Kind(), s)
	if err == nil {
		return v, nil
	}
	where := ""
	if other != nil {
		where = " used with " + other.text()
	}
	if errors.Is(err, ir.ErrTimeRange) {
		return ir.Value{}, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date/time field value out of range: a quoted %s%s", t, where).
			WithHint("write a real calendar date between the years 1 and 9999")
	}
	return ir.Value{}, sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type %s: a quoted value%s is not a %s", t, where, t).
		WithHint("write dates as 'YYYY-MM-DD' and timestamps as 'YYYY-MM-DD HH:MM:SS[.ffffff]' (a timestamptz may end in +HH:MM or Z)")
}

// convertTime converts a time value to type t exactly, or reports false
// (a timestamp is not a date unless it is a midnight: PostgreSQL would
// compare the date as its midnight, so the literal keeps its type).
func convertTime(v ir.Value, t Type) (ir.Value, bool) {
	from := TimeType(v.Kind)
	switch {
	case from == t:
		return v, true
	case from == Date:
		return ir.Value{Kind: t.Kind(), Int: v.Int * ir.MicrosPerDay}, true
	case t == Date:
		return ir.Value{}, false
	}
	// Timestamp and timestamptz: one reading, in UTC.
	return ir.Value{Kind: t.Kind(), Int: v.Int}, true
}

// castTimeValue is CAST(v AS t) of a time value v to a time type t, as
// PostgreSQL computes it in UTC: convertTime, and where that keeps the
// type (a timestamp to a date) the timestamp's day.
func castTimeValue(v ir.Value, t Type) ir.Value {
	if out, ok := convertTime(v, t); ok {
		return out
	}
	return ir.Date(floorDivInt(v.Int, ir.MicrosPerDay))
}

// unifyTimes converts the date and time literals among ns to the type of
// the first operand that is not a literal, when that is a date or time.
func unifyTimes(ns []*node) error {
	target := Unknown
	for _, n := range ns {
		if _, lit := n.x.(ir.Literal); !lit && !n.strLit && n.info.Type.IsTime() {
			target = n.info.Type
			break
		}
	}
	if target == Unknown {
		return nil
	}
	for _, n := range ns {
		l, lit := n.x.(ir.Literal)
		if !lit || !l.Value.IsTime() || TimeType(l.Value.Kind) == target {
			continue
		}
		v, ok := convertTime(l.Value, target)
		if !ok {
			return sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s = %s: a timestamp literal compared with a date column", TimeType(l.Value.Kind), target).
				WithHint("compare the date column with a date literal, or with the date range [DATE 'd', DATE 'd' + 1)")
		}
		c, err := literal(ir.Literal{Value: v})
		if err != nil {
			return err
		}
		n.x, n.info = c.x, c.info
	}
	return nil
}

// castTimeTarget is the type of a date or time cast target.
func castTimeTarget(to ir.CastType) (Type, bool) {
	switch to {
	case ir.CastDate:
		return Date, true
	case ir.CastTimestamp:
		return Timestamp, true
	case ir.CastTimestampTZ:
		return TimestampTZ, true
	}
	return Unknown, false
}

// timeCast analyses CAST(x AS date|timestamp|timestamptz): a literal is
// converted at plan time (text parsed, 22007/22008 when it is not a
// value of the type); a timestamp becomes its date, a date its midnight
// timestamp, both total. Text read from a row is refused (a stored text
// that is not a date would fail the query for that row only), and so are
// the conversions between timestamp and timestamptz of a column, which
// would depend on a time zone.
func (c *checker) timeCast(k ir.Cast, t Type) (*node, error) {
	x, err := c.expr(k.X, modeCompute)
	if err != nil {
		return nil, err
	}
	if x.isNull() {
		return nullNode(k), nil
	}
	if x.strLit {
		v, err := parseTimeLiteral(t, x.x.(ir.Literal).Value.Str, nil)
		if err != nil {
			return nil, err
		}
		n, err := literal(ir.Literal{Value: v})
		if err != nil {
			return nil, err
		}
		n.src = k
		return n, nil
	}
	if l, ok := x.x.(ir.Literal); ok && l.Value.IsTime() {
		n, err := literal(ir.Literal{Value: castTimeValue(l.Value, t)})
		if err != nil {
			return nil, err
		}
		n.src = k
		return n, nil
	}
	from := x.info.Type
	out := &node{x: ir.Cast{X: x.x, To: k.To}, src: k, twice: x.twice}
	switch {
	case from == t:
		return &node{x: x.x, info: x.info, src: k, twice: x.twice}, nil
	case from.IsTime() && t == Date && x.info.Bounded:
		out.info = timeInfo(Date, floorDivInt(x.info.Int.Lo.Int64(), ir.MicrosPerDay), floorDivInt(x.info.Int.Hi.Int64(), ir.MicrosPerDay))
		if c.seen != nil {
			// Kept for the domain pass: the days of the range (Metabase's
			// GROUP BY CAST(t AS date)).
			if dom, ok := DateFuncValues("date", "", from.Kind(), x.info.Int.Lo.Int64(), x.info.Int.Hi.Int64(), MaxDomain); ok {
				c.rangeDoms[ir.FormatExpr(out.x)] = dom
			}
		}
		return out, checkRange(out)
	case from == Date && t == Timestamp && x.info.Bounded:
		out.info = timeInfo(Timestamp, x.info.Int.Lo.Int64()*ir.MicrosPerDay, x.info.Int.Hi.Int64()*ir.MicrosPerDay)
		return out, checkRange(out)
	case from == Text:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported,
			"CAST of text to %s is not supported: a stored text that is not a %s would fail the query for that row only: %s", t, t, ir.FormatExpr(k)).
			WithHint("declare the column with type %s in the policy", t)
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "CAST of %s to %s is not supported: %s", from, t, ir.FormatExpr(k)).
		WithHint("cast a timestamp to date, or a date to timestamp")
}

func floorDivInt(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// timeCastTo is the cast target of a date or time type.
func timeCastTo(t Type) (ir.CastType, bool) {
	switch t {
	case Date:
		return ir.CastDate, true
	case Timestamp:
		return ir.CastTimestamp, true
	case TimestampTZ:
		return ir.CastTimestampTZ, true
	}
	return 0, false
}
