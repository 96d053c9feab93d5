package session

import (
	"context"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/catalog"
	"github.com/ddp-proxy/ddp-proxy/catalog/emulated"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// checkCatalog enforces the MySQL catalog rules a statement meets before
// the shared session (catalog.CheckMySQLInfoSchema). Statistics columns
// are the planner's business, on the syntax tree (catalog.CheckPassthrough).
func (ms *mySession) checkCatalog(st *ir.Statement) error {
	return catalog.CheckMySQLInfoSchema(ms.core.Policy().Backend.Driver, ms.env.info != nil, st.Relations)
}

// InfoSchemaFunc runs a MySQL information_schema query over the catalog
// the session describes (see Config.InfoSchema).
type InfoSchemaFunc func(ctx context.Context, sql string, args []ir.Value, database string, tables []emulated.MySQLTable) ([]ir.Column, [][]ir.Value, error)

// infoSchemaLocal reports whether st reads only information_schema and
// must be answered from the policy (the backend is not MySQL).
func (ms *mySession) infoSchemaLocal(st *ir.Statement) bool {
	if ms.core.Policy().Backend.Driver == "mysql" || ms.env.info == nil || st.Kind != ir.StmtSelect {
		return false
	}
	if len(st.Relations) == 0 {
		// A clock probe (Metabase's time-zone offset) reads no relation
		// but calls functions the backend's dialect may lack.
		for _, f := range st.Functions {
			if catalog.IsMySQLClockFunction(f) {
				return true
			}
		}
		return false
	}
	for _, r := range st.Relations {
		if !strings.EqualFold(r.Schema, "information_schema") {
			return false
		}
	}
	return true
}

// runInfoSchema answers an information_schema query from the policy.
func (ms *mySession) runInfoSchema(ctx context.Context, st *ir.Statement, args []ir.Value) (Result, error) {
	if err := catalog.CheckEmulatedMySQLFunctions(ms.core.Policy().Backend.Driver, st.Functions); err != nil {
		return Result{}, err
	}
	tables, err := ms.core.Exposed(ctx)
	if err != nil {
		return Result{}, err
	}
	cols, rows, err := ms.env.info(ctx, st.Text, args, ms.currentDatabase(), emulated.MySQLTables(tables))
	if err != nil {
		return Result{}, err
	}
	return Result{Columns: cols, Rows: rows, Tag: "SELECT " + itoa(len(rows))}, nil
}
