package session

import (
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// Backend is the backend as sessions use it (backends.Backend).
type Backend = backends.Backend

// Config is what a Proxy needs.
type Config struct {
	Policy  *policies.Policy
	Backend Backend
	Ledger  release.Ledger
	Engine  *release.Engine
	Logger  *slog.Logger
	// InfoSchema answers MySQL information_schema queries on a backend
	// that is not MySQL (catalog/emulated.QueryMySQL); nil refuses them.
	InfoSchema InfoSchemaFunc
	// Observer is told about every statement (nil: nobody).
	Observer Observer
	// MaxAllowedPacket is what MySQL sessions report as max_allowed_packet:
	// the MySQL front end's command limit, fixed when it started (0: the
	// policy's listen.max_query_bytes).
	MaxAllowedPacket int
}

// Proxy is what all sessions share for the life of the process: backend,
// ledger, engine, parse cache, logger. What is derived from the policy
// lives in a generation; a policy reload (SetPolicy) builds a new
// generation and swaps the one pointer live. Sessions move to the newest
// generation before each statement, so a statement sees one policy from
// start to end.
type Proxy struct {
	live     atomic.Pointer[generation]
	backend  Backend
	ledger   release.Ledger
	engine   *release.Engine
	cache    *parser.Cache
	render   func(*ir.BackendQuery) (string, error)
	log      *slog.Logger
	info     InfoSchemaFunc
	observer Observer
	// maxPacket is max_allowed_packet for MySQL sessions.
	maxPacket int
	// infoCols: a MySQL backend's information_schema columns, shared by
	// every generation (mysql_infoschema.go).
	infoCols *infoSchemaColumns
}

// generation is one policy and everything built from it. It embeds the
// Proxy, so a session reaches the shared parts through it too; a field
// derived from the policy belongs here, and SetPolicy needs no change
// when one is added.
type generation struct {
	*Proxy
	pol     *policies.Policy
	planner *planner.Planner
	catalog emulatedPG     // the PostgreSQL catalog for backends without one (catalog.go)
	indexes exposedIndexes // a PostgreSQL backend's indexes catalog results may show (indexes.go)
	// zoned holds the lower-case names of the policy's timestamptz
	// columns, which a session in another time zone than UTC may not read
	// (checkTimeZone).
	zoned map[string]bool
}

// newGeneration builds the generation of pol.
func (p *Proxy) newGeneration(pol *policies.Policy) *generation {
	zoned := map[string]bool{}
	for _, ds := range pol.Datasets {
		for _, t := range ds.Tables {
			for name, c := range t.Columns {
				if c.Type == policies.TypeTimestampTZ {
					zoned[strings.ToLower(name)] = true
				}
			}
		}
	}
	return &generation{Proxy: p, pol: pol, planner: planner.NewWith(pol, PlannerOptions(pol.Backend.Driver)), zoned: zoned}
}

// New returns a Proxy.
func New(cfg Config) *Proxy {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Proxy{
		backend:   cfg.Backend,
		ledger:    cfg.Ledger,
		engine:    cfg.Engine,
		cache:     parser.NewCache(4096),
		log:       log,
		info:      cfg.InfoSchema,
		infoCols:  &infoSchemaColumns{},
		observer:  cfg.Observer,
		maxPacket: cfg.MaxAllowedPacket,
	}
	if p.maxPacket <= 0 {
		p.maxPacket = cfg.Policy.Listen.MaxQueryBytes
	}
	if d := sqlrender.ByName(cfg.Policy.Backend.Driver); d != nil {
		p.render = d.Preview
	}
	p.live.Store(p.newGeneration(cfg.Policy))
	return p
}

// PlannerOptions are the planner options for a backend driver: the fixed
// limits of its SQL dialect (bind parameters, expression depth) and the
// renderer that measures a statement against them, so that a statement
// the backend would reject whatever the data is refused before anything
// is charged. An unknown driver gets no limits.
func PlannerOptions(driver string) planner.Options {
	d := sqlrender.ByName(driver)
	if d == nil {
		return planner.Options{}
	}
	return planner.Options{Limits: planner.Limits{
		Dialect:   d.Name,
		MaxParams: d.MaxParams,
		MaxDepth:  d.MaxDepth,
		Measure: func(q *ir.BackendQuery) (planner.Shape, error) {
			sh, err := d.Measure(q)
			return planner.Shape{Params: sh.Params, Depth: sh.Depth}, err
		},
	}}
}

// current returns the newest generation.
func (p *Proxy) current() *generation { return p.live.Load() }

// Policy returns the policy in force.
func (p *Proxy) Policy() *policies.Policy { return p.current().pol }

// SetPolicy swaps in a reloaded policy, atomically for new sessions and for
// the next statement of open ones. The caller has validated pol and
// prepared the backend for it; backend, ledger and engine stay. Open
// sessions whose user is no longer in pol get an error on every statement.
// Everything derived from the policy (planner, emulated catalog) starts
// afresh in the new generation.
func (p *Proxy) SetPolicy(pol *policies.Policy) { p.live.Store(p.newGeneration(pol)) }

// Open starts a session for an authenticated user speaking dialect d.
func (p *Proxy) Open(user *policies.User, d parser.Dialect, params map[string]string) *Session {
	s := &Session{p: p.current(), user: user, dialect: d, settings: map[string]string{}}
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
