package ir

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Dates and times are exact integers: days (KindDate) or microseconds
// (KindTimestamp, KindTimestampTZ) since 1970-01-01, proleptic Gregorian,
// for the years 1 to 9999 only. That is the range every backend can hold
// and print the same way (MySQL's DATE and DATETIME officially start at
// 1000-01-01, which the analysis of computed values enforces separately;
// PostgreSQL accepts BC years and years above 9999, which the proxy
// refuses in literals and bounds).
const (
	MicrosPerSecond = 1_000_000
	MicrosPerDay    = 86_400 * MicrosPerSecond
	// MinDate and MaxDate are 0001-01-01 and 9999-12-31 in days.
	MinDate = -719162
	MaxDate = 2932896
	// MinTimestamp and MaxTimestamp are 0001-01-01 00:00:00 and
	// 9999-12-31 23:59:59.999999 in microseconds.
	MinTimestamp = MinDate * MicrosPerDay
	MaxTimestamp = (MaxDate+1)*MicrosPerDay - 1
)

// Date returns the date days after 1970-01-01.
func Date(days int64) Value { return Value{Kind: KindDate, Int: days} }

// Timestamp returns the timestamp without time zone us microseconds after
// 1970-01-01 00:00:00.
func Timestamp(us int64) Value { return Value{Kind: KindTimestamp, Int: us} }

// TimestampTZ returns the instant us microseconds after 1970-01-01 UTC.
func TimestampTZ(us int64) Value { return Value{Kind: KindTimestampTZ, Int: us} }

// TimeValue returns the value of kind k (a time kind) at t, truncated to
// the kind's unit; t's zone is taken as the wall clock for KindDate and
// KindTimestamp, converted to UTC for KindTimestampTZ.
func TimeValue(k Kind, t time.Time) Value {
	if k == KindTimestampTZ {
		t = t.UTC()
	}
	wall := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	us := wall.Unix()*MicrosPerSecond + int64(wall.Nanosecond()/1000)
	if k == KindDate {
		return Date(floorDiv(us, MicrosPerDay))
	}
	return Value{Kind: k, Int: us}
}

// GoTime returns a time value as a time.Time in UTC (the wall clock for
// dates and timestamps without time zone).
func (v Value) GoTime() time.Time {
	if v.Kind == KindDate {
		return time.Unix(v.Int*86_400, 0).UTC()
	}
	return time.UnixMicro(v.Int).UTC()
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// ErrTimeFormat and ErrTimeRange classify the failures of ParseTime:
// text that is not a date or timestamp (SQLSTATE 22007), and one whose
// fields are out of range (month 13, 31 February, year 0: 22008).
var (
	ErrTimeFormat = errors.New("invalid date/time format")
	ErrTimeRange  = errors.New("date/time field out of range")
)

// ParseTime reads an ISO 8601 date or timestamp as PostgreSQL and MySQL
// both read it: YYYY-MM-DD for a date; YYYY-MM-DD[( |T)HH:MM[:SS[.f…]]]
// for timestamps (at most six fractional digits), which may end in Z,
// ±HH, ±HHMM or ±HH:MM: a timestamptz is converted to UTC (without a
// zone it is UTC, the zone of every backend session); a timestamp
// without time zone ignores the zone, as PostgreSQL does (clients such as
// pgx write their time values with one). A date takes no time of day.
// Surrounding spaces are ignored.
func ParseTime(k Kind, s string) (Value, error) {
	s = strings.TrimSpace(s)
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return Value{}, ErrTimeFormat
	}
	y, ok1 := digits(s[0:4])
	mo, ok2 := digits(s[5:7])
	d, ok3 := digits(s[8:10])
	if !ok1 || !ok2 || !ok3 {
		return Value{}, ErrTimeFormat
	}
	rest := s[10:]
	var h, mi, sec, us int
	offset := 0 // seconds east of UTC
	if rest != "" {
		if k == KindDate {
			return Value{}, ErrTimeFormat
		}
		if rest[0] != ' ' && rest[0] != 'T' && rest[0] != 't' {
			return Value{}, ErrTimeFormat
		}
		rest = strings.TrimLeft(rest[1:], " ")
		var err error
		h, mi, sec, us, rest, err = parseClock(rest)
		if err != nil {
			return Value{}, err
		}
		rest = strings.TrimLeft(rest, " ")
		if rest != "" {
			if offset, err = parseZone(rest); err != nil {
				return Value{}, err
			}
			if k != KindTimestampTZ {
				offset = 0
			}
		}
	}
	if y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || sec > 59 {
		return Value{}, ErrTimeRange
	}
	days := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC).Unix() / 86_400
	if k == KindDate {
		return Date(days), nil
	}
	v := days*MicrosPerDay + int64(h*3600+mi*60+sec-offset)*MicrosPerSecond + int64(us)
	if v < MinTimestamp || v > MaxTimestamp {
		return Value{}, ErrTimeRange
	}
	return Value{Kind: k, Int: v}, nil
}

func parseClock(s string) (h, mi, sec, us int, rest string, err error) {
	if len(s) < 5 || s[2] != ':' {
		return 0, 0, 0, 0, "", ErrTimeFormat
	}
	var ok1, ok2 bool
	h, ok1 = digits(s[0:2])
	mi, ok2 = digits(s[3:5])
	if !ok1 || !ok2 {
		return 0, 0, 0, 0, "", ErrTimeFormat
	}
	s = s[5:]
	if len(s) >= 3 && s[0] == ':' {
		var ok bool
		if sec, ok = digits(s[1:3]); !ok {
			return 0, 0, 0, 0, "", ErrTimeFormat
		}
		s = s[3:]
		if len(s) > 0 && s[0] == '.' {
			n := 1
			for n < len(s) && s[n] >= '0' && s[n] <= '9' {
				n++
			}
			frac := s[1:n]
			if len(frac) == 0 || len(frac) > 6 {
				return 0, 0, 0, 0, "", ErrTimeFormat
			}
			us, _ = digits(frac + strings.Repeat("0", 6-len(frac)))
			s = s[n:]
		}
	}
	return h, mi, sec, us, s, nil
}

func parseZone(s string) (int, error) {
	if s == "Z" || s == "z" {
		return 0, nil
	}
	if s[0] != '+' && s[0] != '-' {
		return 0, ErrTimeFormat
	}
	sign := 1
	if s[0] == '-' {
		sign = -1
	}
	z := strings.Replace(s[1:], ":", "", 1)
	var h, m int
	var ok bool
	switch len(z) {
	case 2:
		h, ok = digits(z)
	case 4:
		var ok2 bool
		h, ok = digits(z[:2])
		m, ok2 = digits(z[2:])
		ok = ok && ok2
	}
	if !ok {
		return 0, ErrTimeFormat
	}
	if h > 15 || m > 59 {
		return 0, ErrTimeRange
	}
	return sign * (h*3600 + m*60), nil
}

func digits(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// FormatTime writes a time value as PostgreSQL's text output does in the
// ISO DateStyle with TimeZone UTC: 2010-06-01, 2010-06-01 12:30:00,
// 2010-06-01 12:30:00.25, 2010-06-01 12:30:00+00.
func FormatTime(k Kind, n int64) string {
	if k == KindDate {
		return time.Unix(n*86_400, 0).UTC().Format("2006-01-02")
	}
	t := time.UnixMicro(n).UTC()
	out := t.Format("2006-01-02 15:04:05")
	if f := t.Nanosecond() / 1000; f != 0 {
		frac := strconv.Itoa(f + MicrosPerSecond)[1:]
		out += "." + strings.TrimRight(frac, "0")
	}
	if k == KindTimestampTZ {
		out += "+00"
	}
	return out
}

// CanonicalText writes a time value in the form the embedded SQLite
// backend stores and compares as text: YYYY-MM-DD for a date and
// YYYY-MM-DD HH:MM:SS[.f] for a timestamp (SQLite's own datetime() form,
// with a fraction of at most six digits and no trailing zeros, in UTC and
// without a zone suffix for timestamptz). In that form text order is time
// order: fractions without trailing zeros compare digit by digit, and a
// whole second is a prefix of every later instant within it.
func CanonicalText(k Kind, n int64) string {
	return strings.TrimSuffix(FormatTime(k, n), "+00")
}

// AsTime reads a value a backend driver returned for a date or time
// column as kind k: text in the ISO or RFC 3339 form (drivers and the
// SQLite text storage), or a time value of another kind (a timestamp
// becomes its date only at midnight). Anything else, NULL included, is
// returned unchanged.
func AsTime(v Value, k Kind) Value {
	switch {
	case v.Kind == k:
		return v
	case v.Kind == KindString:
		if t, err := time.Parse(time.RFC3339Nano, v.Str); err == nil {
			if k != KindTimestampTZ {
				// A wall clock the driver labelled with a zone.
				t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
			}
			return AsTime(TimeValue(KindTimestampTZ, t), k)
		}
		if out, err := ParseTime(k, v.Str); err == nil {
			return out
		}
		if k == KindDate {
			if ts, err := ParseTime(KindTimestamp, v.Str); err == nil {
				return AsTime(ts, k)
			}
		}
	case v.Kind == KindDate && (k == KindTimestamp || k == KindTimestampTZ):
		return Value{Kind: k, Int: v.Int * MicrosPerDay}
	case (v.Kind == KindTimestamp || v.Kind == KindTimestampTZ) && k == KindDate:
		if v.Int%MicrosPerDay == 0 {
			return Date(v.Int / MicrosPerDay)
		}
	case v.Kind == KindTimestamp || v.Kind == KindTimestampTZ:
		return Value{Kind: k, Int: v.Int}
	}
	return v
}
