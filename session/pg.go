package session

import (
	"context"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
	"github.com/ddp-proxy/ddp-proxy/wire/pgwire"
)

// PG adapts a Proxy to the PostgreSQL front end.
type PG struct{ p *Proxy }

var (
	_ pgwire.Handler = PG{}
	_ pgwire.Session = (*pgSession)(nil)
)

// PGHandler returns the pgwire.Handler of the proxy.
func (p *Proxy) PGHandler() PG { return PG{p} }

// LookupUser returns the user's credentials for the PostgreSQL front end.
func (h PG) LookupUser(name string) (pgwire.UserAuth, bool) {
	pol := h.p.Policy()
	u := pol.User(name)
	if u == nil {
		return pgwire.UserAuth{}, false
	}
	if pol.Listen.Auth == policies.AuthTrust {
		return pgwire.UserAuth{Trust: true}, true
	}
	switch {
	case u.SCRAMSHA256 != "":
		return pgwire.UserAuth{SCRAMVerifier: u.SCRAMSHA256}, true
	case u.Password != "":
		return pgwire.UserAuth{Password: u.Password}, true
	}
	// Only a MySQL hash: this user cannot log in over PostgreSQL.
	return pgwire.UserAuth{}, false
}

// NewSession starts a PostgreSQL session.
func (h PG) NewSession(_ context.Context, user string, params map[string]string) (pgwire.Session, error) {
	u := h.p.Policy().User(user)
	if u == nil {
		return nil, sqlerr.New(sqlerr.InvalidAuthorization, "role %q does not exist", user)
	}
	return &pgSession{s: h.p.Open(u, parser.Postgres, params)}, nil
}

// pgSession is the PostgreSQL adapter of a Session: the front end's
// RowWriter goes to the session core as it is.
type pgSession struct{ s *Session }

func (ps *pgSession) Query(ctx context.Context, sql string, w ir.RowWriter) error {
	return ps.s.Query(ctx, sql, w)
}

func (ps *pgSession) Prepare(ctx context.Context, sql string, declared []ir.ColType) (*pgwire.Prepared, error) {
	p, err := ps.s.Prepare(ctx, sql, declared)
	if err != nil {
		return nil, err
	}
	return &pgwire.Prepared{SQL: sql, State: p, ParamTypes: p.ParamTypes, Columns: p.Columns}, nil
}

func (ps *pgSession) Execute(ctx context.Context, p *pgwire.Prepared, args []ir.Value, w ir.RowWriter) error {
	prep, ok := p.State.(*Prepared)
	if !ok {
		return sqlerr.New(sqlerr.Internal, "internal error: statement prepared elsewhere")
	}
	_, err := ps.s.Execute(ctx, prep, args, w)
	return err
}

func (ps *pgSession) ParameterStatus() map[string]string { return ps.s.ParameterStatus() }
func (ps *pgSession) Close()                             {}

// TxStatus reports BEGIN ... COMMIT blocks. Nothing is ever run in a
// backend transaction, so a block never enters the failed state.
func (ps *pgSession) TxStatus() byte {
	if ps.s.InTransaction() {
		return pgwire.TxInBlock
	}
	return pgwire.TxIdle
}
