package parser

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// Metabase truncates dates on MySQL (which has no date_trunc) by
// formatting a date as text and reading the text back:
//
//	minute   str_to_date(date_format(t, '%Y-%m-%d %H:%i'), '%Y-%m-%d %H:%i')
//	hour     str_to_date(date_format(t, '%Y-%m-%d %H'), '%Y-%m-%d %H')
//	day      date(t)
//	month    str_to_date(concat(date_format(t, '%Y-%m'), '-01'), '%Y-%m-%d')
//	         (older releases: str_to_date(date_format(t, '%Y-%m'), '%Y-%m'))
//	quarter  str_to_date(concat(year(t), '-', quarter(t) * 3 - 2, '-01'), '%Y-%m-%d')
//	year     makedate(year(t), 1)
//
// These exact forms, with constant formats, are recognised on the parse
// tree and lowered to date_trunc: a date for the date units (the first
// day of the month, quarter or year), the truncated value for hour and
// minute. MySQL's own reading of '2010-03' with '%Y-%m' is the zero-day
// 2010-03-00; the lowering returns the first of the month, which is the
// bucket the tool means. Any other STR_TO_DATE or MAKEDATE is refused:
// reading text back as a date fails for the rows whose text is no date.

// strToDateUnits maps a format written by date_format and read back by
// str_to_date to its date_trunc unit.
var strToDateUnits = map[string]string{
	"%Y-%m-%d %H:%i": "minute", "%Y-%m-%d %H": "hour", "%Y-%m-%d": "day", "%Y-%m": "month", "%Y": "year",
}

// metabaseTrunc lowers the forms above; f is a call of str_to_date or
// makedate.
func (m *myQueryBuilder) metabaseTrunc(f *ast.FuncCallExpr, aggs bool) (ir.Expr, error) {
	refuse := func() (ir.Expr, error) {
		return nil, notAgg("%s is supported only in the date truncations Metabase writes, such as STR_TO_DATE(CONCAT(DATE_FORMAT(t, '%%Y-%%m'), '-01'), '%%Y-%%m-%%d'); "+
			"reading other text back as a date would fail for the rows whose text is no date", f.FnName.O)
	}
	if aggs {
		return nil, notAgg(msgNotInHaving, "function "+f.FnName.L)
	}
	var unit string
	var t ast.ExprNode
	switch f.FnName.L {
	case "makedate":
		// makedate(year(t), 1)
		if len(f.Args) != 2 || !isIntConst(f.Args[1], 1) {
			return refuse()
		}
		x, ok := call1(unparen(f.Args[0]), "year")
		if !ok {
			return refuse()
		}
		unit, t = "year", x
	case "str_to_date":
		if len(f.Args) != 2 {
			return refuse()
		}
		format, ok := strConst(f.Args[1])
		if !ok {
			return refuse()
		}
		inner, ok := unparen(f.Args[0]).(*ast.FuncCallExpr)
		if !ok {
			return refuse()
		}
		switch inner.FnName.L {
		case "date_format":
			// str_to_date(date_format(t, F), F)
			if len(inner.Args) != 2 {
				return refuse()
			}
			if f2, ok := strConst(inner.Args[1]); !ok || f2 != format || strToDateUnits[format] == "" {
				return refuse()
			}
			unit, t = strToDateUnits[format], inner.Args[0]
		case "concat":
			if len(inner.Args) > 0 {
				if yw, ok := call1(unparen(inner.Args[0]), "yearweek"); ok {
					// STR_TO_DATE(CONCAT(YEARWEEK(t), ' Sunday'), '%X%V %W'),
					// Metabase's week: the Sunday that starts t's week
					// (YEARWEEK's mode is 0, weeks from Sunday, whatever
					// default_week_format says).
					if len(inner.Args) != 2 || !isStrConst(inner.Args[1], " Sunday") || format != "%X%V %W" {
						return refuse()
					}
					return m.lowerTrunc("week_sunday", yw, aggs)
				}
			}
			if format != "%Y-%m-%d" {
				return refuse()
			}
			switch len(inner.Args) {
			case 2:
				// concat(date_format(t, '%Y-%m'), '-01')
				df, ok := unparen(inner.Args[0]).(*ast.FuncCallExpr)
				if !ok || df.FnName.L != "date_format" || len(df.Args) != 2 || !isStrConst(df.Args[1], "%Y-%m") || !isStrConst(inner.Args[1], "-01") {
					return refuse()
				}
				unit, t = "month", df.Args[0]
			case 4:
				// concat(year(t), '-', quarter(t) * 3 - 2, '-01')
				y, ok1 := call1(unparen(inner.Args[0]), "year")
				sub, ok2 := unparen(inner.Args[2]).(*ast.BinaryOperationExpr)
				if !ok1 || !ok2 || !isStrConst(inner.Args[1], "-") || !isStrConst(inner.Args[3], "-01") || sub.Op != opcode.Minus || !isIntConst(sub.R, 2) {
					return refuse()
				}
				mul, ok := unparen(sub.L).(*ast.BinaryOperationExpr)
				if !ok || mul.Op != opcode.Mul || !isIntConst(mul.R, 3) {
					return refuse()
				}
				q, ok := call1(unparen(mul.L), "quarter")
				if !ok || !sameColumn(q, y) {
					return refuse()
				}
				unit, t = "quarter", y
			default:
				return refuse()
			}
		default:
			return refuse()
		}
	default:
		return refuse()
	}
	return m.lowerTrunc(unit, t, aggs)
}

// call1 matches name(x) and returns x.
func call1(e ast.ExprNode, name string) (ast.ExprNode, bool) {
	c, ok := e.(*ast.FuncCallExpr)
	if !ok || c.FnName.L != name || len(c.Args) != 1 {
		return nil, false
	}
	return c.Args[0], true
}

// sameColumn reports whether two arguments name the same column the same
// way (the quarter and the year of one value).
func sameColumn(a, b ast.ExprNode) bool {
	ca, ok1 := a.(*ast.ColumnNameExpr)
	cb, ok2 := b.(*ast.ColumnNameExpr)
	return ok1 && ok2 && ca.Name.Schema.L == cb.Name.Schema.L && ca.Name.Table.L == cb.Name.Table.L && ca.Name.Name.L == cb.Name.Name.L
}

func strConst(e ast.ExprNode) (string, bool) {
	v, ok := e.(*test_driver.ValueExpr)
	if !ok || v.Kind() != test_driver.KindString {
		return "", false
	}
	return v.GetString(), true
}

func isStrConst(e ast.ExprNode, s string) bool {
	got, ok := strConst(e)
	return ok && got == s
}

func isIntConst(e ast.ExprNode, n int64) bool {
	v, ok := e.(*test_driver.ValueExpr)
	if !ok {
		return false
	}
	switch v.Kind() {
	case test_driver.KindInt64:
		return v.GetInt64() == n
	case test_driver.KindUint64:
		return n >= 0 && v.GetUint64() == uint64(n)
	}
	return false
}

// Superset's MySQL time grains (db_engine_specs/mysql.py) are date
// arithmetic on the column's own fields:
//
//	minute   DATE_ADD(DATE(t), INTERVAL (HOUR(t)*60 + MINUTE(t)) MINUTE)
//	hour     DATE_ADD(DATE(t), INTERVAL HOUR(t) HOUR)
//	week     DATE(DATE_SUB(t, INTERVAL DAYOFWEEK(DATE_SUB(t, INTERVAL 1 DAY)) - 1 DAY))
//	         (weeks from Monday)
//	week     DATE(DATE_SUB(t, INTERVAL DAYOFWEEK(t) - 1 DAY)) (weeks from Sunday)
//	month    DATE(DATE_SUB(t, INTERVAL DAYOFMONTH(t) - 1 DAY))
//	quarter  MAKEDATE(YEAR(t), 1) + INTERVAL QUARTER(t) QUARTER - INTERVAL 1 QUARTER
//	year     DATE(DATE_SUB(t, INTERVAL DAYOFYEAR(t) - 1 DAY))
//
// An interval of a column's value is otherwise refused (its range would
// depend on the row); these exact forms, every field of one column, are
// lowered to date_trunc like Metabase's.

// supersetTrunc recognises the forms above in f (a call of date,
// date_add or date_sub): the unit and the column, or ok false.
func supersetTrunc(f *ast.FuncCallExpr) (unit string, t ast.ExprNode, ok bool, err error) {
	switch f.FnName.L {
	case "date":
		// DATE(DATE_SUB(t, INTERVAL <days back> DAY))
		if len(f.Args) != 1 {
			return "", nil, false, nil
		}
		sub, isSub := unparen(f.Args[0]).(*ast.FuncCallExpr)
		if !isSub || sub.FnName.L != "date_sub" || len(sub.Args) != 3 || !isUnit(sub.Args[2], ast.TimeUnitDay) {
			return "", nil, false, nil
		}
		back, isMinus := unparen(sub.Args[1]).(*ast.BinaryOperationExpr)
		if !isMinus || back.Op != opcode.Minus || !isIntConst(back.R, 1) {
			return "", nil, false, nil
		}
		field, ok := unparen(back.L).(*ast.FuncCallExpr)
		if !ok || len(field.Args) != 1 {
			return "", nil, false, nil
		}
		x := field.Args[0]
		switch field.FnName.L {
		case "dayofmonth":
			unit = "month"
		case "dayofyear":
			unit = "year"
		case "dayofweek":
			unit = "week_sunday" // DAYOFWEEK(t): Sunday 1, so back to Sunday
			if prev, isPrev := unparen(x).(*ast.FuncCallExpr); isPrev && prev.FnName.L == "date_sub" && len(prev.Args) == 3 && isIntConst(prev.Args[1], 1) && isUnit(prev.Args[2], ast.TimeUnitDay) {
				unit, x = "week", prev.Args[0] // DAYOFWEEK(t - 1 day): back to Monday
			}
		default:
			return "", nil, false, nil
		}
		if !sameColumn(x, sub.Args[0]) {
			return "", nil, false, nil
		}
		return unit, x, true, nil
	case "date_add":
		// DATE_ADD(DATE(t), INTERVAL HOUR(t) HOUR) and the minute's.
		if len(f.Args) != 3 {
			return "", nil, false, nil
		}
		x, ok := call1(unparen(f.Args[0]), "date")
		if !ok {
			return "", nil, false, nil
		}
		n := unparen(f.Args[1])
		switch {
		case isUnit(f.Args[2], ast.TimeUnitHour):
			h, ok := call1(n, "hour")
			return "hour", x, ok && sameColumn(h, x), nil
		case isUnit(f.Args[2], ast.TimeUnitMinute):
			sum, ok := n.(*ast.BinaryOperationExpr)
			if !ok || sum.Op != opcode.Plus {
				return "", nil, false, nil
			}
			mul, ok1 := unparen(sum.L).(*ast.BinaryOperationExpr)
			mi, ok2 := call1(unparen(sum.R), "minute")
			if !ok1 || !ok2 || mul.Op != opcode.Mul || !isIntConst(mul.R, 60) {
				return "", nil, false, nil
			}
			h, ok := call1(unparen(mul.L), "hour")
			return "minute", x, ok && sameColumn(h, x) && sameColumn(mi, x), nil
		}
	case "date_sub":
		// MAKEDATE(YEAR(t), 1) + INTERVAL QUARTER(t) QUARTER - INTERVAL 1 QUARTER
		if len(f.Args) != 3 || !isIntConst(f.Args[1], 1) || !isUnit(f.Args[2], ast.TimeUnitQuarter) {
			return "", nil, false, nil
		}
		add, ok := unparen(f.Args[0]).(*ast.FuncCallExpr)
		if !ok || add.FnName.L != "date_add" || len(add.Args) != 3 || !isUnit(add.Args[2], ast.TimeUnitQuarter) {
			return "", nil, false, nil
		}
		mk, ok := unparen(add.Args[0]).(*ast.FuncCallExpr)
		if !ok || mk.FnName.L != "makedate" || len(mk.Args) != 2 || !isIntConst(mk.Args[1], 1) {
			return "", nil, false, nil
		}
		y, ok1 := call1(unparen(mk.Args[0]), "year")
		q, ok2 := call1(unparen(add.Args[1]), "quarter")
		return "quarter", y, ok1 && ok2 && sameColumn(y, q), nil
	}
	return "", nil, false, nil
}

// lowerTrunc is date_trunc(unit, t) as a MySQL truncation returns it: a
// date for the date units (truncating the date is exact and keeps the
// key set to the units' first days), the truncated value for hour and
// minute.
func (m *myQueryBuilder) lowerTrunc(unit string, t ast.ExprNode, aggs bool) (ir.Expr, error) {
	if aggs {
		return nil, notAgg(msgNotInHaving, "a date truncation")
	}
	x, err := m.expr(t, aggs)
	if err != nil {
		return nil, err
	}
	unitLit := ir.Literal{Value: ir.String(unit)}
	switch unit {
	case "minute", "hour":
		return ir.Func{Name: "date_trunc", Args: []ir.Expr{unitLit, x}}, nil
	case "day":
		return ir.Cast{X: x, To: ir.CastDate}, nil
	case "week_sunday":
		// The Monday week of the next day, one day back: the Sunday on
		// or before t.
		day := func(d ir.Expr, n int64) ir.Expr {
			return ir.Func{Name: "date_add", Args: []ir.Expr{d, ir.Literal{Value: ir.Int(n)}, ir.Literal{Value: ir.String("day")}}}
		}
		week := ir.Func{Name: "date_trunc", Args: []ir.Expr{ir.Literal{Value: ir.String("week")}, day(ir.Cast{X: x, To: ir.CastDate}, 1)}}
		return day(week, -1), nil
	}
	return ir.Func{Name: "date_trunc", Args: []ir.Expr{unitLit, ir.Cast{X: x, To: ir.CastDate}}}, nil
}

func isUnit(e ast.ExprNode, u ast.TimeUnitType) bool {
	x, ok := e.(*ast.TimeUnitExpr)
	return ok && x.Unit == u
}
