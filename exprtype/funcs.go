package exprtype

import (
	"math"
	"math/big"
	"slices"

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
	textFn := func(name string, render map[string]Rendering) *Func {
		return &Func{
			Name: name, MinArgs: 1, MaxArgs: 1, Strict: true,
			Rule:   textRule,
			Total:  "defined for every text value; text columns are never clamped",
			Render: render,
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
			Total:  "the identity on whole numbers (lowered away); on doubles within ±MaxReal the result is a whole double at most 1 farther from zero",
			Render: call(sql),
		}
	}
	fs := []*Func{
		textFn("lower", call("LOWER")),
		textFn("upper", call("UPPER")),
		textFn("trim", map[string]Rendering{"": {Name: "TRIM"}, "postgres": {Name: "BTRIM"}}),
		textFn("ltrim", call("LTRIM")),
		textFn("rtrim", call("RTRIM")),
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
		},
		{
			Name: "substr", MinArgs: 2, MaxArgs: 3, Strict: true,
			Rule: positionsRule(1, 0),
			Total: "the start is at least 1 and the length at least 0 for every value of their ranges (PostgreSQL fails on a negative length; " +
				"backends disagree on a start below 1), both within int4",
			Render: map[string]Rendering{"": {Name: "SUBSTR"}, "postgres": {Name: "SUBSTR", Int4Args: true}, "mysql": {Name: "SUBSTRING"}},
		},
		{
			Name: "left", MinArgs: 2, MaxArgs: 2, Strict: true,
			Rule:   positionsRule(0),
			Total:  "the count is at least 0 for every value of its range (a negative count means different things per backend), within int4",
			Render: map[string]Rendering{"": {Name: "LEFT"}, "postgres": {Name: "LEFT", Int4Args: true}, "sqlite": {Form: FormLeft}},
		},
		{
			Name: "right", MinArgs: 2, MaxArgs: 2, Strict: true,
			Rule:   positionsRule(1),
			Total:  "the count is at least 1 for every value of its range (SQLite's SUBSTR(s, -0) would be the whole text), within int4",
			Render: map[string]Rendering{"": {Name: "RIGHT"}, "postgres": {Name: "RIGHT", Int4Args: true}, "sqlite": {Form: FormRight}},
		},
		{
			Name: "concat", MinArgs: 1, MaxArgs: -1, OneVariable: true,
			Rule:   allText,
			Total:  "text in, text out; NULLs are skipped (PostgreSQL's concat) on every backend; at most one non-constant argument (OneVariable)",
			Render: map[string]Rendering{"": {Form: FormConcatSkipNull, Name: "CONCAT"}},
		},
		{
			// PostgreSQL's || (and MySQL's CONCAT, which is NULL when an
			// argument is): the name is PostgreSQL's function behind ||.
			Name: "textcat", MinArgs: 2, MaxArgs: 2, Strict: true, OneVariable: true,
			Rule:   allText,
			Total:  "text in, text out; at most one non-constant argument (OneVariable)",
			Render: map[string]Rendering{"": {Form: FormInfixConcat}, "mysql": {Name: "CONCAT"}},
		},
		{
			Name: "replace", MinArgs: 3, MaxArgs: 3, Strict: true, NoGrowth: true,
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
		},
		{
			Name: "nullif", MinArgs: 2, MaxArgs: 2, Unify: true,
			Rule: func(_ string, args []Info) (Info, error) { return args[0], nil },
			Total: "NULL or its first argument, which is total; the equality of two values of one type cannot fail " +
				"(an integer and a real compare, and the result is real, as PostgreSQL's NULLIF promotes it)",
			Render: call("NULLIF"),
		},
		{
			Name: "greatest", MinArgs: 1, MaxArgs: -1, Unify: true,
			Rule:      hullRule,
			Total:     "a choice among its arguments, which are total; NULL arguments are skipped on every backend (see SkipsNull)",
			Render:    map[string]Rendering{"": {Name: "GREATEST"}, "sqlite": {Name: "MAX"}},
			SkipsNull: true,
		},
		{
			Name: "least", MinArgs: 1, MaxArgs: -1, Unify: true,
			Rule:      hullRule,
			Total:     "a choice among its arguments, which are total; NULL arguments are skipped on every backend (see SkipsNull)",
			Render:    map[string]Rendering{"": {Name: "LEAST"}, "sqlite": {Name: "MIN"}},
			SkipsNull: true,
		},
		{
			// WritesArgTwice: MySQL's quarter and week, SQLite's quarter.
			Name: "date_trunc", MinArgs: 2, MaxArgs: 2, Strict: true, ConstArgs: []int{0}, WritesArgTwice: true,
			Rule:   dateTruncRule,
			Total:  "the unit is a constant of TruncUnits; the argument is a clamped date or time, and the truncated range is checked to lie within 1000-01-01..9999-12-31 (MySQL's DATE and DATETIME)",
			Render: map[string]Rendering{"": {Form: FormDateTrunc}},
		},
		{
			Name: "extract", MinArgs: 2, MaxArgs: 2, Strict: true, ConstArgs: []int{0},
			Rule:   extractRule,
			Total:  "the field is a constant of ExtractFields, defined for every date and time (hour and minute only for timestamps); the result is a small integer",
			Render: map[string]Rendering{"": {Form: FormExtract}},
		},
		{
			// t + INTERVAL 'n unit' (PostgreSQL), t + INTERVAL n UNIT and
			// DATE_ADD/DATE_SUB (MySQL): date_add(t, n, 'unit').
			// WritesArgTwice: SQLite keeps a timestamp's fraction by
			// appending it to datetime()'s whole seconds.
			Name: "date_add", MinArgs: 3, MaxArgs: 3, Strict: true, ConstArgs: []int{2}, WritesArgTwice: true,
			Rule:   dateAddRule,
			Total:  "n and the unit are constants; the result range is computed exactly from the clamped argument's and checked to lie within 1000-01-01..9999-12-31, so no backend's date arithmetic can overflow",
			Render: map[string]Rendering{"": {Form: FormDateAdd}},
		},
		{
			// to_char (PostgreSQL) and date_format (MySQL), with a format
			// of CharFormats in its PostgreSQL spelling.
			Name: "to_char", MinArgs: 2, MaxArgs: 2, Strict: true, ConstArgs: []int{1},
			Rule:   toCharRule,
			Total:  "the format is a constant of CharFormats, digits only, defined for every date and time of four-digit years (checked on the argument's range)",
			Render: map[string]Rendering{"": {Form: FormToChar}},
		},
		{
			Name: "coalesce", MinArgs: 1, MaxArgs: -1, Unify: true,
			Rule:   coalesceRule,
			Total:  "a choice among its arguments, which are total; one type (mixed integer and real arguments are real)",
			Render: call("COALESCE"),
		},
	}
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
