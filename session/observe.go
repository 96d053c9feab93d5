package session

import (
	"context"
	"log/slog"
	"time"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Observer is told about every statement a session executes (the admin
// listener's metrics). It is called on the session's goroutine and must
// not block.
type Observer interface {
	Statement(Event)
}

// Statement classes of Event.Class.
const (
	ClassPrivate     = "private"     // reads a policy table: planned, charged, noised
	ClassPassthrough = "passthrough" // public or catalog tables, answered by the backend
	ClassCatalog     = "catalog"     // answered by the proxy's own catalog
	ClassSession     = "session"     // SET, SHOW, BEGIN...
	ClassExplain     = "explain"
	ClassBudget      = "budget" // SELECT ... FROM ddp.budget
	ClassRefused     = "refused"
	ClassEmpty       = "empty"
)

// Outcomes of Event.Outcome.
const (
	OutcomeFresh   = "fresh"   // a new private release, charged
	OutcomeCached  = "cached"  // an earlier release (or synopsis), free
	OutcomeFree    = "free"    // private but exact and free (no row read, keys only)
	OutcomeOK      = "ok"      // a statement that is not private
	OutcomeRefused = "refused" // answered with an error
)

// Event describes one executed statement. It holds no SQL text and no
// value.
type Event struct {
	User     string
	Class    string
	Outcome  string
	Dataset  string // private statements only
	Code     string // the SQLSTATE of an error ("" on success)
	Charged  policies.Budget
	Duration time.Duration
}

// trace is what Exec learns about a statement while running it.
type trace struct {
	start   time.Time
	class   string
	dataset string // of a private statement refused before it was planned
	plan    *planner.Plan
	// fingerprint, when set, is the statement's (shared with its audit
	// entry).
	fingerprint func() string
	res         *release.Result
}

// observe reports an executed statement to the observer and, for a
// private one, logs one info line: who, which dataset, the statement's
// fingerprint (never its text or literals), the cost and the outcome. An
// error is logged by its SQLSTATE only: error messages may quote a
// literal.
func (s *Session) observe(ctx context.Context, st *ir.Statement, tr *trace, err error) {
	ev := Event{User: s.user.Name, Class: tr.class, Outcome: OutcomeOK, Dataset: tr.dataset, Duration: time.Since(tr.start)}
	if tr.plan != nil && tr.plan.Dataset != nil {
		ev.Dataset = tr.plan.Dataset.Name
	}
	switch {
	case err != nil:
		ev.Outcome = OutcomeRefused
		ev.Code = sqlerr.As(err).Code.SQLState
	case tr.res == nil:
	case tr.res.Cached:
		ev.Outcome = OutcomeCached
	case tr.res.Charged.Epsilon > 0 || tr.res.Charged.Delta > 0:
		ev.Outcome = OutcomeFresh
		ev.Charged = tr.res.Charged
	default:
		ev.Outcome = OutcomeFree
	}
	if o := s.p.observer; o != nil {
		o.Statement(ev)
	}
	if ev.Class != ClassPrivate || !s.p.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	fp := tr.fingerprint
	if fp == nil {
		fp = func() string { return s.p.cache.Fingerprint(s.dialect, st.Text) }
	}
	// A record made here, not by Logger.LogAttrs: that one looks up its
	// caller's program counter for every record (runtime.Callers, about
	// a tenth of this line's cost), which no handler of ours prints.
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "private query", 0)
	r.AddAttrs(
		slog.String("user", ev.User),
		slog.String("dataset", ev.Dataset),
		slog.String("fingerprint", fp()),
		slog.Float64("epsilon", ev.Charged.Epsilon),
		slog.Float64("delta", ev.Charged.Delta),
		slog.String("outcome", ev.Outcome),
		slog.Float64("duration_ms", float64(ev.Duration.Microseconds())/1000),
	)
	if ev.Code != "" {
		r.AddAttrs(slog.String("sqlstate", ev.Code))
	}
	_ = s.p.log.Handler().Handle(ctx, r)
}

// privateStatement marks tr private when st names a table of the
// policy (the dataset of the first one): a statement refused before it
// was planned is still a private query then.
func (s *Session) privateStatement(st *ir.Statement, tr *trace) {
	n := s.names()
	for _, r := range st.Relations {
		if ds, _ := s.p.pol.Resolve(n, r.Schema, r.Name); ds != nil {
			tr.class, tr.dataset = ClassPrivate, ds.Name
			return
		}
	}
}

// parseFailed reports text the grammar rejected as one refused statement.
func (s *Session) parseFailed(err error) {
	if o := s.p.observer; o != nil && err != nil {
		o.Statement(Event{User: s.user.Name, Class: ClassRefused, Outcome: OutcomeRefused, Code: sqlerr.As(err).Code.SQLState})
	}
}
