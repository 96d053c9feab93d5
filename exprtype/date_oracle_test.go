package exprtype_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// evalDate evaluates a lowered date expression for one value of the
// column c, as the backends compute it (independently of the rules: by
// the Go functions the three-backend test checks the backends against).
func evalDate(t *testing.T, e ir.Expr, c ir.Value) ir.Value {
	t.Helper()
	switch n := e.(type) {
	case ir.ColumnRef:
		return c
	case ir.Literal:
		return n.Value
	case ir.Clamp:
		x := evalDate(t, n.X, c)
		x.Int = min(max(x.Int, n.Lo.Int), n.Hi.Int)
		return x
	case ir.Cast:
		x := evalDate(t, n.X, c)
		k := map[ir.CastType]ir.Kind{ir.CastDate: ir.KindDate, ir.CastTimestamp: ir.KindTimestamp, ir.CastTimestampTZ: ir.KindTimestampTZ}[n.To]
		if k == ir.KindDate && x.Kind != ir.KindDate {
			d := x.Int / ir.MicrosPerDay
			if x.Int < 0 && x.Int%ir.MicrosPerDay != 0 {
				d--
			}
			return ir.Date(d)
		}
		return ir.AsTime(x, k)
	case ir.Func:
		if n.Name == "date_add" {
			x := evalDate(t, n.Args[0], c)
			v, ok := exprtype.AddInterval(x, n.Args[1].(ir.Literal).Value.Int, n.Args[2].(ir.Literal).Value.Str)
			if !ok {
				t.Fatalf("%s failed on %v", ir.FormatExpr(n), x)
			}
			return v
		}
		if n.Name == "to_char" {
			// to_char(t, format): the format is the second argument.
			x := evalDate(t, n.Args[0], c)
			f := n.Args[1].(ir.Literal).Value.Str
			layout, ok := map[string]string{"YYYY": "2006", "YYYY-MM": "2006-01", "YYYY-MM-01": "2006-01", "YYYY-MM-DD": "2006-01-02",
				"YYYY-MM-DD HH24": "2006-01-02 15", "YYYY-MM-DD HH24:MI": "2006-01-02 15:04"}[f]
			if !ok {
				t.Fatalf("to_char format %q", f)
			}
			s := x.GoTime().Format(layout)
			if f == "YYYY-MM-01" {
				s += "-01"
			}
			return ir.String(s)
		}
		unit := n.Args[0].(ir.Literal).Value.Str
		x := evalDate(t, n.Args[1], c)
		switch n.Name {
		case "date_trunc":
			v, ok := exprtype.TruncTime(unit, x)
			if !ok {
				t.Fatalf("date_trunc(%s, %v) failed", unit, x)
			}
			return v
		case "extract":
			v, ok := exprtype.ExtractTime(unit, x)
			if !ok {
				t.Fatalf("extract(%s, %v) failed", unit, x)
			}
			return ir.Int(v)
		}
	}
	t.Fatalf("cannot evaluate %s", ir.FormatExpr(e))
	return ir.Value{}
}

// TestDateRangeOracle: for random small bounded date and timestamp
// columns and random date expressions, every value the expression takes
// over every column value (every day; timestamps every 13 minutes plus the
// bounds) lies in the inferred range, and the range's ends are reached
// when the expression is monotone (date_trunc, the year).
func TestDateRangeOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	exprs := []string{
		"date_trunc('%s', c)", "extract(%s FROM c)", "date_part('%s', c)",
		"extract(%s FROM date_trunc('month', c))", "CAST(c AS date)", "date_trunc('%s', CAST(c AS date))",
		"extract(%s FROM CAST(c AS date))",
		"c + INTERVAL '%s'", "c - INTERVAL '%s'", "CAST(c AS date) + INTERVAL '%s'",
	}
	checked := 0
	for i := range 1500 {
		k := []ir.Kind{ir.KindDate, ir.KindTimestamp, ir.KindTimestampTZ}[i%3]
		typ := exprtype.TimeType(k)
		var lo, hi, step int64
		if k == ir.KindDate {
			lo = -354000 + rng.Int64N(2_900_000)
			hi, step = lo+rng.Int64N(500), 1
		} else {
			lo = (-354000+rng.Int64N(2_900_000))*ir.MicrosPerDay + rng.Int64N(ir.MicrosPerDay)
			hi, step = lo+rng.Int64N(20*ir.MicrosPerDay), 13*60*ir.MicrosPerSecond
		}
		cols := func(c ir.ColumnRef) (exprtype.Column, error) {
			if c.Name != "c" {
				return exprtype.Column{}, sqlerr.New(sqlerr.UndefinedColumn, "no column %s", c.Name)
			}
			return exprtype.Column{Ref: ir.ColumnRef{Name: "c"}, Type: typ, HasBounds: true, Lo: ir.Value{Kind: k, Int: lo}, Hi: ir.Value{Kind: k, Int: hi}}, nil
		}
		form := exprs[rng.IntN(len(exprs))]
		unit := exprtype.TruncUnits[rng.IntN(len(exprtype.TruncUnits))]
		if strings.Contains(form, "extract") || strings.Contains(form, "date_part") {
			fields := []string{"year", "quarter", "month", "day", "hour", "minute", "dow"}
			unit = fields[rng.IntN(len(fields))]
		}
		if strings.Contains(form, "INTERVAL") {
			units := exprtype.IntervalUnits
			if k == ir.KindDate || strings.HasPrefix(form, "CAST") {
				units = units[:5]
			}
			unit = fmt.Sprintf("%d %s", rng.Int64N(61)-30, units[rng.IntN(len(units))])
		}
		src := strings.ReplaceAll(form, "%s", unit)
		stmts, err := parser.Parse(parser.Postgres, "SELECT COUNT(*) FROM t WHERE "+src+" IS NULL")
		if err != nil || stmts[0].Query == nil {
			t.Fatalf("%s: %v", src, err)
		}
		e := stmts[0].Query.Where.(ir.IsNull).X
		x, info, err := exprtype.Scalar(e, cols)
		if err != nil {
			if sqlerr.HasCode(err, sqlerr.InvalidParameterValue) || sqlerr.HasCode(err, sqlerr.DatetimeFieldOverflow) {
				continue // hour of a date; a range below 1000-01-01
			}
			t.Fatalf("%s over %s [%d, %d]: %v", src, k, lo, hi, err)
		}
		if !info.Bounded {
			t.Fatalf("%s: unbounded %s", src, info)
		}
		minSeen, maxSeen := int64(0), int64(0)
		first := true
		visit := func(v int64) {
			got := evalDate(t, x, ir.Value{Kind: k, Int: v})
			n := got.Int
			if (info.Type == exprtype.Integer) != (got.Kind == ir.KindInt) || info.Type.IsTime() && got.Kind != info.Type.Kind() {
				t.Fatalf("%s: value %v of another type than %s", src, got, info)
			}
			if n < info.Int.Lo.Int64() || n > info.Int.Hi.Int64() {
				t.Fatalf("%s over %s [%d, %d]: value %v outside %s", src, k, lo, hi, got, info)
			}
			if first || n < minSeen {
				minSeen = n
			}
			if first || n > maxSeen {
				maxSeen = n
			}
			first = false
		}
		for v := lo - 3*step; v <= hi+3*step; v += step { // the clamp covers values beyond the bounds
			visit(v)
		}
		visit(hi)
		monotone := strings.HasPrefix(src, "date_trunc") || strings.HasPrefix(src, "CAST") || strings.Contains(src, "(year") ||
			strings.HasPrefix(src, "c ") && (k == ir.KindDate || !strings.Contains(src, "month") && !strings.Contains(src, "quarter") && !strings.Contains(src, "year"))
		if monotone && (minSeen != info.Int.Lo.Int64() || maxSeen != info.Int.Hi.Int64()) {
			t.Fatalf("%s over %s [%d, %d]: values span [%d, %d], range %s is not tight", src, k, lo, hi, minSeen, maxSeen, info)
		}
		checked++
	}
	if checked < 700 {
		t.Fatalf("only %d expressions checked", checked)
	}
	t.Log(fmt.Sprintf("%d expressions checked", checked))
}

// TestDateGroupKeyDomainSound: for random small bounded date and
// timestamp columns, the key set GroupKey derives for a date grouping
// (date_trunc, a cast to date, extract, to_char, and these over a cast)
// holds the value of the lowered key, computed as the backends compute
// it, at every column value stepped through the range and a few steps
// beyond each bound (the clamp maps those in), and is exactly the set of
// values met: no key the rows cannot take.
func TestDateGroupKeyDomainSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	forms := []string{
		"date_trunc('%s', c)", "CAST(c AS date)", "extract(%s FROM c)", "to_char(c, '%s')",
		"date_trunc('%s', CAST(c AS date))", "to_char(CAST(c AS date), '%s')", "extract(%s FROM CAST(c AS date))",
		"CAST(date_trunc('%s', c) AS date)",
		// Weeks from Sunday (Metabase's, Superset's) and other shifted
		// truncations: a key's values shift with it.
		"date_trunc('%s', c + INTERVAL '1 day') + INTERVAL '-1 day'", "date_trunc('%s', c) - INTERVAL '1 day'",
	}
	fields := []string{"year", "quarter", "month", "day", "hour", "minute", "dow", "doy", "week"}
	checked, evals := 0, 0
	for i := range 900 {
		k := []ir.Kind{ir.KindDate, ir.KindTimestamp, ir.KindTimestampTZ}[i%3]
		typ := exprtype.TimeType(k)
		var lo, hi, step int64
		if k == ir.KindDate {
			lo = 365_000/2 - 200_000 + rng.Int64N(2_000_000) // within 1000..9999 years
			hi, step = lo+rng.Int64N(400), 1
		} else {
			lo = (-200_000+rng.Int64N(2_000_000))*ir.MicrosPerDay + rng.Int64N(ir.MicrosPerDay)
			// Every minute: the finest unit a key distinguishes.
			hi, step = lo+rng.Int64N(3*ir.MicrosPerDay), 60*ir.MicrosPerSecond
		}
		cols := func(c ir.ColumnRef) (exprtype.Column, error) {
			if c.Name != "c" {
				return exprtype.Column{}, sqlerr.New(sqlerr.UndefinedColumn, "no column %s", c.Name)
			}
			return exprtype.Column{Ref: ir.ColumnRef{Name: "c"}, Type: typ, HasBounds: true, Lo: ir.Value{Kind: k, Int: lo}, Hi: ir.Value{Kind: k, Int: hi}}, nil
		}
		form := forms[rng.IntN(len(forms))]
		arg := ""
		switch {
		case strings.HasPrefix(form, "date_trunc"), strings.HasPrefix(form, "CAST(date_trunc"):
			arg = exprtype.TruncUnits[rng.IntN(len(exprtype.TruncUnits))]
		case strings.HasPrefix(form, "extract"):
			arg = fields[rng.IntN(len(fields))]
		case strings.HasPrefix(form, "to_char"):
			arg = exprtype.CharFormats[rng.IntN(len(exprtype.CharFormats))].Postgres
		}
		src := strings.ReplaceAll(form, "%s", arg)
		stmts, err := parser.Parse(parser.Postgres, "SELECT COUNT(*) FROM t GROUP BY "+src)
		if err != nil || stmts[0].Query == nil || len(stmts[0].Query.GroupBy) != 1 {
			t.Fatalf("%s: %v", src, err)
		}
		x, info, err := exprtype.GroupKey(stmts[0].Query.GroupBy[0], cols)
		if err != nil {
			if sqlerr.HasCode(err, sqlerr.InvalidParameterValue) || sqlerr.HasCode(err, sqlerr.DatetimeFieldOverflow) {
				continue // an hour of a date; a range outside what MySQL computes
			}
			t.Fatalf("%s over %s [%d, %d]: %v", src, k, lo, hi, err)
		}
		if info.Domain == nil {
			t.Fatalf("%s over %s [%d, %d] (%s): no key set derived", src, k, lo, hi, ir.FormatExpr(x))
		}
		met := map[ir.Value]bool{}
		visit := func(v int64) {
			got := evalDate(t, x, ir.Value{Kind: k, Int: v})
			if !slices.ContainsFunc(info.Domain, func(d ir.Value) bool { return d.Kind == got.Kind && ir.CompareValues(d, got) == 0 }) {
				t.Fatalf("%s over %s [%d, %d]: at %v the key is %v, not in the derived %v", src, k, lo, hi, ir.Value{Kind: k, Int: v}, got, info.Domain)
			}
			met[got] = true
			evals++
		}
		for v := lo - 3*step; v <= hi+3*step; v += step {
			visit(v)
		}
		visit(hi)
		if len(met) != len(info.Domain) {
			t.Fatalf("%s over %s [%d, %d]: %d keys derived, the range meets %d", src, k, lo, hi, len(info.Domain), len(met))
		}
		checked++
	}
	if checked < 500 {
		t.Fatalf("only %d groupings checked", checked)
	}
	t.Logf("%d groupings, %d evaluations", checked, evals)
}
