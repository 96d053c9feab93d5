package session

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// A client's statement timeout (PostgreSQL's statement_timeout, MySQL's
// max_execution_time, MariaDB's max_statement_time) is a cancel the proxy
// sends itself when the statement has run that long: the statement's
// context ends with errStatementTimeout as its cause, and everything a
// client cancel does follows — the backend statement is cancelled, a
// statement whose charge was reserved stays charged, and a private
// answer held back by
// listen.min_response_ms yields the error, not the answer. So it tells a
// client nothing a cancel at the same moment would not (README,
// "Timing"). The policy's backend.statement_timeout still bounds every
// statement, whatever the client sets.

// errStatementTimeout is the cause of a statement context ended by the
// client's statement timeout.
var errStatementTimeout = errors.New("the client's statement timeout fired")

// withStatementTimeout returns ctx bounded by the session's statement
// timeout, if the client set one.
func (s *Session) withStatementTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.stmtTimeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, s.stmtTimeout, errStatementTimeout)
}

// timedOut turns the cancellation a statement's own timeout caused into
// the statement-timeout error clients expect (57014 "canceling statement
// due to statement timeout"; MySQL's 3024). Other errors, and a cancel
// the client sent itself, are left as they are.
func timedOut(ctx context.Context, err error) error {
	if err == nil || !errors.Is(context.Cause(ctx), errStatementTimeout) {
		return err
	}
	var se *sqlerr.Error
	if errors.As(err, &se) && se.Code != sqlerr.QueryCanceled && se.Code != sqlerr.StatementTimeout {
		return err
	}
	if se == nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return err
	}
	return sqlerr.Wrap(sqlerr.StatementTimeout, err, "canceling statement due to statement timeout")
}

// maxTimeoutMS is statement_timeout's largest value (PostgreSQL's INT_MAX
// milliseconds).
const maxTimeoutMS = math.MaxInt32

// timeUnits are PostgreSQL's units of a millisecond setting, largest
// first (guc.c's time unit table): names are case-sensitive.
var timeUnits = []struct {
	name string
	ms   float64
}{
	{"d", 24 * 60 * 60 * 1000}, {"h", 60 * 60 * 1000}, {"min", 60 * 1000}, {"s", 1000}, {"ms", 1}, {"us", 1.0 / 1000},
}

// parseTimeoutMS reads a statement_timeout value as PostgreSQL does
// (guc.c parse_int with the millisecond unit): an integer in C's strtol
// notation (decimal, 0x hex, 0 octal) or a decimal number, then optional
// blanks and a unit; fractions round to the nearest millisecond (half to
// even, as rint), a value in a larger unit first to the next smaller one.
// The errors are PostgreSQL's, SQLSTATE 22023.
func parseTimeoutMS(name, value string) (int64, error) {
	invalid := func() *sqlerr.Error {
		return sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter %q: %q", name, value)
	}
	v, rest, ok := parseCNumber(value)
	if !ok || math.IsNaN(v) {
		return 0, invalid()
	}
	rest = strings.TrimLeftFunc(rest, isCSpaceRune)
	if rest != "" {
		unit := rest
		if i := strings.IndexFunc(rest, isCSpaceRune); i >= 0 {
			unit = rest[:i]
			if strings.TrimLeftFunc(rest[i:], isCSpaceRune) != "" {
				unit = "" // garbage after the unit
			}
		}
		found := false
		for i, u := range timeUnits {
			if u.name != unit {
				continue
			}
			v *= u.ms
			if i+1 < len(timeUnits) {
				next := timeUnits[i+1].ms
				v = math.RoundToEven(v/next) * next
			}
			found = true
			break
		}
		if !found {
			return 0, invalid().WithHint(`Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".`)
		}
	}
	v = math.RoundToEven(v)
	if v > math.MaxInt32 || v < math.MinInt32 {
		return 0, invalid().WithHint("Value exceeds integer range.")
	}
	ms := int64(v)
	if ms < 0 || ms > maxTimeoutMS {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "%d ms is outside the valid range for parameter %q (0 .. %d)", ms, name, maxTimeoutMS)
	}
	return ms, nil
}

// parseCNumber reads the number at the start of s as guc.c's parse_int
// does: C's strtol with base 0, and strtod instead when a '.', 'e' or 'E'
// follows what strtol read (or it overflowed). ok=false when no number
// starts s, or strtod's went out of range.
func parseCNumber(s string) (v float64, rest string, ok bool) {
	n, end, overflow := strtol(s)
	if end < len(s) && (s[end] == '.' || s[end] == 'e' || s[end] == 'E') || overflow {
		return strtod(s)
	}
	if end == 0 {
		return 0, s, false
	}
	return float64(n), s[end:], true
}

func isCSpaceRune(r rune) bool { return r < 0x80 && isCSpace(byte(r)) }

// isCSpace is C's isspace in the C locale.
func isCSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

// strtol is C's strtol(s, &end, 0) for a 64-bit long: leading blanks, a
// sign, then 0x hex, 0 octal or decimal digits. end is 0 when there are
// no digits (C leaves end at s).
func strtol(s string) (n int64, end int, overflow bool) {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := uint64(10)
	switch {
	case i+2 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && digitValue(s[i+2]) < 16:
		base, i = 16, i+2
	case i < len(s) && s[i] == '0':
		base = 8
	}
	start := i
	var u uint64
	for ; i < len(s) && digitValue(s[i]) < base; i++ {
		d := uint64(digitValue(s[i]))
		if u > (math.MaxUint64-d)/base {
			overflow = true
			continue
		}
		u = u*base + d
	}
	if i == start {
		return 0, 0, false
	}
	if neg {
		if u > 1<<63 {
			overflow = true
		}
		return -int64(u), i, overflow
	}
	if u > math.MaxInt64 {
		overflow = true
	}
	return int64(u), i, overflow
}

// digitValue is c's value as a digit of base up to 16 (99 if none).
func digitValue(c byte) uint64 {
	switch {
	case c >= '0' && c <= '9':
		return uint64(c - '0')
	case c >= 'a' && c <= 'f':
		return uint64(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return uint64(c-'A') + 10
	}
	return 99
}

// strtod is C's strtod for decimal numbers: leading blanks, a sign,
// digits with an optional point, an optional exponent. Its hexadecimal,
// inf and nan forms are refused (ok=false), as is a value out of range,
// which PostgreSQL refuses too.
func strtod(s string) (float64, string, bool) {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	from := i
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	mant := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		mant++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			mant++
		}
	}
	if mant == 0 {
		return 0, s, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			i = k
		}
	}
	v, err := strconv.ParseFloat(s[from:i], 64)
	if err != nil {
		return 0, s, false
	}
	return v, s[i:], true
}

// formatTimeoutMS is SHOW's spelling of a millisecond setting, as
// PostgreSQL's: the largest unit that divides the value, "0" for none.
func formatTimeoutMS(ms int64) string {
	if ms == 0 {
		return "0"
	}
	for _, u := range timeUnits {
		if u.ms >= 1 && ms%int64(u.ms) == 0 {
			return strconv.FormatInt(ms/int64(u.ms), 10) + u.name
		}
	}
	return strconv.FormatInt(ms, 10) + "ms"
}

// setStatementTimeout validates and applies SET statement_timeout (value
// "" with toDefault: RESET, back to none), storing SHOW's spelling.
func (s *Session) setStatementTimeout(value string, toDefault bool) error {
	ms := int64(0)
	if !toDefault {
		var err error
		if ms, err = parseTimeoutMS("statement_timeout", strings.Trim(value, "'")); err != nil {
			return err
		}
	}
	s.stmtTimeout = time.Duration(ms) * time.Millisecond
	s.settings["statement_timeout"] = formatTimeoutMS(ms)
	return nil
}
