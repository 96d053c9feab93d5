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

type pgSession struct{ s *Session }

func (ps *pgSession) Query(ctx context.Context, sql string) ([]pgwire.Result, error) {
	rs, err := ps.s.Query(ctx, sql)
	out := make([]pgwire.Result, len(rs))
	for i, r := range rs {
		out[i] = toPG(r)
	}
	return out, err
}

func (ps *pgSession) Prepare(ctx context.Context, sql string, paramTypes []uint32) (*pgwire.Prepared, error) {
	declared := make([]ColType, len(paramTypes))
	for i, oid := range paramTypes {
		declared[i] = typeOfOID(oid)
	}
	p, err := ps.s.Prepare(ctx, sql, declared)
	if err != nil {
		return nil, err
	}
	out := &pgwire.Prepared{SQL: sql, State: p}
	for _, t := range p.ParamTypes {
		out.ParamTypes = append(out.ParamTypes, pgType(t))
	}
	if p.Columns != nil {
		out.Columns = pgColumns(p.Columns)
	}
	return out, nil
}

func (ps *pgSession) Execute(ctx context.Context, p *pgwire.Prepared, args []ir.Value) (pgwire.Result, error) {
	prep, ok := p.State.(*Prepared)
	if !ok {
		return pgwire.Result{}, sqlerr.New(sqlerr.Internal, "internal error: statement prepared elsewhere")
	}
	r, err := ps.s.Execute(ctx, prep, args)
	return toPG(r), err
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

// typeOfOID maps a client-declared parameter OID.
func typeOfOID(oid uint32) ColType {
	switch oid {
	case 20, 21:
		return TypeInt8
	case 23:
		return TypeInt4
	case 700, 701, 1700:
		return TypeFloat8
	case 16:
		return TypeBool
	case 25, 1043, 19:
		return TypeText
	case 1082:
		return TypeDate
	case 1114:
		return TypeTimestamp
	case 1184:
		return TypeTimestampTZ
	}
	return TypeUnknown
}

func pgType(t ColType) pgwire.Type {
	switch t {
	case TypeInt8:
		return pgwire.TypeInt8
	case TypeInt4:
		return pgwire.TypeInt4
	case TypeFloat8:
		return pgwire.TypeFloat8
	case TypeBool:
		return pgwire.TypeBool
	case TypeName:
		return pgwire.TypeName
	case TypeOID:
		return pgwire.TypeOID
	case TypeDate:
		return pgwire.TypeDate
	case TypeTimestamp:
		return pgwire.TypeTimestamp
	case TypeTimestampTZ:
		return pgwire.TypeTimestampTZ
	}
	return pgwire.TypeText
}

func pgColumns(cs []Column) []pgwire.Column {
	out := make([]pgwire.Column, len(cs))
	for i, c := range cs {
		out[i] = pgwire.Column{Name: c.Name, Type: pgType(c.Type)}
	}
	return out
}

func toPG(r Result) pgwire.Result {
	out := pgwire.Result{Rows: r.Rows, Tag: r.Tag, Empty: r.Empty}
	if r.Columns != nil {
		out.Columns = pgColumns(r.Columns)
	}
	for _, n := range r.Notices {
		out.Notices = append(out.Notices, pgwire.Notice{Message: n})
	}
	return out
}
