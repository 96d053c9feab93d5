package exprtype

import (
	"math"
	"math/big"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Form is how a function call is written in SQL.
type Form uint8

const (
	// FormCall is NAME(arg, ...).
	FormCall Form = iota
	// FormRoundHalfAway is SIGN(x)·FLOOR(ABS(x) + 0.5) over doubles: the
	// rounding SQLite's ROUND does natively, which PostgreSQL and MySQL
	// (half to even on doubles) do not.
	FormRoundHalfAway
	// FormLeft is SUBSTR(s, 1, n) (SQLite has no LEFT).
	FormLeft
	// FormRight is SUBSTR(s, -(n)) for n ≥ 1 (SQLite has no RIGHT).
	FormRight
	// FormConcatSkipNull is NAME(COALESCE(a, ''), ...): PostgreSQL's
	// concat, which skips NULLs, spelled so that MySQL's CONCAT (NULL
	// when any argument is) agrees.
	FormConcatSkipNull
	// FormInfixConcat is (a || b), NULL when either is NULL.
	FormInfixConcat
	// FormWidthBucket is width_bucket(x, lo, hi, n) as a CASE:
	// 0 when x < lo, n + 1 when x >= hi, else (x - lo) * n / (hi - lo) + 1
	// in integer division (the operands are never negative there).
	FormWidthBucket
	// FormDateTrunc is date_trunc(unit, t), the unit a constant of
	// TruncUnits; the renderer writes each dialect's form.
	FormDateTrunc
	// FormExtract is extract(field, t), the field a constant of
	// ExtractFields, as a BIGINT.
	FormExtract
	// FormDateAdd is date_add(t, n, unit): t plus n units (constants).
	FormDateAdd
	// FormToChar is to_char(t, format), the format one of CharFormats.
	FormToChar
	// FormUnixTimestamp is unix_timestamp(t): EpochSeconds as a BIGINT.
	FormUnixTimestamp
	// FormAtUTC is at_utc(t): PostgreSQL's (t AT TIME ZONE 'UTC'); the
	// other backends hold no time zone, and their sessions run in UTC,
	// so there it is t itself (the enclosing cast gives its type).
	FormAtUTC
)

// Rendering is how one dialect writes a function.
type Rendering struct {
	Form Form
	// Name is the SQL function of FormCall.
	Name string
	// Int4Args casts every argument after the first to INTEGER
	// (PostgreSQL's substr, left and right take int4, and no bigint
	// reaches int4 implicitly).
	Int4Args bool
}

// Func is one entry of the function table.
type Func struct {
	// Name is the canonical lower-case name (ir.Func.Name).
	Name string
	// MinArgs and MaxArgs bound the arity (MaxArgs -1: any number).
	MinArgs, MaxArgs int
	// Strict: a NULL argument makes the call NULL; the analysis folds
	// such calls into a NULL literal (PostgreSQL cannot type abs(NULL)).
	Strict bool
	// Unify: the arguments are brought to one type first, as the values
	// of an IN list are (COALESCE).
	Unify bool
	// Rule is the type and range rule: the result of the call given the
	// arguments' infos (NULL arguments left out when Strict). An error
	// refuses the call; call is the call as written, for the message.
	// The analysis then checks the result's range against the backend
	// type, as for every node.
	Rule func(call string, args []Info) (Info, error)
	// Total says why the call cannot raise an error on any argument the
	// rule accepts (documentation, shown by the table test).
	Total string
	// IntegerIdentity: on an integral argument (an integer, or a real
	// whose grain shows it is a whole number) the call is its argument,
	// and the analysis lowers it away.
	IntegerIdentity bool
	// WritesArgTwice: some dialect's form writes the argument twice
	// (FormRoundHalfAway); such a call may not contain another, or the
	// statement would double at every level of nesting.
	WritesArgTwice bool
	// CastResult: the renderer casts the call's value to BIGINT (or
	// DOUBLE for a real result), because some backend returns a narrower
	// type that later arithmetic would overflow (PostgreSQL's length is
	// int4).
	CastResult bool
	// NoGrowth (replace): the second and third arguments must be text
	// literals, the replacement no longer than what it replaces, so the
	// result is never longer than the first argument — a replacement that
	// grows the text could pass the backend's largest text value only
	// for the rows with many matches, and the error would reveal them.
	NoGrowth bool
	// Searches (replace): the call searches its first argument for a
	// substring, which PostgreSQL refuses, when it evaluates the call, on
	// a text of a nondeterministic collation; the renderer gives that
	// argument the dialect's deterministic collation
	// (sqlrender.Dialect.SearchCollate), as it does a LIKE operand.
	Searches bool
	// OneVariable (concat, textcat): at most one argument may be other
	// than a literal. The result is then at most one stored text plus
	// constants: concatenating stored texts could pass the backend's
	// largest value (1 GB in PostgreSQL) only for the rows holding long
	// ones (concat(s, s, s, ...) amplifies), and the error would reveal
	// them.
	OneVariable bool
	// SkipsNull (greatest, least): the call ignores NULL arguments and
	// is NULL only when all are, as PostgreSQL's GREATEST and LEAST are,
	// whichever front end the query came from. MySQL's and SQLite's
	// return NULL when any argument is NULL, so there the renderer
	// replaces each argument that may be NULL by COALESCE(arg, fallback):
	// a literal argument when there is one (each argument is then written
	// once), otherwise all the other arguments, in which case the
	// analysis counts the call as writing its arguments twice.
	SkipsNull bool
	// ConstArgs lists the arguments that must be text literals (a unit
	// or field name); the rule reads them from Info.Const.
	ConstArgs []int
	// Render is the spelling per dialect name (postgres, mysql, sqlite);
	// the "" entry is the default.
	Render map[string]Rendering
	// Post is the function's rule in post-processing (the select list,
	// HAVING and ORDER BY over the noisy row, computed by the proxy; see
	// post.go): its type rule and evaluator. Nil: not available there.
	Post *Post
	// Image is the domain rule (nil: a call's domain is unknown): the
	// value of the call on given argument values, exactly as every
	// backend computes it (see the Image type). The analysis evaluates
	// it over the product of the arguments' domains to derive the
	// call's domain (Info.Domain).
	Image Image
	// RangeImage is the domain rule for arguments whose values cannot
	// be enumerated (a real or timestamp range): the call's possible
	// values from its lowered arguments (literals visible) and their
	// infos (type and range), nil when unknown or larger than
	// MaxDomain. It must hold every value the backend can compute for
	// arguments in those ranges. The analysis consults it when Image
	// derives nothing (floor of a bounded real: the whole numbers
	// between the floors of its bounds; date_trunc of a bounded
	// timestamp: its months).
	RangeImage func(args []ir.Expr, infos []Info) []ir.Value
}

// Rendering returns how dialect writes the function.
func (f Func) Rendering(dialect string) Rendering {
	if r, ok := f.Render[dialect]; ok {
		return r
	}
	return f.Render[""]
}

// ArityText describes the arity for messages ("1", "at least 1", "1 to 2").
func (f Func) ArityText() string {
	switch {
	case f.MaxArgs < 0:
		return "at least " + itoa(f.MinArgs)
	case f.MaxArgs != f.MinArgs:
		return itoa(f.MinArgs) + " to " + itoa(f.MaxArgs)
	}
	return itoa(f.MinArgs)
}

// ArityOK reports whether n arguments fit the arity.
func (f Func) ArityOK(n int) bool { return n >= f.MinArgs && (f.MaxArgs < 0 || n <= f.MaxArgs) }

// Lookup returns the entry of a canonical function name.
func Lookup(name string) (Func, bool) {
	f, ok := table[name]
	if !ok {
		return Func{}, false
	}
	return *f, true
}

// Names lists the functions, sorted.
func Names() []string {
	out := make([]string, 0, len(table))
	for n := range table {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func call(name string) map[string]Rendering { return map[string]Rendering{"": {Name: name}} }

// table is the function catalogue. It is never modified after package
// initialisation.
var table = func() map[string]*Func {
	textFn := func(name string, render map[string]Rendering, f func(string) string, exact func(string) bool) *Func {
		return &Func{
			Name: name, MinArgs: 1, MaxArgs: 1, Strict: true,
			Rule:   textRule,
			Total:  "defined for every text value; text columns are never clamped",
			Render: render,
			Post:   postText(f),
			Image:  imageText(func(s string) (string, bool) { return f(s), exact == nil || exact(s) }),
		}
	}
	integralFn := func(name, sql string, f func(float64) float64) *Func {
		return &Func{
			Name: name, MinArgs: 1, MaxArgs: 1, Strict: true, IntegerIdentity: true,
			Rule: func(c string, args []Info) (Info, error) {
				a := args[0]
				if a.Type != Real {
					return Info{}, noFunction(c, args)
				}
				return realInfo(integral(a.Real, f)), nil
			},
			Total:      "the identity on whole numbers (lowered away); on doubles within ±MaxReal the result is a whole double at most 1 farther from zero",
			Render:     call(sql),
			Post:       postIntegral(f),
			Image:      imageNumber(nil, f), // exact on every double
			RangeImage: wholeNumbersBetween(f),
		}
	}
	fs := []*Func{
		textFn("lower", call("LOWER"), strings.ToLower, asciiOnly),
		textFn("upper", call("UPPER"), strings.ToUpper, asciiOnly),
		// Spaces only, as TRIM/BTRIM without a character list.
		textFn("trim", map[string]Rendering{"": {Name: "TRIM"}, "postgres": {Name: "BTRIM"}}, func(s string) string { return strings.Trim(s, " ") }, nil),
		textFn("ltrim", call("LTRIM"), func(s string) string { return strings.TrimLeft(s, " ") }, nil),
		textFn("rtrim", call("RTRIM"), func(s string) string { return strings.TrimRight(s, " ") }, nil),
		{
			Name: "length", MinArgs: 1, MaxArgs: 1, Strict: true, CastResult: true,
			Rule: func(c string, args []Info) (Info, error) {
				if args[0].Type != Text {
					return Info{}, noFunction(c, args)
				}
				return intInfo(IntRange{new(big.Int), big.NewInt(MaxTextLength)}), nil
			},
			Total: "a character count of at most MaxTextLength, cast to BIGINT (PostgreSQL's int4 result would overflow in a product)",
			// MySQL's LENGTH counts bytes; CHAR_LENGTH counts characters
			// like PostgreSQL's and SQLite's LENGTH.
			Render: map[string]Rendering{"": {Name: "LENGTH"}, "mysql": {Name: "CHAR_LENGTH"}},
			Post: &Post{
				Type: postTypes(Integer, Text),
				Eval: func(a []ir.Value, _ PostDialect) ir.Value { return ir.Int(int64(utf8.RuneCountInString(a[0].Str))) },
			},
			Image: func(args []ir.Value) (ir.Value, bool) {
				rs, ok := runes(args[0])
				return ir.Int(int64(len(rs))), ok
			},
		},
		{
			Name: "abs", MinArgs: 1, MaxArgs: 1, Strict: true,
			Rule: func(c string, args []Info) (Info, error) {
				switch a := args[0]; a.Type {
				case Integer:
					return intInfo(absInt(a.Int)), nil
				case Real:
					return realInfo(absReal(a.Real)), nil
				}
				return Info{}, noFunction(c, args)
			},
			Total:  "the result range is checked against the backend type: abs(-2^63) (an error on every backend) is refused",
			Render: call("ABS"),
			Post: postNumeric(func(x int64) int64 {
				if x < 0 {
					return SaturatingSub(0, x) // abs(MinInt64) saturates
				}
				return x
			}, math.Abs),
			Image: imageNumber(func(x int64) (int64, bool) { return max(x, -x), x != math.MinInt64 }, math.Abs),
		},
		integralFn("floor", "FLOOR", math.Floor),
		integralFn("ceil", "CEIL", math.Ceil),
		{
			Name: "round", MinArgs: 1, MaxArgs: 1, Strict: true, IntegerIdentity: true, WritesArgTwice: true,
			Rule: func(c string, args []Info) (Info, error) {
				if args[0].Type != Real {
					return Info{}, noFunction(c, args)
				}
				return realInfo(integral(args[0].Real, roundHalfAway)), nil
			},
			Total: "the identity on whole numbers (lowered away); on doubles SIGN(x)·FLOOR(ABS(x) + 0.5): the product of ±1 and a whole number cannot underflow, and |x| + 0.5 stays far below overflow",
			Render: map[string]Rendering{
				"":       {Form: FormRoundHalfAway},
				"sqlite": {Form: FormCall, Name: "ROUND"}, // half away from zero natively
			},
			Post: postRound,
			Image: func(args []ir.Value) (ir.Value, bool) {
				x := args[0]
				if x.Kind == ir.KindInt {
					return x, true
				}
				return ir.Float(roundHalfAwayImage(x.Float)), x.Kind == ir.KindFloat && math.Abs(x.Float) < 1<<52
			},
		},
		{
			Name: "substr", MinArgs: 2, MaxArgs: 3, Strict: true,
			Rule: positionsRule(1, 0),
			Total: "the start is at least 1 and the length at least 0 for every value of their ranges (PostgreSQL fails on a negative length; " +
				"backends disagree on a start below 1), both within int4",
			Render: map[string]Rendering{"": {Name: "SUBSTR"}, "postgres": {Name: "SUBSTR", Int4Args: true}, "mysql": {Name: "SUBSTRING"}},
			Post: postPositions("substr", positionsRule(1, 0), func(r []rune, n []int64) []rune {
				start := min(int64(len(r)), n[0]-1)
				if len(n) == 1 {
					return r[start:]
				}
				return r[start:min(int64(len(r)), start+n[1])]
			}),
			Image: substrImage,
		},
		{
			Name: "left", MinArgs: 2, MaxArgs: 2, Strict: true,
			Rule:   positionsRule(0),
			Total:  "the count is at least 0 for every value of its range (a negative count means different things per backend), within int4",
			Render: map[string]Rendering{"": {Name: "LEFT"}, "postgres": {Name: "LEFT", Int4Args: true}, "sqlite": {Form: FormLeft}},
			Post: postPositions("left", positionsRule(0), func(r []rune, n []int64) []rune {
				return r[:min(int64(len(r)), n[0])]
			}),
			Image: leftImage,
		},
		{
			Name: "right", MinArgs: 2, MaxArgs: 2, Strict: true,
			Rule:   positionsRule(1),
			Total:  "the count is at least 1 for every value of its range (SQLite's SUBSTR(s, -0) would be the whole text), within int4",
			Render: map[string]Rendering{"": {Name: "RIGHT"}, "postgres": {Name: "RIGHT", Int4Args: true}, "sqlite": {Form: FormRight}},
			Post: postPositions("right", positionsRule(1), func(r []rune, n []int64) []rune {
				return r[int64(len(r))-min(int64(len(r)), n[0]):]
			}),
			Image: rightImage,
		},
		{
			Name: "concat", MinArgs: 1, MaxArgs: -1, OneVariable: true,
			Rule:   allText,
			Total:  "text in, text out; NULLs are skipped (PostgreSQL's concat) on every backend; at most one non-constant argument (OneVariable)",
			Render: map[string]Rendering{"": {Form: FormConcatSkipNull, Name: "CONCAT"}},
			Post: &Post{
				Type: postAllText,
				Eval: func(a []ir.Value, _ PostDialect) ir.Value {
					var b strings.Builder
					for _, v := range a {
						b.WriteString(v.Str) // NULL reads as ''
					}
					return ir.String(b.String())
				},
			},
			Image: concatImage,
		},
		{
			// PostgreSQL's || (and MySQL's CONCAT, which is NULL when an
			// argument is): the name is PostgreSQL's function behind ||.
			Name: "textcat", MinArgs: 2, MaxArgs: 2, Strict: true, OneVariable: true,
			Rule:   allText,
			Total:  "text in, text out; at most one non-constant argument (OneVariable)",
			Render: map[string]Rendering{"": {Form: FormInfixConcat}, "mysql": {Name: "CONCAT"}},
			Post: &Post{
				Type: postAllText,
				Eval: func(a []ir.Value, _ PostDialect) ir.Value { return ir.String(a[0].Str + a[1].Str) },
			},
			Image: concatImage, // strict: NULL arguments never reach it
		},
		{
			Name: "replace", MinArgs: 3, MaxArgs: 3, Strict: true, NoGrowth: true, Searches: true,
			Rule: func(c string, args []Info) (Info, error) {
				for _, a := range args {
					if a.Type != Text {
						return Info{}, noFunction(c, args)
					}
				}
				return Info{Type: Text}, nil
			},
			Total:  "text in, text out, never longer than the first argument (NoGrowth); an empty pattern replaces nothing on every backend",
			Render: call("REPLACE"),
			Post: &Post{
				Type: postAllText,
				Eval: func(a []ir.Value, _ PostDialect) ir.Value {
					if a[1].Str == "" {
						return a[0] // Go's ReplaceAll would insert between every rune
					}
					return ir.String(strings.ReplaceAll(a[0].Str, a[1].Str, a[2].Str))
				},
			},
			Image: replaceImage,
		},
		{
			Name: "nullif", MinArgs: 2, MaxArgs: 2, Unify: true,
			Rule: func(_ string, args []Info) (Info, error) { return args[0], nil },
			Total: "NULL or its first argument, which is total; the equality of two values of one type cannot fail " +
				"(an integer and a real compare, and the result is real, as PostgreSQL's NULLIF promotes it)",
			Render: call("NULLIF"),
			Post: &Post{
				Type: func(_ string, ts []Type, _ []ir.Expr, _ PostDialect) (Type, error) { return firstType(ts), nil },
				Eval: func(a []ir.Value, _ PostDialect) ir.Value {
					if !a[0].IsNull() && !a[1].IsNull() && ir.CompareValues(a[0], a[1]) == 0 {
						return ir.Null()
					}
					return a[0]
				},
			},
			Image: nullifImage,
		},
		{
			Name: "greatest", MinArgs: 1, MaxArgs: -1, Unify: true,
			Rule:      hullRule,
			Total:     "a choice among its arguments, which are total; NULL arguments are skipped on every backend (see SkipsNull)",
			Render:    map[string]Rendering{"": {Name: "GREATEST"}, "sqlite": {Name: "MAX"}},
			SkipsNull: true,
			Post:      postChoose(1),
			Image:     extremeImage(1),
		},
		{
			Name: "least", MinArgs: 1, MaxArgs: -1, Unify: true,
			Rule:      hullRule,
			Total:     "a choice among its arguments, which are total; NULL arguments are skipped on every backend (see SkipsNull)",
			Render:    map[string]Rendering{"": {Name: "LEAST"}, "sqlite": {Name: "MIN"}},
			SkipsNull: true,
			Post:      postChoose(-1),
			Image:     extremeImage(-1),
		},
		{
			// WritesArgTwice: MySQL's quarter and week, SQLite's quarter.
			Name: "date_trunc", MinArgs: 2, MaxArgs: 2, Strict: true, ConstArgs: []int{0}, WritesArgTwice: true,
			Rule:       dateTruncRule,
			RangeImage: dateRangeImage("date_trunc", 0, 1),
			Total:      "the unit is a constant of TruncUnits; the argument is a clamped date or time, and the truncated range is checked to lie within 1000-01-01..9999-12-31 (MySQL's DATE and DATETIME)",
			Render:     map[string]Rendering{"": {Form: FormDateTrunc}},
		},
		{
			// The epoch writes its argument four times (the day's seconds
			// plus the time of day's) yet is not WritesArgTwice: it
			// returns a number, never nested in itself, so it multiplies
			// the statement once (and extract(month FROM date_trunc(...))
			// stays allowed).
			Name: "extract", MinArgs: 2, MaxArgs: 2, Strict: true, ConstArgs: []int{0},
			Rule:       extractRule,
			RangeImage: dateRangeImage("extract", 0, 1),
			Total:      "the field is a constant of ExtractFields, defined for every date and time (hour and minute only for timestamps), the result a small integer; or epoch, whole seconds of a range checked to lie within 1000-01-01..9999-12-31",
			Render:     map[string]Rendering{"": {Form: FormExtract}},
		},
		{
			// MySQL's UNIX_TIMESTAMP(t) (one argument); written like
			// extract's epoch (see there).
			Name: "unix_timestamp", MinArgs: 1, MaxArgs: 1, Strict: true,
			Rule:       unixTimestampRule,
			RangeImage: unixTimestampRangeImage,
			Total:      "the argument is a clamped date or time whose range is checked to lie within 1970-01-01..2038-01-19 03:14:07 UTC, where MySQL's UNIX_TIMESTAMP counts; the result is an integer below 2^31",
			Render:     map[string]Rendering{"": {Form: FormUnixTimestamp}},
		},
		{
			// t AT TIME ZONE 'UTC' (PostgreSQL), CONVERT_TZ(t, 'UTC',
			// 'UTC') (MySQL): the parsers read only UTC's names. In a UTC
			// session it is the same instant with the other type: a
			// timestamp read as UTC is a timestamptz, a timestamptz's UTC
			// wall clock is a timestamp.
			Name: "at_utc", MinArgs: 1, MaxArgs: 1, Strict: true,
			Rule:   atUTCRule,
			Total:  "a change of type only: the same microseconds since 1970 in UTC, within the clamped argument's range",
			Render: map[string]Rendering{"": {Form: FormAtUTC}},
			Image: func(args []ir.Value) (ir.Value, bool) {
				k, ok := atUTCKind(args[0].Kind)
				return ir.Value{Kind: k, Int: args[0].Int}, ok
			},
		},
		{
			// t + INTERVAL 'n unit' (PostgreSQL), t + INTERVAL n UNIT and
			// DATE_ADD/DATE_SUB (MySQL): date_add(t, n, 'unit').
			// WritesArgTwice: SQLite keeps a timestamp's fraction by
			// appending it to datetime()'s whole seconds.
			Name: "date_add", MinArgs: 3, MaxArgs: 3, Strict: true, ConstArgs: []int{2}, WritesArgTwice: true,
			Rule: dateAddRule,
			// A key's values shift with it: the weeks from Sunday of
			// date_trunc('week', t + INTERVAL '1 day') - INTERVAL '1 day'
			// are date_trunc's weeks, a day back.
			Image: func(args []ir.Value) (ir.Value, bool) {
				n, u := args[1], args[2]
				if n.Kind != ir.KindInt || u.Kind != ir.KindString {
					return ir.Value{}, false
				}
				return AddInterval(args[0], n.Int, strings.ToLower(u.Str))
			},
			Total:  "n and the unit are constants; the result range is computed exactly from the clamped argument's and checked to lie within 1000-01-01..9999-12-31, so no backend's date arithmetic can overflow",
			Render: map[string]Rendering{"": {Form: FormDateAdd}},
		},
		{
			// to_char (PostgreSQL) and date_format (MySQL), with a format
			// of CharFormats in its PostgreSQL spelling.
			Name: "to_char", MinArgs: 2, MaxArgs: 2, Strict: true, ConstArgs: []int{1},
			Rule:       toCharRule,
			RangeImage: dateRangeImage("to_char", 1, 0),
			Post:       postToChar,
			Total:      "the format is a constant of CharFormats, digits only, defined for every date and time of four-digit years (checked on the argument's range)",
			Render:     map[string]Rendering{"": {Form: FormToChar}},
		},
		{
			Name: "coalesce", MinArgs: 1, MaxArgs: -1, Unify: true,
			Rule:   coalesceRule,
			Total:  "a choice among its arguments, which are total; one type (mixed integer and real arguments are real)",
			Render: call("COALESCE"),
			Post:   postChoose(0),
			Image:  coalesceImage,
		},
		{
			// PostgreSQL's width_bucket(operand, low, high, count) over
			// integers, in exact arithmetic (PostgreSQL's own computes in
			// doubles, whose rounding could put a value on a bucket
			// boundary into the next bucket): rendered as a CASE on every
			// backend, so all agree with the Image.
			Name: "width_bucket", MinArgs: 4, MaxArgs: 4, Strict: true, WritesArgTwice: true,
			Rule:   widthBucketRule,
			Total:  "integer arithmetic whose every intermediate value is range-checked; the divisor high - low is a positive constant",
			Render: map[string]Rendering{"": {Form: FormWidthBucket}},
			Image:  widthBucketImage,
		},
	}
	fs = append(fs, postMath()...)
	m := make(map[string]*Func, len(fs))
	for _, f := range fs {
		m[f.Name] = f
	}
	return m
}()

// allText accepts text (and NULL) arguments.
func allText(c string, args []Info) (Info, error) {
	for _, a := range args {
		if a.Type != Text && a.Type != Null {
			return Info{}, noFunction(c, args)
		}
	}
	return Info{Type: Text}, nil
}

// positionsRule is the rule of substr, left and right: a text, then
// integers whose whole ranges lie in [min_i, MaxInt32].
func positionsRule(mins ...int64) func(string, []Info) (Info, error) {
	return func(c string, args []Info) (Info, error) {
		if args[0].Type != Text {
			return Info{}, noFunction(c, args)
		}
		for i, a := range args[1:] {
			if a.Type != Integer || !a.Bounded {
				return Info{}, noFunction(c, args)
			}
			if a.Int.Lo.Cmp(big.NewInt(mins[i])) < 0 || a.Int.Hi.Cmp(big.NewInt(math.MaxInt32)) > 0 {
				return Info{}, sqlerr.New(sqlerr.InvalidParameterValue,
					"argument %d of %s can be %s, outside [%d, %d]: backends fail or disagree there, and the query would do so only for some rows: %s",
					i+2, fnName(c), a, mins[i], math.MaxInt32, c).
					WithHint("use a constant (or a bounded expression) of at least %d", mins[i])
			}
		}
		return Info{Type: Text}, nil
	}
}

func textRule(c string, args []Info) (Info, error) {
	if args[0].Type != Text {
		return Info{}, noFunction(c, args)
	}
	return Info{Type: Text}, nil
}

// hullRule is the range of a choice among the arguments (unified to one
// type, NULLs dropped) when any of them may be the one chosen: the hull.
// The analysis tightens it for greatest and least with the literal
// arguments, which are never NULL and so always take part.
func hullRule(c string, args []Info) (Info, error) { return coalesceRule(c, args) }

// coalesceRule: the arguments were unified to one type (NULLs dropped).
func coalesceRule(_ string, args []Info) (Info, error) {
	out := args[0]
	for _, a := range args[1:] {
		switch {
		case out.Type == Integer && out.Bounded && a.Bounded:
			out.Int = hullInt(out.Int, a.Int)
		case out.Type == Real && out.Bounded && a.Bounded:
			out.Real = hullReal(out.Real, a.Real)
		}
		out.Bounded = out.Bounded && a.Bounded
	}
	return out, nil
}

func noFunction(c string, args []Info) error {
	types := ""
	for i, a := range args {
		if i > 0 {
			types += ", "
		}
		types += a.Type.String()
	}
	return sqlerr.New(sqlerr.UndefinedFunction, "function %s does not accept (%s): %s", fnName(c), types, c).
		WithHint("text functions (lower, upper, trim, length, replace) take text, substr, left and right a text and integers; abs, floor, ceil and round take numbers")
}

func fnName(c string) string {
	for i := 0; i < len(c); i++ {
		if c[i] == '(' {
			return c[:i]
		}
	}
	return c
}

func itoa(i int) string { return big.NewInt(int64(i)).String() }

// widthBucketRule: an integer operand with a range, and constant integer
// low < high and count ≥ 1 (PostgreSQL refuses the others with an error,
// which here comes at plan time). (x − low)·count must fit 64 bits for
// every x of the range, whichever CASE arm the backend evaluates.
func widthBucketRule(c string, args []Info) (Info, error) {
	for _, a := range args {
		if a.Type != Integer || !a.Bounded {
			return Info{}, sqlerr.New(sqlerr.UndefinedFunction, "width_bucket takes integers here: %s", c).
				WithHint("cast a real operand to an integer first, e.g. width_bucket(CAST(floor(x) AS bigint), 0, 100, 10)")
		}
	}
	konst := func(a Info) (int64, bool) { return a.Int.Lo.Int64(), a.Int.Lo.Cmp(a.Int.Hi) == 0 }
	lo, ok1 := konst(args[1])
	hi, ok2 := konst(args[2])
	n, ok3 := konst(args[3])
	if !ok1 || !ok2 || !ok3 || lo >= hi || n < 1 || n >= math.MaxInt32 {
		return Info{}, sqlerr.New(sqlerr.InvalidParameterValue, "width_bucket needs constant bounds low < high and a constant count between 1 and 2^31 - 2: %s", c).
			WithHint("write the bounds and the count as literals")
	}
	x := args[0].Int
	d := subInt(x, intPoint(lo))
	prod := mulInt(d, intPoint(n))
	for _, r := range []IntRange{d, prod, subInt(intPoint(hi), intPoint(lo))} {
		if !r.fits() {
			return Info{}, sqlerr.New(sqlerr.NumericValueOutOfRange, "%s computes (x - low) * count beyond 64 bits for some values of its operand (%s)", c, args[0]).
				WithHint("narrow the operand's bounds or the bucket count")
		}
	}
	var b [2]int64
	for i, v := range []*big.Int{x.Lo, x.Hi} {
		clamped := v.Int64()
		switch {
		case v.Cmp(big.NewInt(lo)) < 0:
			clamped = lo - 1
		case v.Cmp(big.NewInt(hi)) >= 0:
			clamped = hi
		}
		b[i], _ = widthBucket(clamped, lo, hi, n)
	}
	return intInfo(IntRange{big.NewInt(b[0]), big.NewInt(b[1])}), nil
}

// wholeNumbersBetween is the RangeImage of floor and ceil (f) on a real
// range [lo, hi]: f is monotone, so every value is a whole number from
// f(lo) to f(hi), as reals.
func wholeNumbersBetween(f func(float64) float64) func([]ir.Expr, []Info) []ir.Value {
	return func(_ []ir.Expr, infos []Info) []ir.Value {
		a := infos[0]
		if a.Type != Real || !a.Bounded {
			return nil
		}
		lo, hi := f(a.Real.Lo), f(a.Real.Hi)
		if hi-lo >= MaxDomain || math.Abs(lo) > 1<<52 || math.Abs(hi) > 1<<52 {
			return nil
		}
		var out []ir.Value
		for v := lo; v <= hi; v++ {
			out = append(out, ir.Float(v))
		}
		return out
	}
}
