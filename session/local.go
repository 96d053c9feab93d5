package session

import (
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// localAnswer answers SELECT version(), current_database() and friends
// when the backend cannot (a backend of another dialect): clients send
// them on connect. ok is false when the statement is not such a query
// (the parser's ir.Statement.Local lists its items; every one must be a
// session function named here).
func (s *Session) localAnswer(st *ir.Statement) (Result, bool) {
	if len(st.Local) == 0 {
		return Result{}, false
	}
	var r Result
	row := make([]ir.Value, 0, len(st.Local))
	for _, it := range st.Local {
		if it.Kind != ir.LocalFunc {
			return Result{}, false
		}
		var v string
		switch it.Name {
		case "version":
			v = "PostgreSQL " + ServerVersion + " (ddp-proxy privacy proxy)"
		case "current_database", "current_catalog":
			v = s.settings["database"]
			if v == "" {
				v = "ddp"
			}
		case "current_schema":
			v = "public"
		case "current_user", "session_user", "user":
			v = s.user.Name
		default:
			return Result{}, false
		}
		r.Columns = append(r.Columns, Column{Name: it.Output, Type: TypeText})
		row = append(row, ir.String(v))
	}
	r.Rows = [][]ir.Value{row}
	r.Tag = "SELECT 1"
	return r, true
}
