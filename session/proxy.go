package session

import (
	"context"
	"log/slog"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// Backend is the backend as sessions use it: the planner's interface plus
// pass-through results with their column descriptions.
type Backend interface {
	planner.Backend
	Result(ctx context.Context, text string, args []ir.Value) ([]backends.ColumnInfo, [][]ir.Value, error)
}

// Config is what a Proxy needs.
type Config struct {
	Policy  *policies.Policy
	Backend Backend
	Ledger  *ledger.Ledger
	Engine  *release.Engine
	Logger  *slog.Logger
	// InfoSchema answers MySQL information_schema queries on a backend
	// that is not MySQL (session/mysqlcatalog.Query); nil refuses them.
	InfoSchema InfoSchemaFunc
}

// Proxy is shared by all sessions.
type Proxy struct {
	pol     *policies.Policy
	planner *planner.Planner
	backend Backend
	ledger  *ledger.Ledger
	engine  *release.Engine
	cache   *parser.Cache
	render  func(*ir.BackendQuery) (string, error)
	log     *slog.Logger
	info    InfoSchemaFunc
}

// New returns a Proxy.
func New(cfg Config) *Proxy {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Proxy{
		pol:     cfg.Policy,
		planner: planner.New(cfg.Policy),
		backend: cfg.Backend,
		ledger:  cfg.Ledger,
		engine:  cfg.Engine,
		cache:   parser.NewCache(4096),
		log:     log,
		info:    cfg.InfoSchema,
	}
	if d := sqlrender.ByName(cfg.Policy.Backend.Driver); d != nil {
		p.render = d.Preview
	}
	return p
}

// Open starts a session for an authenticated user speaking dialect d.
func (p *Proxy) Open(user *policies.User, d parser.Dialect, params map[string]string) *Session {
	s := &Session{p: p, user: user, dialect: d, settings: map[string]string{}}
	for k, v := range defaultSettings(user.Name) {
		s.settings[k] = v
	}
	if v := params["application_name"]; v != "" {
		s.settings["application_name"] = v
	}
	if v := params["database"]; v != "" {
		s.settings["database"] = v
	}
	return s
}
