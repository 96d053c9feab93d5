package exprtype_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// testColumns: age integer [17, 90], salary integer [0, 10^7], score real
// [-1000, 1000], huge integer [0, 2^53], raw integer without bounds, note
// text, flag boolean, pub (an undeclared public column).
func testColumns(c ir.ColumnRef) (exprtype.Column, error) {
	ref := ir.ColumnRef{Qualifier: "t0", Name: c.Name}
	switch strings.ToLower(c.Name) {
	case "age":
		return exprtype.Column{Ref: ref, Type: exprtype.Integer, HasBounds: true, Lo: ir.Int(17), Hi: ir.Int(90)}, nil
	case "salary":
		return exprtype.Column{Ref: ref, Type: exprtype.Integer, HasBounds: true, Lo: ir.Int(0), Hi: ir.Int(10_000_000)}, nil
	case "huge":
		return exprtype.Column{Ref: ref, Type: exprtype.Integer, HasBounds: true, Lo: ir.Int(0), Hi: ir.Int(1 << 53)}, nil
	case "score":
		return exprtype.Column{Ref: ref, Type: exprtype.Real, HasBounds: true, Lo: ir.Float(-1000), Hi: ir.Float(1000)}, nil
	case "raw":
		return exprtype.Column{Ref: ref, Type: exprtype.Integer, Declare: "datasets.d.tables.t.columns.raw"}, nil
	case "note":
		return exprtype.Column{Ref: ref, Type: exprtype.Text}, nil
	case "flag":
		return exprtype.Column{Ref: ref, Type: exprtype.Boolean}, nil
	case "pub":
		return exprtype.Column{Ref: ref, Type: exprtype.Unknown}, nil
	case "day": // date in [2010-01-01, 2011-01-01]
		return exprtype.Column{Ref: ref, Type: exprtype.Date, HasBounds: true, Lo: ir.Date(14610), Hi: ir.Date(14975)}, nil
	case "ts": // timestamp in [2010-01-01, 2011-01-01 00:00]
		return exprtype.Column{Ref: ref, Type: exprtype.Timestamp, HasBounds: true,
			Lo: ir.Timestamp(14610 * ir.MicrosPerDay), Hi: ir.Timestamp(14975 * ir.MicrosPerDay)}, nil
	case "tz": // timestamptz without bounds
		return exprtype.Column{Ref: ref, Type: exprtype.TimestampTZ, Declare: "datasets.d.tables.t.columns.tz"}, nil
	}
	return exprtype.Column{}, sqlerr.New(sqlerr.UndefinedColumn, "column %s does not exist", c.Name)
}

func where(t *testing.T, d parser.Dialect, w string) ir.Expr {
	t.Helper()
	stmts, err := parser.Parse(d, "SELECT COUNT(*) FROM t WHERE "+w)
	if err != nil {
		t.Fatalf("%s: %v", w, err)
	}
	if stmts[0].Query == nil {
		t.Fatalf("%s: not an aggregate: %s", w, stmts[0].NotAggregate)
	}
	return stmts[0].Query.Where
}

// TestPredicate: legitimate predicates are accepted; the attacks of the
// totality issue, type errors and malformed literals are refused with
// the SQLSTATE a client expects.
func TestPredicate(t *testing.T) {
	tests := []struct {
		where string
		want  *sqlerr.Code // nil: accepted
		msg   string       // a substring of the message
	}{
		// Legitimate queries.
		{"age + 1 > 30", nil, ""},
		{"abs(salary - 50000) < 1000", nil, ""},
		{"age = '30'", nil, ""},
		{"age IN ('30', 31)", nil, ""},
		{"score * 0.9 > 100", nil, ""},
		{"(score - 10) * 0.5 > 1", nil, ""},
		{"score * score * score > 1", nil, ""},
		{"raw > 10 AND raw < 9223372036854775807", nil, ""},
		{"lower(note) LIKE 'a%' AND length(note) * 1000 > 3", nil, ""},
		{"coalesce(raw, 0) > 5", nil, ""},
		{"pub = 5 OR pub = 'x'", nil, ""},
		{"flag AND flag = 't' AND NOT flag = FALSE", nil, ""},
		{"floor(age) + ceil(age) + round(age) > 3", nil, ""},
		{"round(score) > 2 AND floor(score) < ceil(score)", nil, ""},
		{"NULL + 1 > age AND abs(NULL) IS NULL", nil, ""},
		{"huge * 1000 > 0", nil, ""},
		{"age * 100000000 > 0", nil, ""},

		// Overflow probes.
		{"abs(age - 90 - 9223372036854775807 - 1) > 0", &sqlerr.NumericValueOutOfRange, "beyond -9223372036854775808"},
		{"note = 'n1234' AND salary + (9223372036854775807 - 54321) > 0", &sqlerr.NumericValueOutOfRange, "9223372036854775807"},
		{"salary + '9223372036854775000' > 0", &sqlerr.NumericValueOutOfRange, ""},
		{"huge * huge > 0", &sqlerr.NumericValueOutOfRange, ""},
		{"-(age - 9223372036854775807 - 18) > 0", &sqlerr.NumericValueOutOfRange, ""},
		// A MySQL LONGTEXT holds 2^32 characters: the product can reach 2^64.
		{"length(note) * length(note) > 3", &sqlerr.NumericValueOutOfRange, ""},
		{"9223372036854775807 + 1 > age", &sqlerr.NumericValueOutOfRange, ""},
		{"abs(age * 0 - 9223372036854775807 - 1) > 0", &sqlerr.NumericValueOutOfRange, ""},
		{"score * 1e300 * 1e10 > 0", &sqlerr.NumericValueOutOfRange, "1e+300"},
		{"score * 1e-300 > 0", &sqlerr.NumericValueOutOfRange, "underflow"},
		{"score * score * score * score * score > 0", &sqlerr.NumericValueOutOfRange, "underflow"},

		// Columns that cannot be computed with.
		{"raw + 1 > 10", &sqlerr.FeatureNotSupported, "no declared bounds"},
		{"abs(raw) > 10", &sqlerr.FeatureNotSupported, "no declared bounds"},
		{"pub + 1 > 10", &sqlerr.FeatureNotSupported, "no declared type"},

		// LIKE.
		{`note LIKE 'abc\'`, &sqlerr.InvalidParameterValue, "escape character"},
		{"note LIKE pub", &sqlerr.FeatureNotSupported, "constant text"},
		{"'abc' LIKE note", &sqlerr.FeatureNotSupported, "constant text"},
		{"age LIKE '1%'", &sqlerr.UndefinedFunction, "LIKE"},

		// Types.
		{"note < 2", &sqlerr.UndefinedFunction, "text < bigint"},
		{"flag = 1", &sqlerr.UndefinedFunction, "boolean = bigint"},
		{"lower(age) = 'x'", &sqlerr.UndefinedFunction, "function lower"},
		{"length(age) > 1", &sqlerr.UndefinedFunction, "function length"},
		{"coalesce(age, note) = 1", &sqlerr.DatatypeMismatch, "COALESCE types"},
		{"age IN (1, 'x')", &sqlerr.InvalidTextRepresentation, "bigint"},
		{"age = 'thirty'", &sqlerr.InvalidTextRepresentation, "bigint"},
		{"age = '1.5'", &sqlerr.InvalidTextRepresentation, "bigint"},
		{"age = '99999999999999999999'", &sqlerr.NumericValueOutOfRange, "out of range"},
		{"flag = 'maybe'", &sqlerr.InvalidTextRepresentation, "boolean"},
		{"note + 1 > 0", &sqlerr.UndefinedFunction, "operator does not exist"},
		{"age", &sqlerr.DatatypeMismatch, "argument of WHERE must be type boolean"},
		{"NOT age", &sqlerr.DatatypeMismatch, "argument of NOT"},
		{"age > 1 AND salary", &sqlerr.DatatypeMismatch, "argument of AND"},
		{"'5' + '6' > 1", &sqlerr.UndefinedFunction, ""},
		{"score = 'NaN'", &sqlerr.InvalidParameterValue, "NaN"},

		// CASE.
		{"CASE WHEN age > 30 THEN salary ELSE 0 END > 100", nil, ""},
		{"CASE age WHEN 30 THEN 'a' WHEN 31 THEN note END = 'a'", nil, ""},
		{"CASE WHEN flag THEN score WHEN 't' THEN 1 END * 2 > 0", nil, ""},
		{"CASE WHEN age > 1 THEN age > 2 ELSE flag END", nil, ""},
		{"CASE WHEN pub = 1 THEN pub END = 2", nil, ""},
		{"CASE WHEN age > 1 THEN NULL END IS NULL", nil, ""},
		{"CASE WHEN age > 1 THEN age ELSE note END = 1", &sqlerr.DatatypeMismatch, "CASE types"},
		{"CASE WHEN age THEN 1 END = 1", &sqlerr.DatatypeMismatch, "argument of CASE/WHEN"},
		{"CASE WHEN age > 1 THEN 'a' ELSE 'b' END = 1", &sqlerr.UndefinedFunction, "text = bigint"},
		// Every arm is checked over the whole range, whatever guards it:
		// the backend may fold or evaluate an arm the condition excludes.
		{"CASE WHEN huge < 10 THEN huge * huge ELSE 0 END > 0", &sqlerr.NumericValueOutOfRange, ""},
		{"CASE WHEN age > 1 THEN raw + 1 END > 0", &sqlerr.FeatureNotSupported, "no declared bounds"},
		{"CASE WHEN age > 1 THEN age + 1 ELSE pub END > 0", nil, ""},
		{"CASE WHEN age > 1 THEN age ELSE pub END + 1 > 0", &sqlerr.FeatureNotSupported, "no declared type"},
		{"CASE WHEN age > 1 THEN 9223372036854775807 ELSE 0 END + age > 0", &sqlerr.NumericValueOutOfRange, ""},

		// NULLIF, GREATEST, LEAST.
		{"nullif(age, 30) + 1 > 5 AND nullif(note, '') IS NULL AND nullif('7', age) > 1", nil, ""},
		{"nullif(age, note) IS NULL", &sqlerr.UndefinedFunction, "bigint = text"},
		{"greatest(age, salary, 3) * 2 > 5 AND least(score, 1, NULL) < 0", nil, ""},
		{"greatest(note, 'a') = 'b' AND least(raw, 5) > 1", nil, ""},
		{"greatest(age, note) = 1", &sqlerr.DatatypeMismatch, "GREATEST types"},
		{"least(raw, 5) + 1 > 1", &sqlerr.FeatureNotSupported, "no declared bounds"},
		{"greatest(huge, 1) * greatest(huge, 2) > 0", &sqlerr.NumericValueOutOfRange, ""},
		// Without a literal, MySQL and SQLite write each argument in the
		// COALESCE of every other: such calls may not nest.
		{"greatest(least(age, salary), score) > 1", &sqlerr.FeatureNotSupported, "several times"},
		{"greatest(least(age, 10), 0) + greatest(age, salary) > 1", nil, ""},

		// Division and modulo: a zero divisor gives NULL.
		{"salary / age > 1000 AND salary % (age - 30) = 0 AND mod(age, 7) = 1", nil, ""},
		{"score / score > 0.5 AND score / (age - 30) < 1 AND age / 0 IS NULL", nil, ""},
		{"(age - 9223372036854775807 - 18) / (age - 18) > 0", &sqlerr.NumericValueOutOfRange, "beyond 9223372036854775807"},
		{"(age - 9223372036854775807 - 18) % (age - 18) > 0", &sqlerr.NumericValueOutOfRange, "overflows"},
		{"(age - 9223372036854775807 - 18) / (age - 16) > 0", nil, ""}, // divisor -1 cannot occur
		{"score / 1e-300 > 0", &sqlerr.NumericValueOutOfRange, "beyond"},
		{"score / 1e300 > 0", &sqlerr.NumericValueOutOfRange, "underflow"},
		{"score % 2 > 0", &sqlerr.UndefinedFunction, "%"},
		{"raw / 2 > 0", &sqlerr.FeatureNotSupported, "no declared bounds"},
		{"note / 2 > 0", &sqlerr.UndefinedFunction, "operator does not exist"},

		// substr, left, right, replace.
		{"substr(note, 2, 3) = 'a' AND substr(note, age) = 'b' AND left(note, 2) = 'c' AND right(note, age - 16) = 'd'", nil, ""},
		{"replace(note, 'ab', 'x') = 'y' AND replace(note, '', 'long text') = 'z' AND upper(replace(note, 'é', 'e')) = 'E'", nil, ""},
		{"substr(note, 1, -1) = 'a'", &sqlerr.InvalidParameterValue, "outside [0, 2147483647]"},
		{"substr(note, 0, 2) = 'a'", &sqlerr.InvalidParameterValue, "outside [1,"},
		{"substr(note, age - 20) = 'a'", &sqlerr.InvalidParameterValue, "outside [1,"},
		{"substr(note, 1, huge) = 'a'", &sqlerr.InvalidParameterValue, "2147483647"},
		{"left(note, -2) = 'a'", &sqlerr.InvalidParameterValue, ""},
		{"right(note, 0) = 'a'", &sqlerr.InvalidParameterValue, ""},
		{"substr(note, raw) = 'a'", &sqlerr.FeatureNotSupported, "no declared bounds"},
		{"substr(age, 1) = 'a'", &sqlerr.UndefinedFunction, "function substr"},
		{"substr(note, '2') = 'a'", &sqlerr.UndefinedFunction, "function substr"},
		{"replace(note, 'a', 'bb') = 'x'", &sqlerr.FeatureNotSupported, "longer than its pattern"},
		{"replace(note, 'e', 'é') = 'x'", &sqlerr.FeatureNotSupported, "longer than its pattern"},
		{"replace(note, note, '') = 'x'", &sqlerr.FeatureNotSupported, "constant texts"},
		{"replace(note, 'a', NULL) IS NULL", nil, ""},

		// Concatenation: one non-constant text at most.
		{"note || 'x' = 'y' AND 'a' || note || 'b' = 'c' AND concat(note, NULL, '!') = 'd' AND concat(NULL) = ''", nil, ""},
		{"concat('a', substr(note, 2), 'b') = 'x' AND CAST(age AS text) || '%' = '5%'", nil, ""},
		{"note || note = 'x'", &sqlerr.FeatureNotSupported, "more than one non-constant"},
		{"concat(note, '-', lower(note)) = 'x'", &sqlerr.FeatureNotSupported, "more than one non-constant"},
		{"note || 1 = 'x'", &sqlerr.UndefinedFunction, "function textcat"},

		// CAST.
		{"CAST(age AS text) = '30' AND age::int = 30 AND age::bigint + 1 > 5 AND age::float8 / 3 > 1", nil, ""},
		{"CAST(round(score) AS bigint) > 3 AND floor(score)::int < 5 AND score::double precision > 1", nil, ""},
		{"CAST(note AS text) = 'a' AND CAST(raw AS double precision) > 1", nil, ""},
		{"huge::int > 0", &sqlerr.NumericValueOutOfRange, "32-bit"},
		{"age > '30'::int AND note = 5::text AND score < '2.5'::float8 AND note = 'x'::text", nil, ""},
		{"age > '3000000000'::int", &sqlerr.NumericValueOutOfRange, "32-bit"},
		{"age > 'x'::bigint", &sqlerr.InvalidTextRepresentation, "bigint"},
		{"note = 2.5::text", &sqlerr.FeatureNotSupported, "spell doubles"},
		{"score::bigint > 0", &sqlerr.FeatureNotSupported, "round first"},
		{"CAST(score AS text) = '1'", &sqlerr.FeatureNotSupported, "spell doubles"},
		{"CAST(note AS bigint) > 0", &sqlerr.FeatureNotSupported, "not a number"},
		{"CAST(flag AS text) = 'true'", &sqlerr.FeatureNotSupported, "booleans"},
		{"CAST(pub AS text) = 'x'", &sqlerr.FeatureNotSupported, "no declared type"},
		{"CAST(raw AS bigint) > 1", &sqlerr.FeatureNotSupported, "no declared bounds"},
		{"CAST(raw AS text) = '1'", &sqlerr.FeatureNotSupported, "no declared bounds"},
		{"CAST(round(score * 1e290) AS bigint) > 1", &sqlerr.NumericValueOutOfRange, "beyond"},

		// round writes its argument twice on PostgreSQL and MySQL.
		{"round(score * 0.5 + round(score * 0.5)) > 1", nil, ""},
		{"round(score * 0.5 + round(score * 0.5 + round(score * 0.5 + round(score * 0.5)))) > 1", &sqlerr.FeatureNotSupported, "doubles the statement"},
		{"round(round(score)) + round(score * 0.5) > 1", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.where, func(t *testing.T) {
			_, err := exprtype.Predicate(where(t, parser.Postgres, tc.where), testColumns)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var se *sqlerr.Error
			if !errors.As(err, &se) || se.Code != *tc.want {
				t.Fatalf("got %v, want %s", err, tc.want.SQLState)
			}
			if !strings.Contains(se.Error(), tc.msg) {
				t.Fatalf("message %q does not mention %q", se.Error(), tc.msg)
			}
		})
	}
}

// TestLowering: columns are clamped exactly where they are computed with,
// quoted numbers become numbers, NULL propagates, integral functions of
// integers vanish.
func TestLowering(t *testing.T) {
	tests := []struct{ where, want string }{
		{"age > 30", `("t0"."age" > 30)`},
		{"age + 1 > 30", `((clamp("t0"."age", 17, 90) + 1) > 30)`},
		{"age = '30'", `("t0"."age" = 30)`},
		{"score * 2 < age", `((clamp("t0"."score", -1000::real, 1000::real) * 2) < "t0"."age")`},
		{"abs(NULL + age) IS NULL", `(NULL IS NULL)`},
		{"floor(age + 1) > 3", `((clamp("t0"."age", 17, 90) + 1) > 3)`},
		{"coalesce(raw, 0) > 5", `(coalesce("t0"."raw", 0) > 5)`},
		{"coalesce(age) + 1 > 5", `((clamp("t0"."age", 17, 90) + 1) > 5)`},
		{"coalesce(NULL, age, NULL) * 2 > 5", `((clamp("t0"."age", 17, 90) * 2) > 5)`},
		{"length(lower(note)) > 3", `(length(lower("t0"."note")) > 3)`},
		{"flag = 'yes'", `("t0"."flag" = TRUE)`},
		{"age::bigint + age::int + round(score)::int > 1",
			`(((clamp("t0"."age", 17, 90) + clamp("t0"."age", 17, 90)) + CAST(round(clamp("t0"."score", -1000::real, 1000::real)) AS bigint)) > 1)`},
		{"CAST(age AS text) = '3'", `(CAST(clamp("t0"."age", 17, 90) AS text) = '3')`},
		{"CASE age WHEN '30' THEN age + 1 ELSE '2' END > 5",
			`((CASE WHEN ("t0"."age" = 30) THEN (clamp("t0"."age", 17, 90) + 1) ELSE 2 END) > 5)`},
		{"CASE WHEN 'yes' THEN NULL ELSE NULL END IS NULL", `(NULL IS NULL)`},
		{"CASE WHEN age > 1 THEN raw END > 5", `((CASE WHEN ("t0"."age" > 1) THEN "t0"."raw" END) > 5)`},
	}
	for _, tc := range tests {
		got, err := exprtype.Predicate(where(t, parser.Postgres, tc.where), testColumns)
		if err != nil {
			t.Errorf("%s: %v", tc.where, err)
			continue
		}
		if s := ir.FormatExpr(got); s != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.where, s, tc.want)
		}
	}
}

// TestScalarRanges: the ranges the next issue's aggregates will use.
func TestScalarRanges(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"age + 1", "bigint in [18, 91]"},
		{"age - salary", "bigint in [-9999983, 90]"},
		{"abs(age - 50)", "bigint in [0, 40]"},
		{"-age * 2", "bigint in [-180, -34]"},
		{"score * 2", "double precision in [-2000, 2000]"},
		{"age * 0.5", "double precision in [8.5, 45]"},
		{"round(score / 1)", "double precision in [-1000, 1000]"},
		{"age / 2", "bigint in [8, 45]"},
		{"salary / (age - 50)", "bigint in [-10000000, 10000000]"},
		{"(age - 50) / 7", "bigint in [-4, 5]"},
		{"100 / (age - 20)", "bigint in [-100, 100]"}, // age = 20 gives NULL
		{"age % 7", "bigint in [0, 6]"},
		{"(age - 50) % 100", "bigint in [-33, 40]"},
		{"age / 2.0", "double precision in [8.5, 45]"},
		{"1 / (age - 17)", "bigint in [0, 1]"}, {"coalesce(age, 1000)", "bigint in [17, 1000]"},
		{"length(note)", "bigint in [0, 4294967296]"},
		{"CASE WHEN age > 30 THEN 1 ELSE 0 END", "bigint in [0, 1]"},
		{"CASE WHEN age > 30 THEN age WHEN salary > 5 THEN -3 END", "bigint in [-3, 90]"},
		{"CASE age WHEN 20 THEN 0.5 ELSE age END", "double precision in [0.5, 90]"},
		{"CASE WHEN flag THEN NULL ELSE salary * 2 END", "bigint in [0, 20000000]"},
		{"nullif(age, 30)", "bigint in [17, 90]"},
		{"nullif(age, 0.5)", "double precision in [17, 90]"},
		{"greatest(age, 50)", "bigint in [50, 90]"},
		{"greatest(age, salary)", "bigint in [0, 10000000]"}, // salary alone when age is NULL
		{"least(age, 50, salary)", "bigint in [0, 50]"},
		{"least(score, age)", "double precision in [-1000, 1000]"},
		{"greatest(NULL, age)", "bigint in [17, 90]"},
		{"CAST(age AS double precision)", "double precision in [17, 90]"},
		{"CAST(floor(score / 3) AS bigint)", "bigint in [-334, 333]"},
	}
	for _, tc := range tests {
		stmts, err := parser.Parse(parser.Postgres, "SELECT COUNT(*) FROM t WHERE "+tc.expr+" > 0")
		if tc.want == "" {
			if err == nil && stmts[0].Query != nil {
				t.Errorf("%s parsed", tc.expr)
			}
			continue
		}
		if err != nil || stmts[0].Query == nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		e := stmts[0].Query.Where.(ir.Compare).L
		_, info, err := exprtype.Scalar(e, testColumns)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if info.String() != tc.want {
			t.Errorf("%s: %s, want %s", tc.expr, info, tc.want)
		}
	}
}

// TestNulAndUTF8: text a backend would reject is refused with 22021.
func TestNulAndUTF8(t *testing.T) {
	for _, s := range []string{"a\x00b", "\xff\xfe"} {
		e := ir.Compare{Op: ir.OpEq, L: ir.ColumnRef{Name: "note"}, R: ir.Literal{Value: ir.String(s)}}
		_, err := exprtype.Predicate(e, testColumns)
		if !sqlerr.HasCode(err, sqlerr.CharacterNotInRepertoire) {
			t.Errorf("%q: got %v, want 22021", s, err)
		}
		if err != nil && strings.Contains(err.Error(), s) {
			t.Errorf("%q: the message repeats the value", s)
		}
	}
}

// TestFunctionTable: every function has a rule, a totality argument and
// a rendering for every dialect, or is post-processing only (no rule, no
// rendering, a post-processing rule; refused on rows); the parser accepts
// exactly these names.
func TestFunctionTable(t *testing.T) {
	names := exprtype.Names()
	if len(names) != 33 {
		t.Errorf("functions %v: a new one needs a test here and in the oracle", names)
	}
	for _, n := range names {
		f, ok := exprtype.Lookup(n)
		if ok && f.Rule == nil {
			if f.Post == nil || f.Total == "" || len(f.Render) != 0 {
				t.Errorf("%s: incomplete post-processing-only entry %+v", n, f)
			}
			args := strings.TrimSuffix(strings.Repeat("1, ", f.MinArgs), ", ")
			if _, err := parser.Parse(parser.Postgres, "SELECT "+n+"("+args+") FROM t WHERE a > 1 GROUP BY a"); err != nil {
				t.Errorf("%s: the parser refuses it in the select list: %v", n, err)
			}
			stmts, err := parser.Parse(parser.Postgres, "SELECT COUNT(*) FROM t WHERE "+n+"("+args+") > 1")
			if err == nil && len(stmts) == 1 && stmts[0].Query != nil {
				t.Errorf("%s: accepted on rows", n)
			}
			continue
		}
		if !ok || f.Rule == nil || f.Total == "" || f.MinArgs < 1 {
			t.Errorf("%s: incomplete entry %+v", n, f)
		}
		for _, d := range []string{"postgres", "mysql", "sqlite", "other"} {
			if r := f.Rendering(d); r.Form == exprtype.FormCall && r.Name == "" {
				t.Errorf("%s has no rendering for %s", n, d)
			}
		}
		args := strings.TrimSuffix(strings.Repeat("note, ", f.MinArgs), ", ")
		spelt := n
		if n == "extract" {
			spelt = "date_part" // EXTRACT(field FROM x) is its own syntax
		}
		if _, err := parser.Parse(parser.Postgres, "SELECT COUNT(*) FROM t WHERE "+spelt+"("+args+") IS NULL"); err != nil {
			t.Errorf("%s: the parser refuses it: %v", n, err)
		}
	}
	if _, ok := exprtype.Lookup("sleep"); ok {
		t.Error("sleep is in the table")
	}
}

// TestRowLevelNumericIsDouble: on rows, x::numeric is computed as a double
// precision, so it must be analysed exactly as CAST(x AS double precision)
// — the same lowered expression, or the same refusal where the double
// could overflow or divide by zero — and a numeric(p,s), which would round
// each row, is refused before anything runs.
func TestRowLevelNumericIsDouble(t *testing.T) {
	for _, w := range []string{
		"age::numeric / 2 > 10",
		"salary::numeric * score > 1",
		"huge::numeric * huge::numeric * huge::numeric * huge::numeric * huge::numeric * huge::numeric > 1",
		"score::numeric * score::numeric * score::numeric * score::numeric * score::numeric * 1e300 > 1",
		"age::numeric / (age - 17) > 1",
		"raw::numeric > 1",
		"note::numeric > 1",
		"'1.5'::numeric < score",
	} {
		double := strings.ReplaceAll(w, "::numeric", "::double precision")
		got, gotErr := exprtype.Predicate(where(t, parser.Postgres, w), testColumns)
		want, wantErr := exprtype.Predicate(where(t, parser.Postgres, double), testColumns)
		switch {
		case (gotErr == nil) != (wantErr == nil):
			t.Errorf("%s: %v, but %s: %v", w, gotErr, double, wantErr)
		case gotErr != nil:
			if sqlerr.As(gotErr).Code != sqlerr.As(wantErr).Code {
				t.Errorf("%s: %v, but %s: %v", w, gotErr, double, wantErr)
			}
		case ir.FormatExpr(got) != ir.FormatExpr(want):
			t.Errorf("%s lowers to %s, %s to %s", w, ir.FormatExpr(got), double, ir.FormatExpr(want))
		}
	}
	_, err := exprtype.Predicate(where(t, parser.Postgres, "score::numeric(5,1) > 1"), testColumns)
	if !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) {
		t.Errorf("numeric(5,1) on rows: %v, want 0A000", err)
	}
}
