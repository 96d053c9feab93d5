package session

import (
	"context"
	"strings"

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
	s := h.p.Open(u, parser.Postgres, params)
	settings, err := startupSettings(params)
	if err != nil {
		return nil, err
	}
	for _, st := range settings {
		if err := s.set(st[0], st[1], false); err != nil {
			return nil, err
		}
	}
	return &pgSession{s: s}, nil
}

// startupSettings are the settings a PostgreSQL client gives at startup:
// client_min_messages and statement_timeout as startup parameters of
// their own, and every
// "-c name=value" or "--name=value" in the options parameter (libpq's
// PGOPTIONS), in order, as SET would apply them. Other startup parameters
// (DateStyle, TimeZone, extra_float_digits that drivers send) keep being
// ignored: the proxy answers in its own fixed formats.
func startupSettings(params map[string]string) ([][2]string, error) {
	var out [][2]string
	// Startup parameters of their own that the proxy honours (pgx puts a
	// DSN's statement_timeout=5000 there).
	for _, k := range []string{"client_min_messages", "statement_timeout"} {
		if v, ok := params[k]; ok {
			out = append(out, [2]string{k, v})
		}
	}
	args := splitOptions(params["options"])
	for i := 0; i < len(args); i++ {
		a := args[i]
		var nv string
		switch {
		case a == "-c" && i+1 < len(args):
			i++
			nv = args[i]
		case strings.HasPrefix(a, "-c") && len(a) > 2:
			nv = a[2:]
		case strings.HasPrefix(a, "--") && len(a) > 2:
			nv = a[2:]
			if k, v, ok := strings.Cut(nv, "="); ok {
				nv = strings.ReplaceAll(k, "-", "_") + "=" + v
			}
		default:
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "startup option %q is not supported by the privacy proxy", a).
				WithHint("options may only set parameters: -c name=value or --name=value")
		}
		k, v, ok := strings.Cut(nv, "=")
		if !ok || k == "" {
			return nil, sqlerr.New(sqlerr.SyntaxError, "-c %s requires a value", nv)
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

// splitOptions splits the options startup parameter at unescaped
// whitespace; a backslash makes the next character literal (libpq's
// PGOPTIONS="-c search_path=a\\ b"), as PostgreSQL's pg_split_opts does.
func splitOptions(s string) []string {
	var out []string
	var b strings.Builder
	in, esc := false, false
	for _, r := range s {
		switch {
		case esc:
			b.WriteRune(r)
			esc = false
		case r == '\\':
			esc, in = true, true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v':
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
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
