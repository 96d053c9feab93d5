package session

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TypeUnknown marks a parameter whose type the client did not declare.
const TypeUnknown = ir.TypeUnknown

// Prepared is a statement prepared for the extended protocol.
type Prepared struct {
	Stmt       *ir.Statement
	ParamTypes []ColType
	// Columns describes the result; nil when the statement returns no rows.
	Columns []Column
	// gen is the policy generation Columns were described under.
	gen *generation
}

// Prepare parses one statement, infers its parameter types and describes
// its result. declared holds the client's parameter types (TypeUnknown
// where it gave none). Refusals are reported here, before any Bind.
func (s *Session) Prepare(ctx context.Context, sql string, declared []ColType) (*Prepared, error) {
	if err := s.refresh(); err != nil {
		return nil, err
	}
	stmts, err := s.p.cache.Parse(s.dialect, sql)
	if err != nil {
		s.parseFailed(err)
		return nil, err
	}
	if len(stmts) > 1 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	st := &stmts[0]
	if st.Kind == ir.StmtRefused {
		return nil, st.Refused
	}
	n := max(st.NumParams, len(declared))
	p := &Prepared{Stmt: st, ParamTypes: make([]ColType, n), gen: s.p}
	inferred := s.inferParams(st)
	for i := range p.ParamTypes {
		switch {
		case i < len(declared) && declared[i] != TypeUnknown:
			p.ParamTypes[i] = declared[i]
		case inferred[i+1] != TypeUnknown:
			p.ParamTypes[i] = inferred[i+1]
		default:
			p.ParamTypes[i] = TypeText
		}
	}
	if p.Columns, err = s.describe(ctx, st, n); err != nil {
		return nil, err
	}
	return p, nil
}

// Execute runs a prepared statement, its answer written to w as Exec
// does. Text arguments are converted to the parameter's inferred type
// first, so `age > $1` compares numbers.
func (s *Session) Execute(ctx context.Context, p *Prepared, args []ir.Value, w ir.RowWriter) (ir.Cost, error) {
	conv := make([]ir.Value, len(args))
	for i, a := range args {
		t := TypeText
		if i < len(p.ParamTypes) {
			t = p.ParamTypes[i]
		}
		v, err := coerce(a, t)
		if se, ok := err.(*sqlerr.Error); ok {
			return ir.Cost{}, se
		}
		if err != nil {
			return ir.Cost{}, sqlerr.New(sqlerr.InvalidParameterValue, "parameter $%d: %v", i+1, err)
		}
		conv[i] = v
	}
	if err := s.refresh(); err != nil {
		return ir.Cost{}, err
	}
	if p.gen != nil && p.gen != s.p {
		// The policy was reloaded since Prepare: the client was told the
		// result's columns then, and must not get rows of another shape.
		cols, err := s.describe(ctx, p.Stmt, len(p.ParamTypes))
		if err != nil {
			return ir.Cost{}, err
		}
		if !slices.Equal(cols, p.Columns) {
			return ir.Cost{}, sqlerr.New(sqlerr.FeatureNotSupported, "cached plan must not change result type: the policy was reloaded since this statement was prepared").
				WithHint("prepare the statement again")
		}
		p.gen = s.p
	}
	return s.Exec(ctx, p.Stmt, conv, w)
}

func coerce(v ir.Value, t ColType) (ir.Value, error) {
	if k, ok := timeKinds[t]; ok {
		return coerceTime(v, k)
	}
	if v.Kind != ir.KindString {
		return v, nil
	}
	txt := strings.TrimSpace(v.Str)
	switch t {
	case TypeInt8, TypeInt4, TypeOID:
		n, err := strconv.ParseInt(txt, 10, 64)
		if err != nil {
			return v, err
		}
		return ir.Int(n), nil
	case TypeFloat8:
		f, err := strconv.ParseFloat(txt, 64)
		if err != nil {
			return v, err
		}
		return ir.Float(f), nil
	case TypeBool:
		switch strings.ToLower(txt) {
		case "t", "true", "1", "on", "yes", "y":
			return ir.Bool(true), nil
		case "f", "false", "0", "off", "no", "n":
			return ir.Bool(false), nil
		}
		return v, strconv.ErrSyntax
	}
	return v, nil
}

// describe returns the result columns of st without running a private
// query (a private aggregate's columns come from its plan).
func (s *Session) describe(ctx context.Context, st *ir.Statement, nParams int) ([]Column, error) {
	switch st.Kind {
	case ir.StmtEmpty:
		return nil, nil
	case ir.StmtExplain:
		return []Column{{Name: "QUERY PLAN", Type: TypeText}}, nil
	case ir.StmtCursor:
		return s.cursorColumns(st.Cursor)
	case ir.StmtSession:
		if st.Session.Verb != ir.SessionShow || len(st.Session.Settings) == 0 {
			return nil, nil
		}
		switch n := normalizeName(st.Session.Settings[0].Name); n {
		case "ddp.budget":
			return budgetColumns, nil
		case "all":
			return []Column{{Name: "name", Type: TypeText}, {Name: "setting", Type: TypeText}}, nil
		default:
			return []Column{{Name: n, Type: TypeText}}, nil
		}
	}
	nulls := make([]ir.Value, nParams)
	if isBudgetView(st) {
		// The columns depend on the select list, not on the arguments.
		r, err := s.budgetQuery(ctx, st, nulls)
		return r.Columns, err
	}
	if s.foreign() {
		if r, ok, err := s.catalogAnswer(ctx, st, nulls); ok {
			return r.Columns, err
		}
	}
	bound, err := s.bindStatement(st, nulls)
	if err != nil {
		return nil, err
	}
	pl, err := s.plan(ctx, bound)
	if err != nil {
		return nil, err
	}
	if pl.Class == planner.ClassPrivate {
		return privateColumns(pl), nil
	}
	// Public or catalog data: running it with NULL parameters describes
	// it (and reads nothing private).
	var out []Column
	err = s.p.backend.Stream(ctx, pl.SQL, passthroughArgs(pl, nulls), func(cols []backends.ColumnInfo) func([]ir.Value) error {
		out = typedColumns(pl, backendColumns(cols))
		return func([]ir.Value) error { return nil }
	})
	return out, err
}

// inferParams gives each parameter compared with a declared column that
// column's type (1-based; TypeUnknown when there is no such comparison).
func (s *Session) inferParams(st *ir.Statement) map[int]ColType {
	out := map[int]ColType{}
	q := st.Query
	if q == nil {
		q = rowsWhere(st)
	}
	if q == nil {
		return out
	}
	colType := func(c ir.ColumnRef) ColType {
		for _, t := range append([]ir.TableRef{q.From}, joinTables(q)...) {
			if c.Qualifier != "" && !strings.EqualFold(c.Qualifier, t.RefName()) {
				continue
			}
			if _, tbl := s.p.pol.Resolve(s.names(), t.Schema, t.Name); tbl != nil {
				if d := tbl.Column(strings.ToLower(c.Name)); d != nil {
					return policies.ResultType(d.Type)
				}
			}
		}
		return TypeUnknown
	}
	// typeOf is the type of a column, or of a date function of one (the
	// parameter a BI tool binds for date_trunc('month', t) = $1 is a
	// timestamp).
	var typeOf func(e ir.Expr) ColType
	typeOf = func(e ir.Expr) ColType {
		switch n := e.(type) {
		case ir.ColumnRef:
			return colType(n)
		case ir.Cast:
			switch n.To {
			case ir.CastDate:
				return TypeDate
			case ir.CastTimestamp:
				return TypeTimestamp
			case ir.CastTimestampTZ:
				return TypeTimestampTZ
			}
		case ir.Func:
			switch {
			case n.Name == "date_trunc" && len(n.Args) == 2:
				return typeOf(n.Args[1])
			case n.Name == "date_add" && len(n.Args) == 3:
				return typeOf(n.Args[0])
			case n.Name == "extract":
				return TypeInt8
			}
		}
		return TypeUnknown
	}
	pair := func(a, b ir.Expr) {
		p, ok := b.(ir.Param)
		other := a
		if !ok {
			p, ok = a.(ir.Param)
			other = b
		}
		if ok {
			if t := typeOf(other); t != TypeUnknown {
				out[p.Index] = t
			}
		}
	}
	visit := func(e ir.Expr) bool {
		switch n := e.(type) {
		case ir.Compare:
			pair(n.L, n.R)
		case ir.Between:
			pair(n.X, n.Lo)
			pair(n.X, n.Hi)
		case ir.In:
			for _, it := range n.List {
				pair(n.X, it)
			}
		}
		return true
	}
	ir.Walk(q.Where, visit)
	for _, g := range q.GroupBy {
		ir.Walk(g, visit) // CASE WHEN age < $1 ... as a grouping key
	}
	for i := 1; i <= st.NumParams; i++ {
		if _, ok := out[i]; !ok {
			out[i] = TypeUnknown
		}
	}
	return out
}

func joinTables(q *ir.Query) []ir.TableRef {
	out := make([]ir.TableRef, len(q.Joins))
	for i, j := range q.Joins {
		out[i] = j.Table
	}
	return out
}

// coerceTime reads a parameter of a date or time type: text is parsed
// (22007/22008 when it is not a value of the type, before any charge), a
// time value of another kind converted exactly (a date is its midnight).
// A timestamp for a date parameter stays a timestamp: the analysis then
// compares it as PostgreSQL would, or refuses it.
func coerceTime(v ir.Value, k ir.Kind) (ir.Value, error) {
	switch {
	case v.Kind == ir.KindString:
		out, err := ir.ParseTime(k, v.Str)
		switch {
		case errors.Is(err, ir.ErrTimeRange):
			return v, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date/time field value out of range in a %s parameter", k)
		case err != nil:
			return v, sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type %s in a parameter", k).
				WithHint("send dates as YYYY-MM-DD and timestamps as YYYY-MM-DD HH:MM:SS[.ffffff]")
		}
		return out, nil
	case v.IsTime():
		if out := ir.AsTime(v, k); out.Kind == k {
			return out, nil
		}
	}
	return v, nil
}
