package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/ddp-proxy/ddp-proxy/catalog"
	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// MaxKeys bounds the number of group keys a declared-domain GROUP BY may
// release (the cartesian product of the domains).
const MaxKeys = 1_000_000

// Planner plans statements under one policy. It is immutable and safe for
// concurrent use.
type Planner struct {
	pol  *policies.Policy
	opts Options
	bins *binCache
	// declares memoises declare (builder.go): declareKey → string.
	declares sync.Map
}

// Options configure a Planner.
type Options struct {
	// Limits are the backend's fixed limits; the zero value checks none.
	Limits Limits
}

// Limits are limits of the backend that no data can change: a statement
// that exceeds one fails whatever the rows hold. The release step charges
// before the backend runs, so the planner refuses such statements, and
// nothing is charged (DESIGN.md, "Failures that cannot depend on data").
// The caller fills them from the backend's SQL dialect
// (sqlrender.Dialect: MaxParams, MaxDepth, Measure).
type Limits struct {
	// Dialect names the backend in messages.
	Dialect string
	// MaxParams is the most bind parameters one statement may carry;
	// MaxDepth the deepest expression nesting, with a margin below the
	// backend's own limit. 0: unchecked.
	MaxParams, MaxDepth int
	// Measure renders a backend query exactly as the backend will get it
	// and reports its shape; an error is refused as it is. nil: no check.
	Measure func(*ir.BackendQuery) (Shape, error)
}

// Shape is what Limits look at in a rendered backend statement.
type Shape struct {
	Params int // bind parameters, exactly as rendered
	Depth  int // deepest parenthesis nesting of the SQL text
}

// New returns a planner for pol that checks no backend limits (explain,
// tests); serving uses NewWith.
func New(pol *policies.Policy) *Planner { return NewWith(pol, Options{}) }

// NewWith returns a planner for pol with options.
func NewWith(pol *policies.Policy, opts Options) *Planner {
	return &Planner{pol: pol, opts: opts, bins: &binCache{m: map[string]ir.Expr{}}}
}

// Options returns the planner's options.
func (p *Planner) Options() Options { return p.opts }

// Policy returns the policy the planner enforces.
func (p *Planner) Policy() *policies.Policy { return p.pol }

// Request is one statement to plan.
type Request struct {
	User *policies.User
	// Epsilon is the session's ε for one query (0: the user's default).
	Epsilon float64
	// Dialect is the front end's SQL dialect ("postgres" or "mysql"); a
	// pass-through is only allowed when it matches the backend's.
	Dialect string
	// Database is a MySQL session's current database ("" when none): the
	// name its catalog shows the policy's tables under, so it qualifies
	// them in queries too (policies.Policy.Resolve).
	Database string
	// ExactTableNames: a MySQL client's table names compare
	// case-sensitively (the backend's lower_case_table_names is 0); see
	// policies.Names.
	ExactTableNames bool
	// Statement must be a StmtSelect whose parameters are bound.
	Statement *ir.Statement
	// Catalog is the PostgreSQL backend's description of its catalog
	// relations that hold statistics columns (the postgres backend's
	// CatalogRelations). A catalog pass-through reads them through derived
	// tables built from it; without it, a statement that reads one of them
	// is refused.
	Catalog *catalog.Relations
	// MySQLInfoSchema is the MySQL backend's information_schema column
	// lists, needed to plan a statement that reads information_schema
	// (catalog.RewriteMySQL); nil refuses those.
	MySQLInfoSchema *catalog.MySQLInfoSchema
}

// Plan plans a StmtSelect. Session, explain and refused statements are the
// caller's business.
func (p *Planner) Plan(req Request) (*Plan, error) {
	st := req.Statement
	if st == nil || st.Kind != ir.StmtSelect {
		return nil, sqlerr.New(sqlerr.Internal, "internal error: only SELECT statements are planned")
	}
	names := req.names()
	private, err := p.classify(st, names)
	if err != nil {
		return nil, err
	}
	if !private {
		return p.planPassthrough(req)
	}
	if st.Query == nil {
		if st.Rows != nil {
			if q := p.noRowRead(st.Rows, names); q != nil {
				return p.planPrivate(req, q)
			}
		}
		return nil, p.refuseNonAggregate(st, names)
	}
	return p.planPrivate(req, st.Query)
}

// classify reports whether st reads a private table, and refuses
// statements reading relations the policy does not know (they may be
// private: fail closed).
func (p *Planner) classify(st *ir.Statement, names policies.Names) (bool, error) {
	private := false
	for _, r := range st.Relations {
		if p.isCatalog(r) {
			if err := catalog.CheckRelation(backendDialect(p.pol), r.Schema, r.Name); err != nil {
				return false, err
			}
			continue
		}
		_, tbl := p.pol.Resolve(names, r.Schema, r.Name)
		if tbl == nil {
			return false, p.unknownRelation(r, names)
		}
		if !tbl.Public {
			private = true
		}
	}
	return private, nil
}

func (p *Planner) refuseNonAggregate(st *ir.Statement, names policies.Names) error {
	var name string
	for _, r := range st.Relations {
		if _, tbl := p.pol.Resolve(names, r.Schema, r.Name); tbl != nil && !tbl.Public {
			name = tbl.Name
			break
		}
	}
	if st.Ungrouped != nil {
		// Told to add the unit to GROUP BY, the analyst would meet this.
		if err := p.refuseUnitIn(st.Ungrouped, names); err != nil {
			return err
		}
	}
	reason := st.NotAggregate
	if reason == "" {
		reason = "the statement is not a supported aggregate"
	}
	return sqlerr.New(sqlerr.InsufficientPrivilege,
		"table %s is private and this query is not an aggregate the proxy can answer: %s", name, reason).
		WithHint("ask for COUNT(*), COUNT(col), SUM(col) or AVG(col) with WHERE and GROUP BY, e.g. SELECT COUNT(*) FROM %s", name)
}

func (p *Planner) planPassthrough(req Request) (*Plan, error) {
	st := req.Statement
	if req.Dialect != "" && req.Dialect != backendDialect(p.pol) && len(st.Relations) > 0 {
		// The client's text means nothing to the backend: translate.
		return p.planRows(req)
	}
	readsCatalog := false
	for _, r := range st.Relations {
		if p.isCatalog(r) {
			readsCatalog = true
			continue
		}
		// The text goes to the backend as written: a name that resolves
		// only as the client's catalog shows it (a MySQL session's
		// database) means another relation, perhaps a private one, there.
		if _, t := p.pol.LookupTable(r.Schema, r.Name); t == nil {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported,
				"public table %s is passed through to the backend as written, and there %q names another relation", r.Name, qualified(r)).
				WithHint("write the table name unqualified")
		}
	}
	client := req.Dialect
	if client == "" {
		client = "postgres"
	}
	text, err := catalog.CheckPassthrough(catalog.Passthrough{
		Text: st.Text, NumParams: st.NumParams, Client: client, Backend: backendDialect(p.pol),
		ReadsCatalog: readsCatalog, Functions: st.Functions, Declared: catalog.Declared(p.pol),
		PGRelations: req.Catalog, MySQLInfo: req.MySQLInfoSchema, MySQLParse: parser.MySQLTree,
	})
	if err != nil {
		return nil, err
	}
	if p.readsListedPublic(st, req.names()) {
		// Forwarded text could read the columns the policy leaves out:
		// a row read is checked and rendered, an aggregate forwarded
		// once every column it names is declared (rows.go).
		if st.Rows != nil || st.Query == nil {
			return p.planRows(req)
		}
		if err := p.checkDeclared(st.Query, req.names()); err != nil {
			return nil, err
		}
	}
	return &Plan{Class: ClassPassthrough, SQL: text}, nil
}

// scope is the set of tables a private query reads.
type scope struct {
	ds     *policies.Dataset
	names  policies.Names // how the client names tables
	tables []boundTable   // [0] is the private table
}

type boundTable struct {
	tbl   *policies.Table
	ref   ir.TableRef // as written
	alias string      // backend alias: t0, t1, ...
}

func (s *scope) refName(i int) string { return strings.ToLower(s.tables[i].ref.RefName()) }

// resolved is a column resolved against the scope.
type resolved struct {
	col   ir.ColumnRef     // backend-qualified
	decl  *policies.Column // nil for undeclared public columns
	table int
	name  string // as the analyst wrote it (lower-case)
}

func (p *Planner) planPrivate(req Request, q *ir.Query) (*Plan, error) {
	user := req.User
	if user == nil {
		return nil, sqlerr.New(sqlerr.InvalidAuthorization, "no user: private queries need an authenticated user")
	}
	sc, err := p.bindTables(q, req.names())
	if err != nil {
		return nil, err
	}
	// Before any other check of the query: see unitref.go.
	if err := (&builder{p: p, sc: sc}).refuseUnitRefs(q); err != nil {
		return nil, err
	}
	ds := sc.ds
	main := sc.tables[0].tbl
	limit, ok := user.Budgets[ds.Name]
	if !ok {
		return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "user %s has no privacy budget for dataset %s", user.Name, ds.Name).
			WithHint("the DBA grants one under users.%s.budgets.%s", user.Name, ds.Name)
	}
	eps := req.Epsilon
	if eps == 0 {
		eps = user.DefaultEpsilon
	}
	if err := checkEpsilon(eps, user); err != nil {
		return nil, err
	}

	pl := &Plan{
		Class:   ClassPrivate,
		Dataset: ds,
		Table:   main,
		Limit:   q.Limit,
		Offset:  q.Offset,
		// Windows sort NULL as ORDER BY does (see OrderKey.NullsHigh).
		NullsHigh: req.Dialect == "postgres",
		Post:      exprtype.PostDialect{MySQL: req.Dialect == "mysql"},
	}
	b := &builder{p: p, sc: sc, plan: pl, q: q, nullsHigh: req.Dialect == "postgres", mysql: req.Dialect == "mysql"}
	bq := &ir.BackendQuery{
		From:           ir.TableRef{Schema: main.Schema, Name: main.Name, Alias: sc.tables[0].alias},
		Unit:           ir.ColumnRef{Qualifier: sc.tables[0].alias, Name: main.Unit},
		MaxRowsPerUnit: main.MaxRowsPerUnit,
	}
	if main.UnitUnique {
		// At most one row per unit already (k ≥ 1): no window needed. The
		// sensitivity still uses the declared k, which is ≥ 1.
		bq.MaxRowsPerUnit = 0
	}
	pl.Backend = bq
	if err := b.joins(q, bq); err != nil {
		return nil, err
	}
	// A query that provably reads no row (Metabase's permission probe
	// SELECT TRUE AS "_" FROM t WHERE 1 <> 1 LIMIT 0) is answered from the
	// plan: its WHERE is never sent, so it is not bound either.
	pl.NoRows = q.ReadsNoRow()
	if !pl.NoRows {
		if bq.Where, err = b.where(q.Where); err != nil {
			return nil, err
		}
	}
	if !pl.NoRows {
		b.whereRanges = whereColumnRanges(bq.Where)
	}
	if err := b.groups(q); err != nil {
		return nil, err
	}
	if err := b.bindGroupingSets(q); err != nil {
		return nil, err
	}
	if !pl.NoRows {
		b.narrowKeys()
	}
	if err := b.selectList(q); err != nil {
		return nil, err
	}
	if err := b.postProcessing(q); err != nil {
		return nil, err
	}
	if err := b.stages(q); err != nil {
		return nil, err
	}
	// A HAVING that is false whatever the data keeps no group: the answer
	// is as empty as a query that reads no row, and is answered the same
	// way. Only once the query has been checked whole (its WHERE bound,
	// its select list grouped): unlike LIMIT 0 and WHERE false, it lets
	// nothing through that would otherwise be refused.
	if !pl.NoRows && q.HavingFalse() {
		pl.NoRows = true
	}
	if pl.NoRows {
		pl.Notes = append(b.notes, "the answer has no row whatever the data (LIMIT 0, or a WHERE or HAVING that is always false): answered without the backend, at no cost")
		return pl, nil
	}
	if len(bq.Aggs) == 0 {
		if len(pl.Groups) > 0 && b.allDomains() {
			// GROUP BY without an aggregate over declared or derived key
			// sets: the answer is the (narrowed) key set, which the
			// policy makes public. No row is read, nothing is charged.
			pl.KeysOnly = true
			pl.Keys.Mode = KeysDomain
			if n := b.staticKeyCount(); n > MaxKeys {
				return nil, sqlerr.New(sqlerr.FeatureNotSupported,
					"GROUP BY over these columns has %d possible keys, more than the %d the proxy releases at once", n, MaxKeys).
					WithHint("group by fewer or coarser columns, or narrow a domain in the policy")
			}
			pl.Notes = append(b.notes, "no aggregate: the answer is the public key set of the GROUP BY (declared or derived from the policy), without reading the table, at no cost")
			return pl, nil
		}
		if len(pl.Groups) == 0 {
			return nil, sqlerr.New(sqlerr.InsufficientPrivilege,
				"table %s is private: only aggregate queries are answered", main.Name).
				WithHint("add COUNT(*) (for the values of a column use SELECT col, COUNT(*) ... GROUP BY col)")
		}
		col := b.missingDomain()
		if refuseThreshold(ds, col.name()) != nil || user.DeltaPerQuery <= 0 || limit.Delta <= 0 {
			return nil, sqlerr.New(sqlerr.InsufficientPrivilege,
				"GROUP BY %s without an aggregate would list the values present in private table %s: only a declared or derived key set is public", col.name(), main.Name).
				WithHint("declare the possible values of the key in the policy, or add COUNT(*)")
		}
		// The values present are released as threshold selection releases
		// keys: through the noisy count the key selection below adds (not
		// shown), which charges ε and δ like any GROUP BY with COUNT(*).
		b.notes = append(b.notes, "no aggregate: the keys are chosen from the data by a noisy threshold on a hidden COUNT(*), charged as that count")
	}

	// Key selection.
	delta := 0.0
	switch {
	case len(pl.Groups) == 0:
		pl.Keys.Mode = KeysNone
	case b.allDomains():
		pl.Keys.Mode = KeysDomain
		if n := b.staticKeyCount(); n > MaxKeys {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported,
				"GROUP BY over these columns has %d possible keys, more than the %d the proxy releases at once", n, MaxKeys).
				WithHint("group by fewer or coarser columns, or narrow a domain in the policy")
		}
	default:
		col := b.missingDomain()
		if err := refuseThreshold(ds, col.name()); err != nil {
			return nil, err
		}
		if user.DeltaPerQuery <= 0 || limit.Delta <= 0 {
			if col.expr != nil {
				return nil, b.noExprDomain(col, user.Name)
			}
			return nil, sqlerr.New(sqlerr.FeatureNotSupported,
				"GROUP BY %s needs a declared domain: %s", col.r.name, domainPath(sc, col.r)).
				WithHint("declare the possible values of %s in the policy (%s), or let the DBA allow threshold key selection with users.%s.delta_per_query > 0",
					col.r.name, p.pol.Position(domainPath(sc, col.r)), user.Name)
		}
		delta = user.DeltaPerQuery
		pl.Keys.Mode = KeysThreshold
		pl.Keys.CountAgg = b.countRows()
	}
	pl.Budget = policies.Budget{Epsilon: eps, Delta: delta}

	if err := b.planSynopsis(); err != nil {
		return nil, err
	}
	if pl.Synopsis == nil {
		if err := b.calibrate(eps, ds, main); err != nil {
			return nil, err
		}
		if err := b.settleBlowfish(eps, ds); err != nil {
			return nil, err
		}
		if err := b.finishQuantiles(); err != nil {
			return nil, err
		}
	}
	if pl.Keys.Mode == KeysThreshold {
		tau, err := threshold(main.MaxRowsPerUnit, pl.Aggs[pl.Keys.CountAgg].Scale, delta)
		if err != nil {
			return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, err, "cannot calibrate threshold key selection for this ε and δ")
		}
		pl.Keys.Threshold = tau
		pl.Notes = append(pl.Notes, fmt.Sprintf(
			"group keys are not declared: a key is released only if its noisy count is at least %d (threshold selection, δ = %g)", tau, delta))
	}
	if err := b.planGroupingSets(eps, ds, main); err != nil {
		return nil, err
	}
	if err := p.checkLimits(pl.Backend); err != nil {
		return nil, err
	}
	for _, a := range pl.Aggs {
		if a.Quantile != nil {
			if err := p.checkLimits(a.Quantile.Query); err != nil {
				return nil, err
			}
		}
	}
	pl.CacheKey = cacheKey(pl)
	pl.summarize()
	if !ds.SharesReleases() {
		// The release is this user's alone: another user asking the same
		// query gets (and pays for) an independent draw, and learns
		// nothing about who asked what before.
		pl.CacheKey = userKey(pl.CacheKey, user.Name)
		if pl.Synopsis != nil {
			pl.Synopsis.Key = userKey(pl.Synopsis.Key, user.Name)
		}
		pl.Notes = append(pl.Notes, fmt.Sprintf(
			"releases are per user (datasets.%s.share_releases: false): a repeat by %s is free, the same query by another user is charged and drawn afresh", ds.Name, user.Name))
	}
	pl.Notes = append(b.notes, pl.Notes...)
	return pl, nil
}

// checkLimits refuses a backend query the backend would reject whatever
// the data: too many bind parameters, or expressions nested too deep.
func (p *Planner) checkLimits(q *ir.BackendQuery) error {
	lim := p.opts.Limits
	if lim.Measure == nil {
		return nil
	}
	sh, err := lim.Measure(q)
	if err != nil {
		return err
	}
	if lim.MaxParams > 0 && sh.Params > lim.MaxParams {
		return sqlerr.New(sqlerr.TooManyParameters,
			"the query needs %d bind parameters in the %s backend, more than the %d one statement may carry", sh.Params, lim.Dialect, lim.MaxParams).
			WithHint("split a long IN list over several queries, or group by the column instead of listing its values")
	}
	if lim.MaxDepth > 0 && sh.Depth > lim.MaxDepth {
		return sqlerr.New(sqlerr.StatementTooComplex,
			"the query's expressions nest %d levels deep in the %s backend, more than the %d it evaluates safely", sh.Depth, lim.Dialect, lim.MaxDepth).
			WithHint("flatten the condition: a long chain of OR comparisons with one column is an IN list")
	}
	return nil
}

// bindTables resolves FROM and JOIN tables against the policy.
func (p *Planner) bindTables(q *ir.Query, names policies.Names) (*scope, error) {
	ds, tbl := p.pol.Resolve(names, q.From.Schema, q.From.Name)
	if tbl == nil {
		return nil, p.unknownRelation(q.From, names)
	}
	if tbl.Public {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported,
			"put the private table first: FROM must name the private table and JOIN the public ones (%s is public)", tbl.Name)
	}
	sc := &scope{ds: ds, names: names, tables: []boundTable{{tbl: tbl, ref: q.From, alias: "t0"}}}
	for i, j := range q.Joins {
		jds, jt := p.pol.Resolve(names, j.Table.Schema, j.Table.Name)
		if jt == nil {
			return nil, p.unknownRelation(j.Table, names)
		}
		if !jt.Public {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported,
				"joining two private tables (%s and %s) is not supported: a unit's rows could be multiplied", tbl.Name, jt.Name)
		}
		if jds != ds {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported,
				"public table %s belongs to dataset %s, not %s: declare it in the same dataset to join it", jt.Name, jds.Name, ds.Name)
		}
		sc.tables = append(sc.tables, boundTable{tbl: jt, ref: j.Table, alias: "t" + strconv.Itoa(i+1)})
	}
	seen := map[string]bool{}
	for i := range sc.tables {
		n := sc.refName(i)
		if seen[n] {
			return nil, sqlerr.New(sqlerr.SyntaxError, "table name %s specified more than once", quoteName(names.Dialect, n))
		}
		seen[n] = true
	}
	return sc, nil
}

func checkEpsilon(eps float64, user *policies.User) error {
	if math.IsNaN(eps) || math.IsInf(eps, 0) || eps <= 0 {
		return sqlerr.New(sqlerr.InvalidParameterValue, "ε must be a positive number, got %g", eps)
	}
	if user.MaxEpsilon > 0 && eps > user.MaxEpsilon {
		return sqlerr.New(sqlerr.InvalidParameterValue, "ε = %g is above the %g per query allowed for user %s", eps, user.MaxEpsilon, user.Name).
			WithHint("lower the session's ε")
	}
	return nil
}

func cacheKey(pl *Plan) string {
	// The bytes hashed are exactly those of the fmt.Fprintf calls this
	// once made (TestCacheKeyBytes keeps that version): stored releases
	// are found by this key, so it must not change. Appending to one
	// buffer costs a third of the formatting.
	b := make([]byte, 0, 512)
	b = append(b, "ddp-release-v1\x00"...)
	b = append(b, pl.Dataset.Fingerprint...)
	b = append(b, 0)
	b = append(b, pl.Backend.Canonical()...)
	b = append(b, 0)
	for _, a := range pl.Aggs {
		b = strconv.AppendInt(b, a.Sensitivity, 10)
		b = append(b, '/')
		b = strconv.AppendUint(b, math.Float64bits(a.Quantum), 16)
		b = append(b, '/')
		b = append(b, a.Scale.String()...)
		b = append(b, '/')
		b = strconv.AppendUint(b, math.Float64bits(a.Epsilon), 16)
		b = append(b, 0)
		if a.Quantile != nil {
			b = append(b, "quantile:"...)
			b = append(b, a.Quantile.Spec.Key()...)
			b = append(b, '/')
			b = append(b, a.Quantile.Rate.String()...)
			b = append(b, '/')
			b = append(b, a.Quantile.Query.Canonical()...)
			b = append(b, 0)
		}
	}
	b = append(b, "keys:"...)
	b = strconv.AppendUint(b, uint64(pl.Keys.Mode), 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, pl.Keys.Threshold, 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(pl.Keys.CountAgg), 10)
	b = append(b, '/')
	b = strconv.AppendUint(b, math.Float64bits(pl.Budget.Epsilon), 16)
	b = append(b, '/')
	b = strconv.AppendUint(b, math.Float64bits(pl.Budget.Delta), 16)
	b = append(b, 0)
	for _, g := range pl.Groups {
		for _, v := range g.Domain {
			b = v.AppendSQL(b)
			b = append(b, ',')
		}
		if g.DomainFrom != nil {
			b = append(b, "from:"...)
			b = append(b, g.DomainFrom.Canonical()...)
		}
		b = append(b, "sql:"...)
		b = append(b, g.DomainSQL...)
		b = append(b, "/null:"...)
		b = strconv.AppendBool(b, g.NullKey)
		b = append(b, 0)
	}
	b = appendGroupingSets(b, pl.GroupingSets)
	return hexSum(b)
}

// hexSum is the hex SHA-256 of b, with one allocation (the string).
func hexSum(b []byte) string {
	sum := sha256.Sum256(b)
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], sum[:])
	return string(out[:])
}

// userKey makes a release key (of a release or a synopsis) private to one
// user.
func userKey(key, user string) string {
	return hexSum([]byte("ddp-release-user-v1\x00" + key + "\x00" + user))
}

// names is how the request's client names tables.
func (req Request) names() policies.Names {
	return policies.Names{Dialect: req.Dialect, Database: req.Database, ExactTableNames: req.ExactTableNames}
}

// unknownRelation refuses a table name the policy does not expose, naming
// the closest one it does (a quoted capital in PostgreSQL, a typo).
func (p *Planner) unknownRelation(t ir.TableRef, names policies.Names) error {
	err := sqlerr.New(sqlerr.UndefinedTable, "relation %s is not exposed by the privacy policy", quoteName(names.Dialect, qualified(t)))
	if s := policies.Suggest(t.Name, p.pol.TableNames()); s != "" {
		hint := "did you mean " + quoteName(names.Dialect, s) + "?"
		if names.Dialect == "postgres" && strings.EqualFold(s, t.Name) {
			hint += " PostgreSQL folds unquoted names to lower case and keeps quoted ones as written"
		}
		return err.WithHint("%s", hint)
	}
	return err.WithHint("only tables declared under datasets.<name>.tables can be queried")
}

// quoteName writes a name as the client's dialect quotes identifiers, for
// messages: "age" for PostgreSQL (and tools), `age` for MySQL.
func quoteName(dialect, name string) string {
	if dialect == "mysql" {
		return "`" + strings.ReplaceAll(name, "`", "``") + "`"
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

func qualified(t ir.TableRef) string {
	if t.Schema != "" {
		return t.Schema + "." + t.Name
	}
	return t.Name
}

func backendDialect(pol *policies.Policy) string { return pol.Backend.Driver }

func domainPath(sc *scope, r resolved) string {
	return "datasets." + sc.ds.Name + ".tables." + sc.tables[r.table].tbl.Name + ".columns." + r.col.Name + ".domain"
}

// isCatalog reports whether r is a relation of the backend's catalog,
// which catalog's rules govern.
func (p *Planner) isCatalog(r ir.TableRef) bool {
	return catalog.IsCatalogRelation(backendDialect(p.pol), r.Schema, r.Name)
}
