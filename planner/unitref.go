package planner

import (
	"errors"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// This file refuses references to the privacy unit column before any
// other check of a query's shape. Resolution (columnOf) refuses the unit
// wherever it meets it, but clauses are bound one after another and the
// parser checks grouping before the planner sees the query: SELECT
// person_id FROM people was told to add person_id to GROUP BY, and
// SELECT person_id FROM people GROUP BY person_id was then refused
// because person_id is the unit. Naming the unit first ends that detour.
// The walk only reorders refusals: a reference it misses is still
// refused by resolution later, so where a name could mean an output
// column it leaves the name alone.

// errUnitColumn is the cause of columnOf's refusal of the unit column,
// which is how refuseUnitRefs tells it from the other refusals of
// resolution (unknown, ambiguous) without reading messages.
var errUnitColumn = errors.New("the column is the privacy unit")

// unitRefusal is the refusal of the unit column of private table tbl,
// named as the analyst wrote it (lower case). The hint names the one use
// there is, so that the refusal is not another dead end.
func unitRefusal(tbl *policies.Table, name string) error {
	e := sqlerr.New(sqlerr.InsufficientPrivilege, "column %s.%s is the privacy unit: it cannot be used in queries", tbl.Name, name).
		WithHint("only COUNT(DISTINCT %s), the number of units, reads it", name)
	e.Cause = errUnitColumn
	return e
}

// refuseUnitIn is refuseUnitRefs for the query of a statement refused
// for its grouping (ir.Statement.Ungrouped). A query whose tables do not
// bind keeps the refusal it has: nil.
func (p *Planner) refuseUnitIn(q *ir.Query, names policies.Names) error {
	sc, err := p.bindTables(q, names)
	if err != nil {
		return nil
	}
	return (&builder{p: p, sc: sc}).refuseUnitRefs(q)
}

// refuseUnitRefs returns the unit column's refusal when q refers to the
// private table's unit anywhere: a join, the select list, WHERE, GROUP
// BY, HAVING or ORDER BY, bare or inside an expression or an aggregate's
// argument. COUNT(DISTINCT unit) is not a reference: it counts units
// (aggregateOutput reads it so, with the same test). Names are resolved
// as the clauses resolve them; a bare name in GROUP BY, HAVING or ORDER
// BY that an output column also has (an alias, an aggregate's name) may
// mean that output and is left to those clauses. Stages read output
// columns only.
func (b *builder) refuseUnitRefs(q *ir.Query) error {
	main := b.sc.tables[0].tbl
	if main.Public || main.Column(strings.ToLower(main.Unit)) != nil {
		return nil // a declared unit is a column like the others
	}
	var found error
	// col checks one reference; outputFirst: the name may be an output's.
	col := func(c ir.ColumnRef, outputFirst bool) {
		if found != nil || !strings.EqualFold(c.Name, main.Unit) {
			return // most references: no resolution, no allocation
		}
		if outputFirst && c.Qualifier == "" && c.Schema == "" && outputNamed(q, c.Name) {
			return
		}
		if _, err := b.resolveColumn(c); errors.Is(err, errUnitColumn) {
			found = err
		}
	}
	var expr func(e ir.Expr, outputFirst bool)
	agg := func(a ir.Aggregate) {
		switch {
		case a.ArgExpr != nil:
			expr(a.ArgExpr, false) // evaluated on input rows
		case a.Arg != nil && !(a.Distinct && b.isUnitColumn(*a.Arg)):
			col(*a.Arg, false)
		}
	}
	expr = func(e ir.Expr, outputFirst bool) {
		ir.Walk(e, func(n ir.Expr) bool {
			switch n := n.(type) {
			case ir.ColumnRef:
				col(n, outputFirst)
			case ir.Aggregate:
				agg(n) // Walk does not descend into its argument
			}
			// GROUPING(k) names GROUP BY keys, checked there.
			return found == nil
		})
	}
	for _, j := range q.Joins {
		col(j.Left, false)
		col(j.Right, false)
	}
	for _, it := range q.Select {
		switch {
		case it.Expr != nil:
			expr(it.Expr, false) // select-list aliases are not in scope
		case it.Agg != ir.AggNone:
			agg(ir.Aggregate{Func: it.Agg, Arg: it.Arg, ArgExpr: it.ArgExpr, Distinct: it.Distinct})
		case it.Arg != nil:
			col(*it.Arg, false)
		}
	}
	if !q.ReadsNoRow() {
		// A query that reads no row never binds its WHERE (planPrivate):
		// what it does not bind, it does not refuse.
		expr(q.Where, false)
	}
	for _, g := range q.GroupBy {
		expr(g, true) // groupKeyOf: an expression item's alias when not a column
	}
	expr(q.Having, true)
	for _, o := range q.OrderBy {
		expr(o.Expr, true)
	}
	return found
}

// outputNamed reports whether an item of q's select list may be named
// name (any case) in HAVING, ORDER BY or GROUP BY: its alias, its label,
// or the name the planner gives an item without alias.
func outputNamed(q *ir.Query, name string) bool {
	for _, it := range q.Select {
		names := [...]string{it.Alias, it.Label, it.Name, string(it.Agg), ""}
		switch {
		case it.Expr != nil:
			names[4] = exprName(it)
		case it.IsColumn():
			names[4] = it.Arg.Name
		}
		for _, n := range names {
			if n != "" && strings.EqualFold(n, name) {
				return true
			}
		}
	}
	return false
}
