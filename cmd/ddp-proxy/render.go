package main

import (
	"fmt"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// renderer renders backend queries in the dialect of the policy's backend,
// for explain output: the SQL with its placeholders, then the bound values.
func renderer(pol *policies.Policy) func(*ir.BackendQuery) (string, error) {
	var d *sqlrender.Dialect
	switch pol.Backend.Driver {
	case "postgres":
		d = sqlrender.Postgres()
	case "sqlite":
		d = sqlrender.SQLite()
	default:
		return nil
	}
	return func(q *ir.BackendQuery) (string, error) {
		st, err := d.Render(q)
		if err != nil {
			return "", err
		}
		if len(st.Args) == 0 {
			return st.SQL, nil
		}
		args := make([]string, len(st.Args))
		for i, a := range st.Args {
			args[i] = fmt.Sprintf("%v", a)
		}
		return st.SQL + " -- args: " + strings.Join(args, ", "), nil
	}
}
