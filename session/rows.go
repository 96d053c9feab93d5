package session

import (
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// A row-level read of public tables from a client of another dialect
// than the backend's is rendered by the planner (planner/rows.go) in the
// backend's dialect, with the statement's literals and bound parameters
// as its own arguments; the session streams it as any pass-through.

// passthroughArgs returns the arguments a pass-through plan's SQL binds:
// the client's for its own text, the plan's for a rendered statement.
func passthroughArgs(pl *planner.Plan, args []ir.Value) []ir.Value {
	if pl.Rendered {
		return pl.Args
	}
	return args
}

// bindRows binds the parameters of st's row reading (st is a copy the
// caller owns; cached statements are shared).
func bindRows(st *ir.Statement, args []ir.Value) error {
	if st.Rows == nil {
		return nil
	}
	r, err := st.Rows.Bind(args)
	if err != nil {
		return sqlerr.Wrap(sqlerr.InvalidParameterValue, err, err.Error())
	}
	st.Rows = r
	return nil
}

// typedRows returns w, or for a rendered read with known output types a
// writer that gives those columns the policy's types (SQLite describes
// an expression's column as untyped and stores booleans as integers) and
// converts each value that needs it. A value the type does not hold
// (SQLite keeps what it is given) is sent as the backend gave it.
func typedRows(pl *planner.Plan, w ir.RowWriter) ir.RowWriter {
	if !pl.Rendered || pl.Types == nil {
		return w
	}
	return &typedWriter{RowWriter: w, types: pl.Types}
}

type typedWriter struct {
	ir.RowWriter
	types []ir.ColType
	apply []ir.ColType // per column: the type to convert to, TypeUnknown for none
}

func (t *typedWriter) Columns(cols []Column) error {
	cols, t.apply = retype(t.types, cols)
	return t.RowWriter.Columns(cols)
}

// retype gives cols the types that convertible allows, returning the
// conversions to make per column (TypeUnknown: none).
func retype(types []ir.ColType, cols []Column) ([]Column, []ir.ColType) {
	if len(cols) != len(types) {
		return cols, nil
	}
	apply := make([]ir.ColType, len(cols))
	out := append([]Column(nil), cols...)
	for i, ct := range types {
		apply[i] = ir.TypeUnknown
		if ct != ir.TypeUnknown && ct != cols[i].Type && convertible(cols[i].Type, ct) {
			out[i].Type, apply[i] = ct, ct
		}
	}
	return out, apply
}

// typedColumns is a prepared statement's description of a rendered read,
// typed as typedRows types its answer.
func typedColumns(pl *planner.Plan, cols []Column) []Column {
	if !pl.Rendered || pl.Types == nil {
		return cols
	}
	out, _ := retype(pl.Types, cols)
	return out
}

// rowsWhere is the tables and WHERE of st's row reading as a Query, for
// typing its parameters (inferParams); nil when there is none.
func rowsWhere(st *ir.Statement) *ir.Query {
	if st.Rows == nil {
		return nil
	}
	return &ir.Query{From: st.Rows.From, Joins: st.Rows.Joins, Where: st.Rows.Where}
}

// convertible reports whether a backend column typed from as text or an
// integer may be sent as to: the conversions typedWriter.Row makes.
func convertible(from, to ir.ColType) bool {
	switch to {
	case ir.TypeInt8, ir.TypeFloat8, ir.TypeBool:
		return from == ir.TypeText || from == ir.TypeInt8
	}
	return false
}

func (t *typedWriter) Row(row []ir.Value) error {
	for i, ct := range t.apply {
		v := row[i]
		switch {
		case ct == ir.TypeBool && v.Kind == ir.KindInt:
			row[i] = ir.Bool(v.Int != 0)
		case ct == ir.TypeFloat8 && v.Kind == ir.KindInt:
			row[i] = ir.Float(float64(v.Int))
		}
	}
	return t.RowWriter.Row(row)
}
