package planner

import (
	"strings"

	"github.com/ddp-proxy/ddp-proxy/catalog"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// isCatalog reports whether r is a relation of the backend's catalog. On
// a MySQL backend that is information_schema only: pg_catalog and pg_
// names mean nothing there, and a table called pg_people is a table like
// any other, private unless the policy says otherwise.
func (p *Planner) isCatalog(r ir.TableRef) bool {
	if backendDialect(p.pol) == "mysql" {
		return strings.EqualFold(r.Schema, "information_schema")
	}
	return isCatalogSchema(r.Schema) || r.Schema == "" && isCatalogRelation(r.Name)
}

// readsInfoSchema reports whether st reads MySQL's information_schema.
func readsInfoSchema(st *ir.Statement) bool {
	for _, r := range st.Relations {
		if strings.EqualFold(r.Schema, "information_schema") {
			return true
		}
	}
	return false
}

// checkMySQLCatalog checks a pass-through statement that reads
// information_schema on a MySQL backend on its TiDB syntax tree and
// returns the text to forward (catalog.RewriteMySQL). The statement is
// parsed afresh, because the rewrite changes the tree and parsed
// statements are cached and shared.
func checkMySQLCatalog(st *ir.Statement, info *catalog.MySQLInfoSchema) (string, error) {
	if info == nil {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "information_schema queries need the backend's information_schema column lists, which were not read").
			WithHint("run the query through the proxy (ddp-proxy serve), which reads them from the backend")
	}
	return catalog.RewriteMySQL(st.Text, parser.MySQLTree, info, st.NumParams)
}
