package session

import (
	"context"
	"sync"

	"github.com/ddp-proxy/ddp-proxy/catalog"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// infoSchemaColumns holds a MySQL backend's information_schema column
// lists, read on the first information_schema query (a failed read is
// retried on the next one). They describe the server, not the policy, so
// every policy generation shares them.
type infoSchemaColumns struct {
	mu   sync.Mutex
	info *catalog.MySQLInfoSchema
}

func (p *Proxy) mysqlInfoSchema(ctx context.Context) (*catalog.MySQLInfoSchema, error) {
	c := p.infoCols
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.info != nil {
		return c.info, nil
	}
	var rows [][4]string
	err := p.backend.Rows(ctx, catalog.MySQLInfoSchemaQuery, nil, func(_ []string, row []ir.Value) error {
		if len(row) != 4 {
			return sqlerr.New(sqlerr.Internal, "internal error: information_schema.COLUMNS returned %d columns", len(row))
		}
		rows = append(rows, [4]string{row[0].Text(), row[1].Text(), row[2].Text(), row[3].Text()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	info, err := catalog.NewMySQLInfoSchema(rows)
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.FeatureNotSupported, err, "information_schema queries cannot be checked on this backend: "+err.Error())
	}
	c.info = info
	return info, nil
}

// plan plans a bound SELECT with what the backend's catalog tells
// (planRequest): a MySQL backend's information_schema column lists, a
// PostgreSQL backend's relations with statistics columns.
func (s *Session) plan(ctx context.Context, st *ir.Statement) (*planner.Plan, error) {
	req, err := s.planRequest(ctx, st)
	if err != nil {
		return nil, err
	}
	return s.p.planner.Plan(req)
}

// tableCaser is a backend that says whether it compares table names
// case-sensitively (a MySQL server with lower_case_table_names = 0).
type tableCaser interface{ ExactTableNames() bool }

// exactTableNames reports whether a MySQL client's table names must match
// exactly (policies.Names): only on a backend that says so; the embedded
// SQLite and PostgreSQL (through the MySQL front end) compare them
// case-insensitively, as lower_case_table_names = 1 does.
func (p *Proxy) exactTableNames() bool {
	tc, ok := p.backend.(tableCaser)
	return ok && tc.ExactTableNames()
}
