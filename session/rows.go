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
