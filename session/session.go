package session

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ddp-proxy/ddp-proxy/aggregate"
	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/catalog"
	"github.com/ddp-proxy/ddp-proxy/catalog/emulated"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// The result vocabulary is ir's (ir.Column, ir.ColType): one mapping of
// column types, which each wire front end maps to its protocol once. The
// names below keep session's callers short.
type (
	ColType = ir.ColType
	Column  = ir.Column
)

const (
	TypeText        = ir.TypeText
	TypeInt8        = ir.TypeInt8
	TypeFloat8      = ir.TypeFloat8
	TypeBool        = ir.TypeBool
	TypeInt4        = ir.TypeInt4
	TypeName        = ir.TypeName
	TypeOID         = ir.TypeOID
	TypeDate        = ir.TypeDate
	TypeTimestamp   = ir.TypeTimestamp
	TypeTimestampTZ = ir.TypeTimestampTZ
)

// Result is an answer the proxy computes itself — a session statement,
// EXPLAIN, the budget view, a local or emulated-catalog answer — small
// and held whole; write sends it to a RowWriter. Private and pass-through
// answers are never built as a Result: their rows go to the writer as
// they come.
type Result struct {
	Columns []Column // nil: no rows (a command)
	Rows    [][]ir.Value
	Tag     string // PostgreSQL command tag ("SELECT 2", "SET")
	Empty   bool
	Notices []string
}

// write sends r to w and returns its cost (none: the proxy's own answers
// read no private row).
func (r Result) write(w ir.RowWriter) (ir.Cost, error) {
	cost := ir.Cost{Notices: r.Notices}
	if r.Columns != nil {
		if err := w.Columns(r.Columns); err != nil {
			return cost, err
		}
		for _, row := range r.Rows {
			if err := w.Row(row); err != nil {
				return cost, err
			}
		}
	}
	return cost, w.Complete(ir.Completion{Tag: r.Tag, Empty: r.Empty, Cost: cost})
}

// Session is one connection's state: who, in which dialect, and what it
// has SET. What the policy decides (the planner, the emulated catalog)
// is in the policy generation p, which the session leaves for the newest
// one before each statement. It is used by one goroutine at a time.
type Session struct {
	p        *generation
	user     *policies.User
	dialect  parser.Dialect
	epsilon  float64 // 0: the user's default
	settings map[string]string
	// stmtTimeout is the client's statement timeout (statement_timeout,
	// max_execution_time or max_statement_time; 0: none), timeout.go.
	stmtTimeout time.Duration
	// mysqlZone is a MySQL client's time_zone ("" or SYSTEM: UTC).
	mysqlZone string
	// local holds what SET LOCAL replaced in the current transaction
	// (settings.go, setScoped).
	local map[string]localSetting
	// implicitTx is set while the statements of one multi-statement
	// query string run (PostgreSQL's implicit transaction block).
	implicitTx bool
	inTx       bool
	cursors    map[string]*cursor // open SQL-level cursors (cursor.go)
}

// User returns the session's user.
func (s *Session) User() *policies.User { return s.user }

// InTransaction reports whether a BEGIN is open (for ReadyForQuery).
func (s *Session) InTransaction() bool { return s.inTx }

// SetDatabase records the client's current database (MySQL's USE).
func (s *Session) SetDatabase(name string) { s.settings["database"] = name }

// Query runs every statement of sql in order, each answer written to w,
// stopping at the first error.
func (s *Session) Query(ctx context.Context, sql string, w ir.RowWriter) error {
	stmts, err := s.p.cache.Parse(s.dialect, sql)
	if err != nil {
		s.parseFailed(err)
		return err
	}
	if len(stmts) > 1 && !s.inTx {
		// Several statements in one query string run in an implicit
		// transaction block (PostgreSQL): a SET LOCAL among them lasts
		// until the string ends.
		s.implicitTx = true
		defer func() {
			s.implicitTx = false
			if !s.inTx {
				s.endLocalSettings()
			}
		}()
	}
	for i := range stmts {
		if _, err := s.Exec(ctx, &stmts[i], nil, w); err != nil {
			return err
		}
	}
	return nil
}

// refresh moves the session to the newest policy generation (after a
// reload) and re-reads its user there: budgets and limits changed by the
// reload apply from the next statement on.
func (s *Session) refresh() error {
	cur := s.p.current()
	if cur == s.p {
		return nil
	}
	u := cur.pol.User(s.user.Name)
	if u == nil {
		return sqlerr.New(sqlerr.InvalidAuthorization, "user %s was removed from the policy by a reload", s.user.Name).
			WithHint("reconnect as a user the policy declares")
	}
	s.p, s.user = cur, u
	return nil
}

// Exec runs one parsed statement with bound arguments (for its $n / ?),
// writing its answer to w as it is produced, and returns what it cost.
// On an error nothing more is written; rows already written stay written
// (a backend that fails in the middle of a pass-through result).
func (s *Session) Exec(ctx context.Context, st *ir.Statement, args []ir.Value, w ir.RowWriter) (ir.Cost, error) {
	tr := trace{start: time.Now(), class: ClassRefused}
	sctx, cancel := s.withStatementTimeout(ctx)
	cost, err := s.exec(sctx, st, args, w, &tr)
	err = timedOut(sctx, err)
	cancel()
	s.observe(ctx, st, &tr, err)
	return cost, err
}

// exec is Exec; it records in tr what the statement turned out to be.
// A statement is answered by the proxy itself (own), else planned: a
// pass-through plan streams from the backend, a private one is released.
func (s *Session) exec(ctx context.Context, st *ir.Statement, args []ir.Value, w ir.RowWriter, tr *trace) (ir.Cost, error) {
	if err := s.refresh(); err != nil {
		return ir.Cost{}, err
	}
	if r, ok, err := s.own(ctx, st, args, tr); ok {
		if err != nil {
			return ir.Cost{}, err
		}
		return r.write(w)
	}
	tr.class = ClassRefused
	s.privateStatement(st, tr)
	pl, err := s.planBound(ctx, st, args)
	if err != nil {
		return ir.Cost{}, err
	}
	if pl.Class == planner.ClassPassthrough {
		tr.class = ClassPassthrough
		return ir.Cost{}, s.passthrough(ctx, pl.SQL, passthroughArgs(pl, args), typedRows(pl, w))
	}
	return s.private(ctx, st, pl, w, tr)
}

// own answers the statements the proxy answers itself, without the
// planner: ok is false for the others.
func (s *Session) own(ctx context.Context, st *ir.Statement, args []ir.Value, tr *trace) (r Result, ok bool, err error) {
	switch st.Kind {
	case ir.StmtEmpty:
		tr.class = ClassEmpty
		return Result{Empty: true}, true, nil
	case ir.StmtRefused:
		s.privateStatement(st, tr)
		return Result{}, true, st.Refused
	case ir.StmtSession:
		tr.class = ClassSession
		if v := st.Session.Verb; v == ir.SessionCommit || v == ir.SessionRollback {
			s.endTransaction()
		}
		r, err = s.sessionStatement(ctx, st.Session)
		return r, true, err
	case ir.StmtCursor:
		tr.class = ClassSession
		r, err = s.cursorStatement(ctx, st.Cursor, args, tr)
		return r, true, err
	case ir.StmtExplain:
		tr.class = ClassExplain
		r, err = s.explain(ctx, st.Explain, args)
		return r, true, err
	}
	if isBudgetView(st) {
		tr.class = ClassBudget
		r, err = s.budgetQuery(ctx, st, args)
		return r, true, err
	}
	if err := budgetWithOthers(st); err != nil {
		return Result{}, true, err
	}
	tr.class = ClassCatalog
	// psql's \dt is answered from the policy on every backend, so that
	// tables the policy does not expose are never listed.
	if r, ok := s.psqlListRelations(st); ok {
		return r, true, nil
	}
	if r, ok, err := s.setConfig(ctx, st, args); ok {
		return r, true, err
	}
	if !s.foreign() {
		return Result{}, false, nil
	}
	if len(st.Relations) == 0 {
		if r, ok := s.localAnswer(st); ok {
			return r, true, nil
		}
	}
	return s.catalogAnswer(ctx, st, args)
}

// foreign reports whether the client speaks another dialect than the
// backend: its catalog and its server functions are then the proxy's.
func (s *Session) foreign() bool { return s.dialect.String() != s.p.pol.Backend.Driver }

// planBound binds st's parameters and plans it.
func (s *Session) planBound(ctx context.Context, st *ir.Statement, args []ir.Value) (*planner.Plan, error) {
	bound, err := s.bindStatement(st, args)
	if err != nil {
		return nil, err
	}
	return s.plan(ctx, bound)
}

// private runs a private plan through the release engine and writes the
// released rows. The release holds the noisy rows (post-processing —
// HAVING, windows, ORDER BY — needs them all); they go to w from there,
// not copied into another result first.
func (s *Session) private(ctx context.Context, st *ir.Statement, pl *planner.Plan, w ir.RowWriter, tr *trace) (ir.Cost, error) {
	tr.class, tr.plan = ClassPrivate, pl
	// One fingerprint for the audit entry and the log line.
	d, text, cache := s.dialect, st.Text, s.p.cache
	tr.fingerprint = sync.OnceValue(func() string { return cache.Fingerprint(d, text) })
	res, err := s.p.engine.RunQuery(ctx, s.user, pl, release.Query{Text: text, Fingerprint: tr.fingerprint})
	tr.res = res
	if pad := s.p.pol.Listen.MinResponse(); pad > 0 {
		err = holdPrivateAnswer(ctx, tr.start.Add(pad), err)
	}
	if err != nil {
		return ir.Cost{}, err
	}
	cost := ir.Cost{Private: true, Cached: res.Cached, Epsilon: res.Charged.Epsilon, Delta: res.Charged.Delta}
	if s.wantsNotices() {
		cost.Notices = []string{costNotice(pl, res)}
		if !res.Cached && !res.NoRows {
			if n := s.timeNotice(st); n != "" {
				cost.Notices = append(cost.Notices, n)
			}
		}
	}
	if err := w.Columns(privateColumns(pl)); err != nil {
		return cost, err
	}
	for _, row := range res.Rows {
		if err := w.Row(row); err != nil {
			return cost, err
		}
	}
	return cost, w.Complete(ir.Completion{Tag: "SELECT " + strconv.Itoa(len(res.Rows)), Cost: cost})
}

// catalogDescriber is implemented by backends whose catalog has relations
// with statistics columns (PostgreSQL): it describes them, once per pool.
type catalogDescriber interface {
	CatalogRelations(ctx context.Context) (*catalog.Relations, error)
}

// planRequest is the planner's request for a bound statement. When the
// statement reads a catalog relation of a backend that describes its
// catalog, the description comes along: the planner reads relations with
// statistics columns through derived tables built from it.
func (s *Session) planRequest(ctx context.Context, st *ir.Statement) (planner.Request, error) {
	req := planner.Request{User: s.user, Epsilon: s.epsilon, Dialect: s.dialect.String(), Statement: st}
	if n := s.names(); n.Dialect == "mysql" {
		req.Database = n.Database
		req.ExactTableNames = n.ExactTableNames
	}
	if s.p.pol.Backend.Driver == "mysql" {
		for _, r := range st.Relations {
			if strings.EqualFold(r.Schema, "information_schema") {
				info, err := s.p.mysqlInfoSchema(ctx)
				if err != nil {
					return req, err
				}
				req.MySQLInfoSchema = info
				break
			}
		}
	}
	cd, ok := s.p.backend.(catalogDescriber)
	if !ok {
		return req, nil
	}
	for _, r := range st.Relations {
		schema := strings.ToLower(r.Schema)
		if schema == "pg_catalog" || schema == "information_schema" || schema == "" && strings.HasPrefix(strings.ToLower(r.Name), "pg_") {
			rels, err := cd.CatalogRelations(ctx)
			if err != nil {
				return req, err
			}
			req.Catalog = rels
			break
		}
	}
	return req, nil
}

// holdPrivateAnswer delays a private answer (err is its outcome) until
// deadline, listen.min_response_ms after the statement arrived, so that a
// client cannot time the backend: whether a predicate is slow on matching
// rows, or how many rows reach a slow part of it, would otherwise show in
// the response time (README, "Timing"). Fresh, cached and failed answers
// are held alike; only a backend slower than the padding shows through,
// up to the statement timeout.
//
// The wait ignores ctx. A cancel that arrives before the deadline yields
// the cancel error even if the answer was ready (it stays charged, and a
// repeat is served from the release): otherwise cancelling at time t
// would tell whether the backend had finished by t.
func holdPrivateAnswer(ctx context.Context, deadline time.Time, err error) error {
	if d := time.Until(deadline); d > 0 {
		t := time.NewTimer(d)
		<-t.C
	}
	if cerr := ctx.Err(); cerr != nil {
		return sqlerr.Canceled(cerr)
	}
	return err
}

// bindStatement returns st with its parameters bound (a copy; cached
// statements are shared), then its current time bound (BindTime).
func (s *Session) bindStatement(st *ir.Statement, args []ir.Value) (*ir.Statement, error) {
	if err := s.checkTimeZone(st); err != nil {
		return nil, err
	}
	if st.NumParams > len(args) {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "the statement has %d parameters but %d values were bound", st.NumParams, len(args))
	}
	if (st.Query == nil && st.Rows == nil) || st.NumParams == 0 {
		return BindTime(st, time.Now(), s.dialect == parser.MySQL)
	}
	c := *st
	if st.Query != nil {
		q, err := st.Query.Bind(args)
		if err != nil {
			return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, err, err.Error())
		}
		c.Query = q
	}
	if err := bindRows(&c, args); err != nil {
		return nil, err
	}
	return BindTime(&c, time.Now(), s.dialect == parser.MySQL)
}

// passthrough streams a public or catalog query's rows from the backend
// to w, each row filtered on the way (statistics blanked, relations the
// policy does not expose dropped): nothing is held.
func (s *Session) passthrough(ctx context.Context, sql string, args []ir.Value, w ir.RowWriter) error {
	s.p.loadExposedIndexes(ctx)
	n := 0
	var werr error
	err := s.p.backend.Stream(ctx, sql, args, func(bcols []backends.ColumnInfo) func([]ir.Value) error {
		cols := backendColumns(bcols)
		keep := s.passthroughFilter(cols)
		if werr = w.Columns(cols); werr != nil {
			return func([]ir.Value) error { return werr }
		}
		return func(row []ir.Value) error {
			if !keep(row) {
				return nil
			}
			n++
			werr = w.Row(row)
			return werr
		}
	})
	switch {
	case werr != nil:
		return werr // the client went away: the backend's error is ours
	case err != nil:
		return err
	}
	return w.Complete(ir.Completion{Tag: "SELECT " + strconv.Itoa(n)})
}

// passthroughFilter returns the per-row filter of a pass-through result,
// decided once for its columns: statistics columns (SELECT * FROM pg_class
// and the like) stay, since clients expect them, but are blanked; rows
// naming relations the policy does not expose are dropped
// (catalog.ExposedRows).
func (s *Session) passthroughFilter(cols []Column) func(row []ir.Value) bool {
	names := columnNames(cols)
	stats := catalog.StatisticsIndexes(names)
	exposed := catalog.ExposedRows(s.p.pol, names, s.p.exposedIndex)
	var times []int
	for i, c := range cols {
		if _, ok := timeKinds[c.Type]; ok {
			times = append(times, i)
		}
	}
	return func(row []ir.Value) bool {
		for _, i := range times {
			row[i] = ir.AsTime(row[i], timeKinds[cols[i].Type])
		}
		catalog.BlankRow(stats, row)
		return exposed == nil || exposed(row)
	}
}

// backendColumns maps a backend's column descriptions to result columns.
func backendColumns(bcols []backends.ColumnInfo) []Column {
	cols := make([]Column, len(bcols))
	for i, c := range bcols {
		cols[i] = Column{Name: c.Name, Type: backends.ResultType(c.Type)}
	}
	return cols
}

// timeKinds are the result types whose values are sent in the front end's
// own date format (now() read through a pass-through, Metabase's probe).
var timeKinds = map[ColType]ir.Kind{TypeDate: ir.KindDate, TypeTimestamp: ir.KindTimestamp, TypeTimestampTZ: ir.KindTimestampTZ}

// exposedType is the result type of a column an emulated catalog shows:
// its declared type, or for one read from the backend, the backend's.
func exposedType(c emulated.ExposedColumn) ColType {
	if c.PolicyType == "" {
		return backends.ResultType(c.BackendType)
	}
	return policies.ResultType(c.PolicyType)
}

// privateColumns describes a private plan's visible output.
func privateColumns(pl *planner.Plan) []Column {
	vis := pl.Visible()
	cols := make([]Column, len(vis))
	for i, o := range vis {
		cols[i] = Column{Name: o.Name, Type: policies.ResultType(o.Type)}
	}
	return cols
}

// costNotice states what an answer cost and how noisy each column is
// (DESIGN.md: every answer states its cost).
func costNotice(pl *planner.Plan, res *release.Result) string {
	var b strings.Builder
	b.Grow(256) // a typical notice: one allocation instead of three
	switch {
	case res.NoRows:
		fmt.Fprintf(&b, "ddp: the answer has no row whatever the data (LIMIT 0, or a WHERE or HAVING that is always false): answered without the table, at no cost; ε left on %s: %g", pl.Dataset.Name, res.Remaining.Epsilon)
		return b.String()
	case pl.KeysOnly:
		fmt.Fprintf(&b, "ddp: no aggregate: the answer is the GROUP BY's key set, public by the policy (declared or derived from it), exact and at no cost; ε left on %s: %g", pl.Dataset.Name, res.Remaining.Epsilon)
		return b.String()
	case res.Cached && pl.Synopsis != nil:
		fmt.Fprintf(&b, "ddp: answered from the %s synopsis of %s.%s released earlier at ε = %g, at no cost; ε left on %s: %g",
			pl.Synopsis.Spec.Mechanism, pl.Synopsis.Spec.Table, pl.Synopsis.Spec.Column, pl.Synopsis.Epsilon, pl.Dataset.Name, res.Remaining.Epsilon)
	case res.Cached:
		b.WriteString("ddp: repeated query answered from the earlier release at no cost; ε left on ")
		b.WriteString(pl.Dataset.Name)
		b.WriteString(": ")
		writeG(&b, res.Remaining.Epsilon)
	default:
		b.WriteString("ddp: spent ε = ")
		writeG(&b, res.Charged.Epsilon)
		if res.Charged.Delta > 0 {
			b.WriteString(", δ = ")
			writeG(&b, res.Charged.Delta)
		}
		b.WriteString(" on ")
		b.WriteString(pl.Dataset.Name)
		b.WriteString("; ε left: ")
		writeG(&b, res.Remaining.Epsilon)
		if !res.Evicted.IsZero() {
			fmt.Fprintf(&b, " (charged again: this query's earlier release was evicted by ledger.retention at %s)",
				res.Evicted.UTC().Format(time.RFC3339))
		}
		if pl.Synopsis != nil {
			fmt.Fprintf(&b, " (this released the %s synopsis of %s.%s: later range counts on it at ε = %g are free)",
				pl.Synopsis.Spec.Mechanism, pl.Synopsis.Spec.Table, pl.Synopsis.Spec.Column, pl.Synopsis.Epsilon)
		}
	}
	for _, c := range res.Columns {
		if c.Aggregate == "" {
			continue
		}
		b.WriteString("; ")
		b.WriteString(c.Name)
		b.WriteString(": ")
		if c.Aggregate != "expr" {
			writeNoise(&b, c)
			continue
		}
		// An expression: the noise of each aggregate it is computed from.
		b.WriteString("computed from ")
		for i, u := range c.Uses {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s (%s)", u.Name, noiseText(u))
		}
	}
	return b.String()
}

// writeG writes f, an ε or a δ, as fmt's %g does, without fmt's
// reflection: the cost notice is built for every answer. (Noise figures
// are aggregate.AppendNoise's.)
func writeG(b *strings.Builder, f float64) {
	var buf [32]byte
	b.Write(strconv.AppendFloat(buf[:0], f, 'g', -1, 64))
}

// writeNoise writes noiseText(c), the common case without fmt.
func writeNoise(b *strings.Builder, c release.Column) {
	if c.Scale == 0 || (aggregate.ByName(c.Aggregate) != nil && aggregate.ByName(c.Aggregate).Notice != "") {
		b.WriteString(noiseText(c))
		return
	}
	var buf [32]byte
	b.WriteString("noise scale ")
	b.Write(aggregate.AppendNoise(buf[:0], c.Scale))
	b.WriteString(", 95% within ±")
	b.Write(aggregate.AppendNoise(buf[:0], c.CI95))
}

// noiseText describes the noise of an aggregate column.
func noiseText(c release.Column) string {
	switch {
	case aggregate.ByName(c.Aggregate) != nil && aggregate.ByName(c.Aggregate).Notice != "":
		// A composite aggregate (AVG): its unit says how it is computed.
		text := aggregate.ByName(c.Aggregate).Notice
		// Its parts' noise (AVG: its sum's and its count's).
		for i, p := range c.Parts {
			if i == 0 {
				text += " — "
			} else {
				text += ", "
			}
			text += p.Name + " with noise scale " + aggregate.FormatNoise(p.Scale) + " (95% within ±" + aggregate.FormatNoise(p.CI95) + ")"
		}
		if c.RankError > 0 {
			// A whole number of rows, rounded up where it was computed
			// (quantile.RankError): written in full, since rounding it
			// to AppendNoise's four digits could write less than the
			// bound.
			text += ", rank error ≤ " + strconv.FormatFloat(c.RankError, 'f', -1, 64) + " rows (95%)"
		}
		switch {
		case c.CI95 > 0:
			text += ", 95% within ±" + aggregate.FormatNoise(c.CI95)
		case c.Interval != "":
			text += ", 95% within " + c.Interval
		}
		return text
	case c.Scale == 0:
		return "exact"
	}
	return "noise scale " + aggregate.FormatNoise(c.Scale) + ", 95% within ±" + aggregate.FormatNoise(c.CI95)
}

func (s *Session) explain(ctx context.Context, inner *ir.Statement, args []ir.Value) (Result, error) {
	var x planner.Explanation
	switch {
	case inner == nil:
		return Result{}, sqlerr.New(sqlerr.SyntaxError, "EXPLAIN needs a statement")
	case inner.Kind == ir.StmtRefused:
		x = planner.Refusal(inner.Refused)
	case inner.Kind != ir.StmtSelect:
		x = planner.Explanation{StatementClass: inner.Kind.String(), Notes: []string{"changes or shows session state only"}}
	default:
		bound, err := s.bindStatement(inner, args)
		if err != nil {
			return Result{}, err
		}
		pl, err := s.plan(ctx, bound)
		if err != nil {
			x = planner.Refusal(err)
		} else {
			x = pl.Explain(s.p.render)
		}
	}
	var b strings.Builder
	x.WriteText(&b)
	r := Result{Columns: []Column{{Name: "QUERY PLAN", Type: TypeText}}}
	for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		r.Rows = append(r.Rows, []ir.Value{ir.String(line)})
	}
	r.Tag = "EXPLAIN"
	return r, nil
}

// isBudgetView recognises SELECT ... FROM ddp.budget.
func isBudgetView(st *ir.Statement) bool {
	return len(st.Relations) == 1 && isBudgetRelation(st.Relations[0])
}

func isBudgetRelation(r ir.TableRef) bool {
	return strings.EqualFold(r.Schema, "ddp") && strings.EqualFold(r.Name, "budget")
}

// budgetWithOthers refuses a statement that reads ddp.budget together
// with other relations (a join, a subquery): the view is the proxy's,
// not the database's, so it cannot meet a table in one statement. The
// planner would otherwise say ddp.budget is not exposed, which is not
// the reason.
func budgetWithOthers(st *ir.Statement) error {
	if len(st.Relations) < 2 || !slices.ContainsFunc(st.Relations, isBudgetRelation) {
		return nil
	}
	return sqlerr.New(sqlerr.FeatureNotSupported, "ddp.budget cannot be read together with other tables in one statement").
		WithHint("read it on its own: SELECT ... FROM ddp.budget WHERE dataset = '...'")
}

var budgetColumns = []Column{
	{Name: "dataset", Type: TypeText}, {Name: "epsilon_total", Type: TypeFloat8}, {Name: "epsilon_spent", Type: TypeFloat8}, {Name: "epsilon_left", Type: TypeFloat8},
	{Name: "delta_total", Type: TypeFloat8}, {Name: "delta_spent", Type: TypeFloat8}, {Name: "delta_left", Type: TypeFloat8},
}

// budgetView lists the user's datasets with spent and remaining budget.
func (s *Session) budgetView(ctx context.Context) (Result, error) {
	r := Result{Columns: budgetColumns}
	names := make([]string, 0, len(s.user.Budgets))
	for ds := range s.user.Budgets {
		names = append(names, ds)
	}
	sort.Strings(names)
	for _, ds := range names {
		limit := s.user.Budgets[ds]
		acct, err := s.p.ledger.Account(ctx, s.user.Name, ds)
		if err != nil {
			return Result{}, release.LedgerError(ctx, err)
		}
		spent := acct.Spent
		left, err := s.p.ledger.Remaining(ctx, s.user.Name, ds, limit)
		if err != nil {
			return Result{}, release.LedgerError(ctx, err)
		}
		r.Rows = append(r.Rows, []ir.Value{ir.String(ds), ir.Float(limit.Epsilon), ir.Float(spent.Epsilon), ir.Float(left.Epsilon),
			ir.Float(limit.Delta), ir.Float(spent.Delta), ir.Float(left.Delta)})
	}
	r.Tag = "SELECT " + strconv.Itoa(len(r.Rows))
	return r, nil
}

// setEpsilon validates and stores the session's per-query ε.
func (s *Session) setEpsilon(v string) error {
	v = strings.Trim(strings.TrimSpace(v), "'\"")
	eps, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(eps) || math.IsInf(eps, 0) || eps <= 0 {
		return sqlerr.New(sqlerr.InvalidParameterValue, "ddp.epsilon must be a positive number, not %q", v)
	}
	if eps > s.user.MaxEpsilon {
		return sqlerr.New(sqlerr.InvalidParameterValue, "ddp.epsilon = %g is above the %g per query allowed for user %s", eps, s.user.MaxEpsilon, s.user.Name).
			WithHint("choose a value up to %g", s.user.MaxEpsilon)
	}
	s.epsilon = eps
	return nil
}

func (s *Session) currentEpsilon() float64 {
	if s.epsilon > 0 {
		return s.epsilon
	}
	return s.user.DefaultEpsilon
}

func itoa(n int) string { return strconv.Itoa(n) }

// names is how this session's client names the policy's tables
// (policies.Policy.Resolve): its dialect and, for MySQL, the current
// database (the one its catalog lists the tables under).
func (s *Session) names() policies.Names {
	n := policies.Names{Dialect: s.dialect.String()}
	if s.dialect == parser.MySQL {
		n.Database = s.settings["database"]
		n.ExactTableNames = s.p.exactTableNames()
	}
	return n
}

// Collector is a RowWriter that holds every answer whole, in order: for
// tests and tools, never on the way from the backend to a client.
type Collector struct {
	Results []Result
	open    *Result
}

// Columns starts an answer with rows.
func (c *Collector) Columns(cols []Column) error {
	c.open = &Result{Columns: cols, Rows: [][]ir.Value{}}
	return nil
}

// Row adds a row to the open answer.
func (c *Collector) Row(row []ir.Value) error {
	if c.open == nil {
		return sqlerr.New(sqlerr.Internal, "internal error: a row before its columns")
	}
	c.open.Rows = append(c.open.Rows, row)
	return nil
}

// Complete ends the answer.
func (c *Collector) Complete(done ir.Completion) error {
	r := Result{Tag: done.Tag, Empty: done.Empty, Notices: done.Cost.Notices}
	if c.open != nil {
		r.Columns, r.Rows = c.open.Columns, c.open.Rows
	}
	c.open = nil
	c.Results = append(c.Results, r)
	return nil
}
