package session

import (
	"reflect"
	"strings"
	"time"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// currentTimeFuncs are the names parsers turn into ir.CurrentTime, as
// ir.Statement.Functions lists them.
var currentTimeFuncs = map[string]bool{
	"now": true, "pg_catalog.now": true, "transaction_timestamp": true, "pg_catalog.transaction_timestamp": true,
	"statement_timestamp": true, "pg_catalog.statement_timestamp": true, "current_date": true,
	"current_timestamp": true, "localtimestamp": true, "localtime": true, "utc_timestamp": true, "curdate": true, "utc_date": true,
}

// checkTimeZone refuses, in a session whose time zone is not UTC, a
// statement whose answer PostgreSQL (or MySQL) would compute on that
// zone's clock: one that reads the current time (CURRENT_DATE,
// date_trunc('day', now()) fall on the zone's day boundaries), and one
// that reads a timestamp with time zone (a timestamptz column of the
// policy, a cast to timestamptz, a timestamptz literal, AT TIME ZONE):
// date_trunc, casts to date, extract and comparisons with a zoneless
// literal read such a value in the session's zone, and its text shows the
// zone's offset. Here every date is computed in UTC (the backends'
// sessions too), so the answer would silently differ. Timestamps without
// time zone do not depend on the zone and are answered.
func (s *Session) checkTimeZone(st *ir.Statement) error {
	now := usesCurrentTime(st)
	if !now && st.Query == nil && st.Rows == nil {
		return nil // nothing the zone changes is computed here
	}
	z := s.timeZone()
	if utcZone(z) {
		return nil
	}
	set := "SET TIME ZONE 'UTC'"
	if s.dialect == parser.MySQL {
		set = "SET time_zone = '+00:00'"
	}
	if now {
		return sqlerr.New(sqlerr.FeatureNotSupported, "the current time is read in UTC, the time zone every date is computed in here, and this session's time zone is %s", z).
			WithHint("%s, or write the dates as literals", set)
	}
	if what := zonedValue(st, s.p.zoned); what != "" {
		return sqlerr.New(sqlerr.FeatureNotSupported, "%s is a timestamp with time zone, which is computed and shown in UTC here, and this session's time zone is %s: its dates, hours and text would not be that zone's", what, z).
			WithHint("%s (timestamps without time zone are answered in any session zone)", set)
	}
	return nil
}

// zonedValue names the first value of st whose meaning depends on the
// session's time zone: a column named as one of the policy's timestamptz
// columns (zoned, lower-case names; a column of another table with the
// same name is refused too, on the safe side), a cast to timestamptz, a
// timestamptz literal, AT TIME ZONE. "" when there is none.
func zonedValue(st *ir.Statement, zoned map[string]bool) string {
	what := ""
	visit := func(e ir.Expr) bool {
		switch n := e.(type) {
		case ir.ColumnRef:
			if zoned[strings.ToLower(n.Name)] {
				what = "column " + n.Name
			}
		case ir.Cast:
			if n.To == ir.CastTimestampTZ {
				what = ir.FormatExpr(n)
			}
		case ir.Literal:
			if n.Value.Kind == ir.KindTimestampTZ {
				what = n.Value.SQL()
			}
		case ir.Func:
			if n.Name == "at_utc" {
				what = ir.FormatExpr(n)
			}
		}
		return what == ""
	}
	if q := st.Query; q != nil {
		q.WalkExprs(visit)
		for _, it := range q.Select {
			if it.Arg != nil && what == "" {
				visit(*it.Arg)
			}
		}
	}
	if r := st.Rows; r != nil && what == "" {
		r.RowExprs(func(e *ir.Expr) {
			if what == "" {
				ir.Walk(*e, visit)
			}
		})
	}
	return what
}

// timeZone is the time zone the client set: PostgreSQL's TimeZone, or
// MySQL's time_zone (SetTimeZone).
func (s *Session) timeZone() string {
	if s.dialect == parser.MySQL {
		return s.mysqlZone
	}
	return s.settings["timezone"]
}

// utcZone reports whether the client's zone z is UTC (MySQL's SYSTEM is:
// system_time_zone says UTC).
func utcZone(z string) bool {
	if z == "UTC" || z == "" {
		return true // every session's default: no string work
	}
	z = strings.Trim(z, "'\" ")
	return z == "" || strings.EqualFold(z, "system") || exprtype.IsUTCZone(z)
}

// usesCurrentTime reports whether st calls a function that reads the
// current time.
func usesCurrentTime(st *ir.Statement) bool {
	for _, f := range st.Functions {
		if currentTimeFuncs[f] {
			return true
		}
	}
	return false
}

// BindTime replaces the statement's current time — NOW(), CURRENT_DATE
// and the like (ir.CurrentTime) — with its value at now, in UTC, and folds
// the date arithmetic of constants around it (exprtype.FoldTime), so that
// a relative date filter is a plain comparison with a literal. The time
// is read once per statement, as PostgreSQL reads it once per
// transaction; being a literal of the statement, it is part of what the
// release is keyed by: the same query at another time is another
// release (and another charge), unless it truncates the time to a day or
// month that has not changed.
func BindTime(st *ir.Statement, now time.Time, mysql bool) (*ir.Statement, error) {
	if !usesCurrentTime(st) || st.Query == nil && st.Rows == nil {
		return st, nil
	}
	now = now.UTC()
	bind := func(e ir.Expr) (ir.Expr, error) {
		if ct, ok := e.(ir.CurrentTime); ok {
			return ir.Literal{Value: currentTime(now, ct)}, nil
		}
		return exprtype.FoldTime(e, mysql), nil
	}
	c := *st
	var err error
	if st.Query != nil {
		if c.Query, err = st.Query.RewriteExprs(bind); err != nil {
			return nil, err
		}
	}
	if st.Rows != nil {
		if c.Rows, err = st.Rows.RewriteExprs(bind); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// timeNotice is the notice that goes with a charged answer to st when its
// release depends on the current time more finely than the day: the
// analyst (or the dashboard's author) learns that asking again soon
// charges again, and how to avoid it. "" otherwise.
func (s *Session) timeNotice(st *ir.Statement) string {
	step := timeStep(st, s.dialect == parser.MySQL)
	if step == "" {
		return ""
	}
	day := "date_trunc('day', now()) or CURRENT_DATE"
	if s.dialect == parser.MySQL {
		day = "DATE(NOW()) or CURDATE()"
	}
	return "ddp: this query reads the current time to the " + step + ", so asked again a " + step +
		" later it is a new query, charged again. Truncated to the day (" + day + ") it would be answered from this release for the rest of the day"
}

// timeStep reports how finely st's release depends on the current time:
// "second", "minute" or "hour" when binding it a second, a minute or an
// hour apart (from noon, where no truncation to the day or the hour is
// crossed) changes what the backend computes, "" when it does not read
// the time there or only its day or a coarser unit. Such a statement is
// a new release nearly every time it is asked.
func timeStep(st *ir.Statement, mysql bool) string {
	if !usesCurrentTime(st) {
		return ""
	}
	noon := time.Now().UTC().Truncate(24 * time.Hour).Add(12 * time.Hour)
	at, err := BindTime(st, noon, mysql)
	if err != nil {
		return ""
	}
	for _, step := range []struct {
		d    time.Duration
		name string
	}{{time.Second, "second"}, {time.Minute, "minute"}, {time.Hour, "hour"}} {
		later, err := BindTime(st, noon.Add(step.d), mysql)
		if err == nil && !reflect.DeepEqual(releaseExprs(at), releaseExprs(later)) {
			return step.name
		}
	}
	return ""
}

// releaseExprs are the expressions of st a release is keyed by, those
// the backend computes: WHERE, GROUP BY and the aggregates' arguments.
// The select list's and HAVING's expressions over the noisy rows are
// post-processing: a time there changes the answer, not the release.
func releaseExprs(st *ir.Statement) []ir.Expr {
	if st.Query == nil {
		return nil
	}
	out := append([]ir.Expr{st.Query.Where}, st.Query.GroupBy...)
	for _, it := range st.Query.Select {
		out = append(out, it.ArgExpr)
	}
	return out
}

// currentTime is ct's value at now (UTC): a date, or a timestamp with
// ct.Precision fractional digits (truncated).
func currentTime(now time.Time, ct ir.CurrentTime) ir.Value {
	if ct.Kind == ir.KindDate {
		return ir.TimeValue(ir.KindDate, now)
	}
	unit := time.Second
	for range ct.Precision {
		unit /= 10
	}
	return ir.TimeValue(ct.Kind, now.Truncate(max(unit, time.Microsecond)))
}
