package parser

import (
	"math/big"
	"strconv"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/ddp-proxy/ddp-proxy/aggregate"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// pgWithinGroup converts an ordered-set aggregate,
// percentile_cont(p) WITHIN GROUP (ORDER BY x [ASC|DESC]): the fraction a
// numeric literal (an array of fractions, returning an array, is refused),
// one sort key. DESC asks for the fraction from the top, which is the
// quantile 1 − p of the ascending order (computed exactly from the
// literal's decimal).
func pgWithinGroup(f *pg.FuncCall, u *aggregate.Unit) (ir.Aggregate, error) {
	name := u.Name
	switch {
	case !u.Fraction:
		return ir.Aggregate{}, notAgg("%s does not take WITHIN GROUP", name)
	case f.AggDistinct:
		return ir.Aggregate{}, notAgg("%s(DISTINCT ...) WITHIN GROUP is not supported", name)
	case len(f.Args) != 1 || len(f.AggOrder) != 1:
		return ir.Aggregate{}, notAgg("%s takes one fraction and one ORDER BY key: %s(0.5) WITHIN GROUP (ORDER BY column)", name, name)
	}
	p, ok := pgFraction(f.Args[0])
	if !ok {
		return ir.Aggregate{}, notAgg("the fraction of %s must be a number literal between 0 and 1 (an array of fractions is not supported)", name)
	}
	sb := f.AggOrder[0].GetSortBy()
	if sb == nil {
		return ir.Aggregate{}, notAgg(msgAggArg)
	}
	switch sb.SortbyDir {
	case pg.SortByDir_SORTBY_DEFAULT, pg.SortByDir_SORTBY_ASC:
	case pg.SortByDir_SORTBY_DESC:
		p = new(big.Rat).Sub(big.NewRat(1, 1), p)
	default:
		return ir.Aggregate{}, notAgg("ORDER BY ... USING is not supported in %s; use ASC or DESC", name)
	}
	frac, _ := p.Float64()
	out := ir.Aggregate{Func: u.Func(), Fraction: &frac}
	if sb.Node.GetColumnRef() != nil {
		col, ok := pgColumn(sb.Node)
		if !ok {
			return ir.Aggregate{}, notAgg(msgAggArg)
		}
		out.Arg = &col
		return out, nil
	}
	x, err := pgExpr(sb.Node, false)
	if err != nil {
		return ir.Aggregate{}, err
	}
	out.ArgExpr = x
	return out, nil
}

// pgFraction reads a number literal (0.5, 1, 0.25::float8 is not one).
func pgFraction(n *pg.Node) (*big.Rat, bool) {
	c := n.GetAConst()
	if c == nil || c.Isnull {
		return nil, false
	}
	var text string
	switch v := c.Val.(type) {
	case *pg.A_Const_Ival:
		text = strconv.FormatInt(int64(v.Ival.Ival), 10)
	case *pg.A_Const_Fval:
		text = v.Fval.Fval
	default:
		return nil, false
	}
	r, ok := new(big.Rat).SetString(text)
	return r, ok
}

// myAggregateCall converts a call TiDB's grammar does not know as an
// aggregate but the registry does: MEDIAN(x) (MariaDB's median, a window
// function there; here the aggregate over the group). MariaDB's
// PERCENTILE_CONT(p) WITHIN GROUP (ORDER BY x) OVER () is outside the
// grammar of the MySQL parser and fails as a syntax error.
func (m *myQueryBuilder) myAggregateCall(f *ast.FuncCallExpr, u *aggregate.Unit) (ir.Aggregate, error) {
	out, err := m.myAggregateCallOf(f, u)
	out.Name = spelling(out.Func, f.FnName.L)
	return out, err
}

func (m *myQueryBuilder) myAggregateCallOf(f *ast.FuncCallExpr, u *aggregate.Unit) (ir.Aggregate, error) {
	if u.Fraction {
		return ir.Aggregate{}, notAgg("%s(p) WITHIN GROUP (ORDER BY x) is outside the MySQL grammar the proxy parses; write MEDIAN(x), MIN(x) or MAX(x), or ask through a PostgreSQL client", u.Name)
	}
	if u.Star || len(f.Args) != 1 {
		return ir.Aggregate{}, notAgg(msgAggArg)
	}
	if c, ok := f.Args[0].(*ast.ColumnNameExpr); ok {
		col, ok := myColumn(c)
		if !ok {
			return ir.Aggregate{}, notAgg(msgThreePart)
		}
		return ir.Aggregate{Func: u.Func(), Arg: &col}, nil
	}
	x, err := m.expr(f.Args[0], false)
	if err != nil {
		return ir.Aggregate{}, err
	}
	return ir.Aggregate{Func: u.Func(), ArgExpr: x}, nil
}

// myCallAggregate returns the registry unit a plain MySQL call names when
// TiDB parses it as a function (median), nil otherwise.
func myCallAggregate(f *ast.FuncCallExpr) *aggregate.Unit {
	if f.Schema.O != "" {
		return nil
	}
	return aggregate.Lookup(aggregate.MySQL, f.FnName.L)
}
