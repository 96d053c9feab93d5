package sqlrender

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// expr writes e fully parenthesised, so operator precedence never differs
// between dialects and no two minus signs can form a comment.
func (r *renderer) expr(e ir.Expr) {
	if r.err != nil {
		return
	}
	switch n := e.(type) {
	case ir.ColumnRef:
		r.col(n)
	case ir.Literal:
		r.literal(n.Value)
	case ir.Compare:
		r.binary(n.L, " "+n.Op.String()+" ", n.R)
	case ir.Between:
		r.w("(")
		r.expr(n.X)
		if n.Not {
			r.w(" NOT")
		}
		r.w(" BETWEEN ")
		r.expr(n.Lo)
		r.w(" AND ")
		r.expr(n.Hi)
		r.w(")")
	case ir.In:
		r.in(n)
	case ir.Like:
		r.like(n)
	case ir.IsNull:
		r.w("(")
		r.expr(n.X)
		if n.Not {
			r.w(" IS NOT NULL)")
		} else {
			r.w(" IS NULL)")
		}
	case ir.And:
		r.binary(n.L, " AND ", n.R)
	case ir.Or:
		r.binary(n.L, " OR ", n.R)
	case ir.Not:
		r.w("(NOT ")
		r.expr(n.X)
		r.w(")")
	case ir.Arith:
		switch n.Op {
		case ir.OpIntDiv:
			r.fail(sqlerr.New(sqlerr.Internal, "invalid backend query: DIV survived the analysis"))
		case ir.OpDiv, ir.OpMod, ir.OpRealDiv:
			r.divide(n)
		default:
			r.binary(n.L, " "+n.Op.String()+" ", n.R)
		}
	case ir.Neg:
		r.w("(-")
		r.expr(n.X)
		r.w(")")
	case ir.Func:
		r.fn(n)
	case ir.Case:
		r.caseExpr(n)
	case ir.Cast:
		if k := castKind(n.To); k != ir.KindNull {
			r.timeCast(n.X, k)
			return
		}
		var typ string
		switch n.To {
		case ir.CastBigint:
			typ = r.d.IntType
		case ir.CastDouble:
			typ = r.d.FloatType
		case ir.CastText:
			typ = r.d.TextType
		}
		if typ == "" {
			r.fail(sqlerr.New(sqlerr.Internal, "invalid backend query: a cast to %s survived the analysis", n.To))
			return
		}
		r.w("CAST(")
		r.expr(n.X)
		r.w(" AS " + typ + ")")
	case ir.Clamp:
		r.clampNode(n)
	case nil:
		r.fail(sqlerr.New(sqlerr.Internal, "invalid backend query: missing expression"))
	case ir.Param:
		r.fail(sqlerr.New(sqlerr.Internal, "invalid backend query: unbound parameter $%d", n.Index))
	default:
		// ir.Aggregate, ir.OutputRef: post-processing nodes, never backend SQL.
		r.fail(sqlerr.New(sqlerr.Internal, "invalid backend query: %T in a backend predicate", e))
	}
}

// divide writes a quotient or remainder that cannot fail: the divisor
// is NULLIF(b, 0), so a zero divisor gives NULL on every backend (the
// planner has excluded the overflow of -2^63 / -1). OpDiv has integer
// operands and truncates toward zero: / on PostgreSQL and SQLite, DIV on
// MySQL (whose / returns a decimal). OpRealDiv divides doubles: both
// operands are cast, so two integers do not truncate (PostgreSQL,
// SQLite) nor become a rounded DECIMAL (MySQL).
func (r *renderer) divide(n ir.Arith) {
	op := " " + n.Op.String() + " "
	operand := func(e ir.Expr) { r.expr(e) }
	if n.Op == ir.OpRealDiv {
		operand = func(e ir.Expr) {
			r.w("CAST(")
			r.expr(e)
			r.w(" AS " + r.d.FloatType + ")")
		}
	}
	if n.Op == ir.OpDiv {
		op = " " + r.d.IntDiv + " "
	}
	r.w("(")
	operand(n.L)
	r.w(op + "NULLIF(")
	operand(n.R)
	r.w(", 0))")
}

// caseExpr writes a searched CASE; every backend spells it alike.
func (r *renderer) caseExpr(n ir.Case) {
	if len(n.Whens) == 0 {
		r.fail(sqlerr.New(sqlerr.Internal, "invalid backend query: CASE without WHEN"))
		return
	}
	r.w("(CASE")
	for _, w := range n.Whens {
		r.w(" WHEN ")
		r.expr(w.Cond)
		r.w(" THEN ")
		r.expr(w.Then)
	}
	if n.Else != nil {
		r.w(" ELSE ")
		r.expr(n.Else)
	}
	r.w(" END)")
}

func (r *renderer) binary(l ir.Expr, op string, rt ir.Expr) {
	r.w("(")
	r.expr(l)
	r.w(op)
	r.expr(rt)
	r.w(")")
}

func (r *renderer) literal(v ir.Value) {
	switch v.Kind {
	case ir.KindNull:
		// An untyped NULL placeholder cannot be typed by PostgreSQL
		// (`$1 IS NULL` fails); the keyword carries no client text.
		r.w("NULL")
		return
	case ir.KindFloat:
		if math.IsNaN(v.Float) || math.IsInf(v.Float, 0) {
			r.fail(sqlerr.New(sqlerr.InvalidParameterValue, "NaN and infinite numbers are not supported in predicates"))
			return
		}
	case ir.KindInt, ir.KindString, ir.KindBool, ir.KindDate, ir.KindTimestamp, ir.KindTimestampTZ:
	default:
		r.fail(sqlerr.New(sqlerr.Internal, "invalid backend query: literal of unknown kind %d", v.Kind))
		return
	}
	if r.keepVals {
		r.vals = append(r.vals, v)
	}
	var arg any
	if !r.measure {
		arg = r.d.Arg(v)
	}
	r.bind(arg, r.d.ParamCast[v.Kind])
}

func (r *renderer) in(n ir.In) {
	if len(n.List) == 0 {
		r.fail(sqlerr.New(sqlerr.Internal, "invalid backend query: empty IN list"))
		return
	}
	r.w("(")
	r.expr(n.X)
	if n.Not {
		r.w(" NOT")
	}
	r.w(" IN (")
	nonConst := 0
	for i, x := range n.List {
		if i > 0 {
			r.w(", ")
		}
		if _, ok := x.(ir.Literal); !ok {
			nonConst++
		}
		r.expr(x)
	}
	// PostgreSQL turns the elements that are not constants into a
	// left-deep chain of ORs (transformAExprIn), one level per element:
	// 15,000 of them exceed its stack depth whatever the data, after the
	// charge. They count as nesting, so the planner refuses such a list.
	if d := r.depth + nonConst; d > r.max {
		r.max = d
	}
	r.w("))")
}

// like renders [NOT] LIKE/ILIKE. Patterns escape with backslash (the
// PostgreSQL and MySQL default); a literal pattern ending in an unpaired
// backslash is refused here because backends disagree on it (PostgreSQL
// raises an error, SQLite matches nothing).
func (r *renderer) like(n ir.Like) {
	if lit, ok := n.Pattern.(ir.Literal); ok && lit.Value.Kind == ir.KindString && danglingEscape(lit.Value.Str) {
		r.fail(sqlerr.New(sqlerr.InvalidParameterValue, `LIKE pattern must not end with the escape character \`).
			WithHint(`write \\ for a literal backslash`))
		return
	}
	op := " LIKE "
	ci := n.CaseInsensitive
	if ci && r.d.ILike {
		op, ci = " ILIKE ", false
	}
	if n.Not {
		op = " NOT" + op
	}
	r.w("(")
	r.searched(func() { r.maybeLower(n.X, ci) })
	r.w(op)
	r.maybeLower(n.Pattern, ci)
	r.w(r.d.LikeEscape + ")")
}

// searched writes the text a LIKE or a searching function looks into,
// with the dialect's SearchCollate.
func (r *renderer) searched(x func()) {
	if r.d.SearchCollate == "" {
		x()
		return
	}
	r.w("(")
	x()
	r.w(r.d.SearchCollate + ")")
}

func (r *renderer) maybeLower(e ir.Expr, lower bool) {
	if !lower {
		r.expr(e)
		return
	}
	r.w("LOWER(")
	r.expr(e)
	r.w(")")
}

func danglingEscape(p string) bool {
	n := 0
	for i := len(p) - 1; i >= 0 && p[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

func (r *renderer) fn(n ir.Func) {
	def, ok := exprtype.Lookup(n.Name)
	if !ok {
		r.fail(sqlerr.New(sqlerr.Internal, "invalid backend query: function %q is not whitelisted", n.Name))
		return
	}
	if !def.ArityOK(len(n.Args)) {
		r.fail(sqlerr.New(sqlerr.Internal, "invalid backend query: %s with %d arguments", n.Name, len(n.Args)))
		return
	}
	if n.Name == "coalesce" && len(n.Args) == 1 {
		// COALESCE(x) is x; SQLite rejects the one-argument form.
		r.expr(n.Args[0])
		return
	}
	rd := def.Rendering(r.d.Name)
	if def.SkipsNull {
		r.skipsNull(rd.Name, n.Args)
		return
	}
	switch rd.Form {
	case exprtype.FormRoundHalfAway:
		r.roundHalfAway(n.Args[0])
		return
	case exprtype.FormInfixConcat:
		r.binary(n.Args[0], " || ", n.Args[1])
		return
	case exprtype.FormWidthBucket:
		r.widthBucket(n.Args)
		return
	case exprtype.FormConcatSkipNull:
		r.w(rd.Name + "(")
		for i, a := range n.Args {
			if i > 0 {
				r.w(", ")
			}
			r.w("COALESCE(")
			r.expr(a)
			r.w(", '')")
		}
		r.w(")")
		return
	case exprtype.FormDateTrunc:
		r.dateTrunc(n)
		return
	case exprtype.FormExtract:
		r.extract(n)
		return
	case exprtype.FormDateAdd:
		r.dateAdd(n)
		return
	case exprtype.FormToChar:
		r.toChar(n)
		return
	case exprtype.FormUnixTimestamp:
		r.epoch(n.Args[0])
		return
	case exprtype.FormAtUTC:
		if r.d.Name == "postgres" {
			r.w("(")
			r.expr(n.Args[0])
			r.w(" AT TIME ZONE 'UTC')")
			return
		}
		r.expr(n.Args[0])
		return
	case exprtype.FormLeft, exprtype.FormRight:
		// SUBSTR(s, 1, n) and SUBSTR(s, -(n)); the analysis keeps n ≥ 0
		// (left) and n ≥ 1 (right).
		r.w("SUBSTR(")
		r.expr(n.Args[0])
		if rd.Form == exprtype.FormLeft {
			r.w(", 1, ")
			r.expr(n.Args[1])
		} else {
			r.w(", -(")
			r.expr(n.Args[1])
			r.w(")")
		}
		r.w(")")
		return
	}
	if def.CastResult {
		r.w("CAST(")
	}
	r.w(rd.Name + "(")
	for i, a := range n.Args {
		if i > 0 {
			r.w(", ")
		}
		if rd.Int4Args && i > 0 {
			r.w("CAST(")
			r.expr(a)
			r.w(" AS INTEGER)")
			continue
		}
		if def.Searches && i == 0 {
			r.searched(func() { r.expr(a) })
			continue
		}
		r.expr(a)
	}
	r.w(")")
	if def.CastResult {
		// Every CastResult function has an integer result (length).
		r.w(" AS " + r.d.IntType + ")")
	}
}

// skipsNull writes GREATEST or LEAST with NULL arguments skipped, as
// PostgreSQL does natively (exprtype.Func.SkipsNull). Elsewhere each
// argument that may be NULL becomes COALESCE(arg, fallback), where the
// fallback is a literal argument if there is one, else all the other
// arguments: every term is then one of the non-NULL arguments (or NULL
// when all are), and each non-NULL argument is itself a term. A single
// argument is written bare (SQLite's one-argument MAX is the aggregate).
func (r *renderer) skipsNull(name string, args []ir.Expr) {
	if len(args) == 1 {
		r.expr(args[0])
		return
	}
	notNull := func(e ir.Expr) bool {
		l, ok := e.(ir.Literal)
		return ok && l.Value.Kind != ir.KindNull
	}
	fallback := -1
	for i, a := range args {
		if notNull(a) {
			fallback = i
			break
		}
	}
	r.w(name + "(")
	for i, a := range args {
		if i > 0 {
			r.w(", ")
		}
		if r.d.LeastIgnoresNull || notNull(a) {
			r.expr(a)
			continue
		}
		r.w("COALESCE(")
		r.expr(a)
		for j, b := range args {
			if j != i && (fallback < 0 || j == fallback) {
				r.w(", ")
				r.expr(b)
			}
		}
		r.w(")")
	}
	r.w(")")
}

// clampNode writes a planner-inserted clamp: the value in the bounds'
// type (BIGINT or DOUBLE, whatever the column's storage type: PostgreSQL
// would otherwise compute in int4 and MySQL in UNSIGNED), NULL kept NULL,
// and for real bounds magnitudes below ir.TinyReal read as 0 first.
func (r *renderer) clampNode(n ir.Clamp) {
	d := r.d
	var typ string
	var lo, hi any
	switch {
	case n.Lo.IsTime() && n.Hi.Kind == n.Lo.Kind && n.Lo.Int <= n.Hi.Int:
		r.timeClamp(n)
		return
	case n.Lo.Kind == ir.KindInt && n.Hi.Kind == ir.KindInt && n.Lo.Int <= n.Hi.Int:
		typ, lo, hi = d.IntType, n.Lo.Int, n.Hi.Int
	case n.Lo.Kind == ir.KindFloat && n.Hi.Kind == ir.KindFloat && n.Lo.Float <= n.Hi.Float &&
		!math.IsInf(n.Lo.Float, 0) && !math.IsInf(n.Hi.Float, 0):
		typ, lo, hi = d.FloatType, n.Lo.Float, n.Hi.Float
	default:
		r.fail(sqlerr.New(sqlerr.Internal, "invalid backend query: clamp bounds are not two ordered integers or reals"))
		return
	}
	if d.LeastIgnoresNull {
		r.w("(CASE WHEN ")
		r.expr(n.X)
		r.w(" IS NULL THEN NULL ELSE ")
	}
	r.w("CAST(")
	r.clamp(func() {
		if typ == d.IntType {
			r.expr(n.X)
			return
		}
		r.flushTiny(func() { r.expr(n.X) }, ir.TinyReal)
	}, lo, hi, typ)
	r.w(" AS " + typ + ")")
	if d.LeastIgnoresNull {
		r.w(" END)")
	}
}

// flushTiny writes x with magnitudes below t read as 0:
// (CASE WHEN (x > -t) AND (x < t) THEN 0 ELSE x END). A product or
// quotient of a nonzero double that rounds to zero is an error in
// PostgreSQL ("value out of range: underflow"); after this no value is
// that small. t is written by this package, never taken from a client.
func (r *renderer) flushTiny(x func(), t float64) {
	ts := strconv.FormatFloat(t, 'e', -1, 64)
	r.w("(CASE WHEN (")
	x()
	r.w(" > -" + ts + ") AND (")
	x()
	r.w(" < " + ts + ") THEN 0 ELSE ")
	x()
	r.w(" END)")
}

// roundHalfAway writes SIGN(x) * FLOOR(ABS(x) + 0.5) over doubles, which is
// exactly SQLite's ROUND(x) (half away from zero, in double arithmetic).
// x is rendered twice, with its own placeholders each time.
func (r *renderer) roundHalfAway(x ir.Expr) {
	asDouble := func() {
		r.w("CAST(")
		r.expr(x)
		r.w(" AS " + r.d.FloatType + ")")
	}
	r.w("(SIGN(")
	asDouble()
	r.w(") * FLOOR(ABS(")
	asDouble()
	r.w(") + 0.5))")
}

// widthBucket writes width_bucket(x, lo, hi, n) (exprtype.FormWidthBucket)
// in integer arithmetic every backend computes alike: the analysis has
// checked lo < hi and n ≥ 1 constant, and (x - lo) * n within 64 bits.
// In the ELSE arm x - lo ≥ 0, so the truncating division floors.
func (r *renderer) widthBucket(a []ir.Expr) {
	x, lo, hi, n := a[0], a[1], a[2], a[3]
	r.w("(CASE WHEN ")
	r.binary(x, " < ", lo)
	r.w(" THEN 0 WHEN ")
	r.binary(x, " >= ", hi)
	r.w(" THEN ")
	r.binary(n, " + ", ir.Literal{Value: ir.Int(1)})
	r.w(" ELSE ((((")
	r.expr(x)
	r.w(" - ")
	r.expr(lo)
	r.w(") * ")
	r.expr(n)
	r.w(") " + r.d.IntDiv + " (")
	r.expr(hi)
	r.w(" - ")
	r.expr(lo)
	r.w(")) + 1) END)")
}

func castKind(t ir.CastType) ir.Kind {
	switch t {
	case ir.CastDate:
		return ir.KindDate
	case ir.CastTimestamp:
		return ir.KindTimestamp
	case ir.CastTimestampTZ:
		return ir.KindTimestampTZ
	}
	return ir.KindNull
}

// timeCast converts x to the date or time kind k. The analysis allows a
// timestamp to a date and a date to a timestamp, which cannot fail.
// SQLite has no date types: date(x) and datetime(x) write the text form
// its columns hold (ir.CanonicalText; datetime of a date is its
// midnight without a fraction).
func (r *renderer) timeCast(x ir.Expr, k ir.Kind) {
	if f, ok := x.(ir.Func); ok && r.d.TimeAsText && k != ir.KindDate && (f.Name == "date_add" || f.Name == "at_utc") {
		// Already the canonical text, fraction included (which
		// datetime() would drop).
		r.expr(x)
		return
	}
	if r.d.TimeAsText {
		fn := "datetime("
		if k == ir.KindDate {
			fn = "date("
		}
		r.w(fn)
		r.expr(x)
		r.w(")")
		return
	}
	r.w("CAST(")
	r.expr(x)
	r.w(" AS " + r.d.ParamCast[k] + ")")
}

// timeClamp writes a date or time column clamped to its declared bounds:
// LEAST(GREATEST(x, lo), hi) in the column's type (SQLite compares the
// text form, in which text order is time order). PostgreSQL's LEAST
// skips NULL, so NULL is guarded there as for numbers.
func (r *renderer) timeClamp(n ir.Clamp) {
	d := r.d
	typ := d.ParamCast[n.Lo.Kind]
	if d.LeastIgnoresNull {
		r.w("(CASE WHEN ")
		r.expr(n.X)
		r.w(" IS NULL THEN NULL ELSE ")
	}
	if typ != "" {
		r.w("CAST(")
	}
	r.clamp(func() { r.expr(n.X) }, d.Arg(n.Lo), d.Arg(n.Hi), typ)
	if typ != "" {
		r.w(" AS " + typ + ")")
	}
	if d.LeastIgnoresNull {
		r.w(" END)")
	}
}

// unitArg returns the constant unit or field of a date function, checked
// against the analysis's list: the renderer writes its own spelling,
// never the client's text.
func (r *renderer) unitArg(n ir.Func, valid func(string) bool) (string, bool) {
	l, ok := n.Args[0].(ir.Literal)
	if !ok || l.Value.Kind != ir.KindString || !valid(strings.ToLower(strings.TrimSpace(l.Value.Str))) {
		r.fail(sqlerr.New(sqlerr.Internal, "invalid backend query: %s with a unit the analysis did not check", n.Name))
		return "", false
	}
	return strings.ToLower(strings.TrimSpace(l.Value.Str)), true
}

// dateTrunc writes date_trunc(unit, x) as a value the enclosing cast
// (which the analysis always adds: exprtype lowers date_trunc inside a
// CAST to its result type) turns into a date or timestamp: PostgreSQL's
// date_trunc (in UTC, the session's zone); MySQL's DATE_FORMAT text of
// the truncated value (quarter and ISO week computed from the date);
// SQLite's date and strftime modifiers on the text form.
func (r *renderer) dateTrunc(n ir.Func) {
	unit, ok := r.unitArg(n, func(u string) bool { return slices.Contains(exprtype.TruncUnits, u) })
	if !ok {
		return
	}
	x := func() { r.expr(n.Args[1]) }
	switch r.d.Name {
	case "postgres":
		r.w("date_trunc('" + unit + "', ")
		x()
		r.w(")")
	case "mysql":
		switch unit {
		case "quarter":
			r.w("(MAKEDATE(YEAR(")
			x()
			r.w("), 1) + INTERVAL (QUARTER(")
			x()
			r.w(") - 1) QUARTER)")
		case "week":
			r.w("DATE_SUB(DATE(")
			x()
			r.w("), INTERVAL WEEKDAY(")
			x()
			r.w(") DAY)")
		default:
			format := map[string]string{"year": "%Y-01-01", "month": "%Y-%m-01", "day": "%Y-%m-%d",
				"hour": "%Y-%m-%d %H:00:00", "minute": "%Y-%m-%d %H:%i:00"}[unit]
			r.w("DATE_FORMAT(")
			x()
			r.w(", '" + format + "')")
		}
	default: // sqlite
		switch unit {
		case "year", "month":
			r.w("date(")
			x()
			r.w(", 'start of " + unit + "')")
		case "quarter":
			r.w("date(")
			x()
			r.w(", 'start of month', '-' || ((CAST(strftime('%m', ")
			x()
			r.w(") AS INTEGER) - 1) % 3) || ' months')")
		case "week":
			// The Monday on or before: back six days, then forward to
			// the next Monday.
			r.w("date(")
			x()
			r.w(", '-6 days', 'weekday 1')")
		case "day":
			r.w("date(")
			x()
			r.w(")")
		default:
			format := map[string]string{"hour": "%Y-%m-%d %H:00:00", "minute": "%Y-%m-%d %H:%M:00"}[unit]
			r.w("strftime('" + format + "', ")
			x()
			r.w(")")
		}
	}
}

// epoch writes exprtype.EpochSeconds(x), the whole seconds since
// 1970-01-01 UTC, as an integer: the day's seconds plus the time of
// day's on MySQL and SQLite (MySQL's UNIX_TIMESTAMP returns 0 outside
// 1970..2038 and keeps the fraction; SQLite's strftime('%s') truncates
// a fraction toward zero before 1970), PostgreSQL's epoch floored.
// Backend sessions are in UTC, so a MySQL DATETIME and a TIMESTAMP read
// alike.
func (r *renderer) epoch(x ir.Expr) {
	switch r.d.Name {
	case "postgres":
		r.w("CAST(floor(EXTRACT(EPOCH FROM ")
		r.expr(x)
		r.w(")) AS BIGINT)")
	case "mysql":
		r.w("((TO_DAYS(")
		r.expr(x)
		r.w(") - 719528) * 86400 + HOUR(")
		r.expr(x)
		r.w(") * 3600 + MINUTE(")
		r.expr(x)
		r.w(") * 60 + SECOND(")
		r.expr(x)
		r.w("))")
	default: // sqlite
		r.w("(CAST(strftime('%s', date(")
		r.expr(x)
		r.w(")) AS INTEGER) + CAST(strftime('%H', ")
		r.expr(x)
		r.w(") AS INTEGER) * 3600 + CAST(strftime('%M', ")
		r.expr(x)
		r.w(") AS INTEGER) * 60 + CAST(strftime('%S', ")
		r.expr(x)
		r.w(") AS INTEGER))")
	}
}

// extract writes extract(field, x) as a BIGINT (the epoch as a double:
// exprtype types it real).
func (r *renderer) extract(n ir.Func) {
	field, ok := r.unitArg(n, func(f string) bool { _, ok := exprtype.ExtractFields[f]; return ok || f == "epoch" })
	if !ok {
		return
	}
	if field == "epoch" {
		r.w("CAST(")
		r.epoch(n.Args[1])
		r.w(" AS " + r.d.FloatType + ")")
		return
	}
	x := func() { r.expr(n.Args[1]) }
	switch r.d.Name {
	case "postgres":
		r.w("CAST(EXTRACT(" + strings.ToUpper(field) + " FROM ")
		x()
		r.w(") AS BIGINT)")
	case "mysql":
		if field == "dow" {
			r.w("(DAYOFWEEK(")
			x()
			r.w(") - 1)")
			return
		}
		fn := map[string]string{"year": "YEAR", "quarter": "QUARTER", "month": "MONTH", "day": "DAYOFMONTH", "hour": "HOUR", "minute": "MINUTE",
			"doy": "DAYOFYEAR", "week": "WEEKOFYEAR"}[field] // WEEKOFYEAR: the ISO week, WEEK(x, 3)
		r.w(fn + "(")
		x()
		r.w(")")
	default: // sqlite
		if field == "quarter" {
			r.w("((CAST(strftime('%m', ")
			x()
			r.w(") AS INTEGER) + 2) / 3)")
			return
		}
		format := map[string]string{"year": "%Y", "month": "%m", "day": "%d", "hour": "%H", "minute": "%M", "dow": "%w",
			"doy": "%j", "week": "%V"}[field] // %V: the ISO week (SQLite 3.46 and later)
		r.w("CAST(strftime('" + format + "', ")
		x()
		r.w(") AS INTEGER)")
	}
}

// dateAdd writes date_add(x, n, unit), x plus a constant interval, as a
// value the enclosing cast (added by the analysis) types: PostgreSQL's
// x + INTERVAL 'n unit'; MySQL's DATE_ADD; SQLite's date/datetime
// modifiers, with 'floor' so that months clip to the end of a shorter
// month as on the other backends, and a timestamp's fraction appended
// to datetime()'s whole seconds (units of a second or more keep it).
func (r *renderer) dateAdd(n ir.Func) {
	c, ok1 := n.Args[1].(ir.Literal)
	u, ok2 := n.Args[2].(ir.Literal)
	unit := strings.ToLower(u.Value.Str)
	if !ok1 || !ok2 || c.Value.Kind != ir.KindInt || !slices.Contains(exprtype.IntervalUnits, unit) {
		r.fail(sqlerr.New(sqlerr.Internal, "invalid backend query: date_add without a constant interval"))
		return
	}
	count := c.Value.Int
	x := func() { r.expr(n.Args[0]) }
	num := strconv.FormatInt(count, 10)
	switch r.d.Name {
	case "postgres":
		if unit == "quarter" { // not an interval unit in PostgreSQL
			num, unit = strconv.FormatInt(3*count, 10), "month"
		}
		r.w("(")
		x()
		r.w(" + INTERVAL '" + num + " " + unit + "')")
	case "mysql":
		r.w("DATE_ADD(")
		x()
		r.w(", INTERVAL " + num + " " + strings.ToUpper(unit) + ")")
	default: // sqlite
		switch unit {
		case "week":
			count, unit = 7*count, "day"
		case "quarter":
			count, unit = 3*count, "month"
		}
		mod := "'" + strconv.FormatInt(count, 10) + " " + unit + "s'"
		if count >= 0 {
			mod = "'+" + mod[1:]
		}
		if unit == "month" || unit == "year" {
			mod += ", 'floor'"
		}
		// A date's text is 10 characters: datetime() then writes a
		// midnight the cast back to date drops; a timestamp keeps its
		// fraction (characters 20 on, empty for whole seconds).
		r.w("(datetime(")
		x()
		r.w(", " + mod + ") || substr(")
		x()
		r.w(", 20))")
	}
}

// toChar writes to_char(x, format) in the dialect's spelling of the
// format (exprtype.CharFormats; never the client's text).
func (r *renderer) toChar(n ir.Func) {
	l, ok := n.Args[1].(ir.Literal)
	f, known := exprtype.LookupCharFormat(l.Value.Str, false)
	if !ok || !known {
		r.fail(sqlerr.New(sqlerr.Internal, "invalid backend query: to_char with a format the analysis did not check"))
		return
	}
	switch r.d.Name {
	case "postgres":
		r.w("to_char(")
		r.expr(n.Args[0])
		r.w(", '" + f.Postgres + "')")
	case "mysql":
		r.w("DATE_FORMAT(")
		r.expr(n.Args[0])
		r.w(", '" + f.MySQL + "')")
	default:
		r.w("strftime('" + f.SQLite + "', ")
		r.expr(n.Args[0])
		r.w(")")
	}
}
