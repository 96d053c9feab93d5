package release

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/ddp-proxy/ddp-proxy/aggregate"
	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Options configures an Engine.
type Options struct {
	Logger *slog.Logger
	// Source of randomness: noise.CryptoSource() in production; a seeded
	// source only in tests.
	Source noise.Source
	// AfterCommit, when set, runs after a release is committed (its charge
	// durable, its record deferred: ledger.CommitDeferred) and before it is
	// returned (crash tests kill the process here).
	AfterCommit func()
}

// Engine runs private plans. It is safe for concurrent use.
type Engine struct {
	backend planner.Backend
	ledger  Ledger
	src     noise.Source
	log     *slog.Logger
	after   func()

	flight  keyedMutex
	domMu   sync.Mutex
	domains map[string][]ir.Value // public key domains, by query text
	unique  map[string]bool       // public join keys checked unique, by table
}

// New returns an engine. The ledger and backend stay owned by the caller.
func New(b planner.Backend, l Ledger, opts Options) *Engine {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	src := opts.Source
	if src == nil {
		src = noise.CryptoSource()
	}
	return &Engine{backend: b, ledger: l, src: src, log: log, after: opts.AfterCommit,
		domains: map[string][]ir.Value{}, unique: map[string]bool{}}
}

// Column describes one column of a private result.
type Column struct {
	Name string
	Type string // policies.Type*
	// Aggregate is "" for group keys, "expr" for post-processing over
	// aggregates, else the aggregate's name (count, sum, avg, ...).
	Aggregate string
	// Scale is the noise scale in the column's units (0: exact); CI95 is
	// the half-width of the 95% interval of the noise (0 when not
	// expressible, as for AVG).
	Scale float64
	CI95  float64
	// RankError (quantiles): the value's rank is within this many rows
	// of the requested one with probability at least 95%.
	RankError float64
	// Interval is the 95% interval in words when CI95 cannot give it (the
	// variance family's shrinks with the group's row count).
	Interval string
	// Uses (an expression column, Aggregate "expr"): the noisy aggregates
	// the expression is computed from, each with its own noise, so that
	// the cost notice describes the noise of ROUND(AVG(x), 2) too.
	Uses []Column
	// Parts (a composite aggregate, AVG): the noisy true aggregates it is
	// computed from (its sum and its count), each with its own noise: the
	// column's own noise has no single scale or interval.
	Parts []Column
}

// Result is a noisy answer.
type Result struct {
	Columns []Column
	Rows    [][]ir.Value
	// Charged is what this answer cost (zero when Cached).
	Charged policies.Budget
	// Remaining is the user's budget left on the dataset afterwards.
	Remaining policies.Budget
	Cached    bool
	// Evicted: this query was released before, the release was evicted
	// by the ledger's retention bound at this time, and so this answer
	// was charged again (zero otherwise).
	Evicted time.Time
	// NoRows: the query read no row and was answered exactly, for free.
	NoRows bool
}

// stored is the release kept in the ledger: the noisy aggregate table in
// lattice units, before post-processing.
type stored struct {
	Version int         `json:"v"`
	Rows    []storedRow `json:"rows"`
}

type storedRow struct {
	Keys []ir.Value `json:"k,omitempty"`
	Aggs []int64    `json:"a"`
	// Set is the row's grouping set (groupingsets.go): stored, the index
	// of its separate release; expanded for post-processing, the index of
	// the set as written. 0 without grouping sets.
	Set int `json:"s,omitempty"`
}

// Run answers a private plan for user; its charges carry no statement in
// the audit history (tests, tools). Sessions call RunQuery.
func (e *Engine) Run(ctx context.Context, user *policies.User, pl *planner.Plan) (*Result, error) {
	return e.RunQuery(ctx, user, pl, Query{})
}

// RunQuery answers a private plan for user; a charge records q in the
// ledger's audit history.
func (e *Engine) RunQuery(ctx context.Context, user *policies.User, pl *planner.Plan, q Query) (*Result, error) {
	if pl.Class != planner.ClassPrivate {
		return nil, sqlerr.New(sqlerr.Internal, "internal error: not a private plan")
	}
	limit, ok := user.Budgets[pl.Dataset.Name]
	if !ok {
		return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "user %s has no privacy budget for dataset %s", user.Name, pl.Dataset.Name)
	}
	if pl.NoRows {
		return e.finish(ctx, user, pl, noRowsRelease(pl), policies.Budget{}, false)
	}
	if pl.KeysOnly {
		// No aggregate: the public key set is the answer, exact and free.
		keys, err := e.keyDomain(ctx, pl)
		if err != nil {
			return nil, err
		}
		rel := &stored{Version: 1}
		for _, k := range keys {
			rel.Rows = append(rel.Rows, storedRow{Keys: k, Aggs: []int64{}})
		}
		return e.finish(ctx, user, pl, rel, policies.Budget{}, false)
	}
	if pl.Synopsis != nil {
		return e.runSynopsis(ctx, user, pl, limit, q)
	}
	fl, err := e.flight.lock(ctx, pl.CacheKey)
	if err != nil {
		return nil, err
	}
	defer e.flight.unlock(pl.CacheKey, fl)

	data, ok, held, err := e.lookup(ctx, pl.CacheKey)
	defer held()
	if err != nil {
		return nil, err
	} else if ok {
		rel, err := decodeStored(data)
		if err != nil {
			return nil, sqlerr.Wrap(sqlerr.Internal, err, "internal error: a cached release is unreadable")
		}
		return e.finish(ctx, user, pl, rel, policies.Budget{}, true)
	}
	evicted := e.evictedAt(ctx, pl.CacheKey)
	withEvicted := func(r *Result, err error) (*Result, error) {
		if r != nil && !r.Cached {
			r.Evicted = evicted
		}
		return r, err
	}
	if pl.GroupingSets.Separate() {
		return withEvicted(e.runSeparate(ctx, user, pl, limit, q))
	}

	// Public work first: nothing is charged if it fails.
	if err := e.checkJoinKeys(ctx, pl.Backend); err != nil {
		return nil, err
	}
	keys, err := e.keyDomain(ctx, pl)
	if err != nil {
		return nil, err
	}

	// The charge is made durable while the backend runs (Overlap): every
	// way out below settles the reservation before anything is returned,
	// and settling waits for the charge (failed, keep, publish).
	c := q.charge(user.Name, pl.Dataset.Name, pl.CacheKey, pl.Budget)
	c.Overlap = true
	res, err := e.ledger.Charge(ctx, c, limit)
	if err != nil {
		return nil, err
	}
	truth, err := e.collect(ctx, pl, len(keys))
	if err != nil {
		return nil, e.failed(res, err)
	}
	// The quantiles' per-bin counts: more private reads inside the same
	// reservation, so a failure keeps the charge whatever its code.
	bins, err := e.binCounts(ctx, pl)
	if err != nil {
		return nil, e.keep(res, err)
	}
	rel, err := e.noisy(pl, keys, truth, bins)
	if err != nil {
		return nil, e.failed(res, err)
	}
	data, err = encodeStored(rel)
	if err != nil {
		return nil, e.failed(res, err)
	}
	return withEvicted(e.publish(ctx, user, pl, res, rel, data))
}

// publish records a fresh release and answers it. The charge is durable
// since Reserve; the commit record rides on the next ledger write, so a
// fresh answer pays one fsync (DESIGN.md, "Budget ledger": a crash leaves
// the reservation charged). When another process released the same query
// first, its release is the answer, so every client sees one answer per
// query.
func (e *Engine) publish(ctx context.Context, user *policies.User, pl *planner.Plan, res budget.Reservation, rel *stored, data []byte) (*Result, error) {
	sent, err := res.CommitDeferred(pl.CacheKey, data)
	if err != nil {
		// The charge stays reserved: fail closed.
		return nil, sqlerr.Wrap(sqlerr.Internal, err, "internal error: the release could not be recorded; nothing was returned")
	}
	if string(sent) != string(data) {
		var err error
		if rel, err = decodeStored(sent); err != nil {
			return nil, sqlerr.Wrap(sqlerr.Internal, err, "internal error: a cached release is unreadable")
		}
	}
	if e.after != nil {
		e.after()
	}
	return e.finish(ctx, user, pl, rel, pl.Budget, false)
}

// truthRows are a query's true rows by key (keyString), in the
// backend's order. An answer has a few rows most often: a key is then
// found by comparing it with each, and the map is built only past
// maxLinearKeys rows.
type truthRows struct {
	keys  []string
	rows  []ir.BackendRow
	index map[string]int
}

// find returns the row of key k, or false.
func (t *truthRows) find(k []byte) (ir.BackendRow, bool) {
	if t.index != nil {
		i, ok := t.index[string(k)]
		if !ok {
			return ir.BackendRow{}, false
		}
		return t.rows[i], true
	}
	for i, x := range t.keys {
		if x == string(k) {
			return t.rows[i], true
		}
	}
	return ir.BackendRow{}, false
}

// add appends the row r of a key not there yet.
func (t *truthRows) add(k string, r ir.BackendRow) {
	t.keys = append(t.keys, k)
	t.rows = append(t.rows, r)
	switch {
	case t.index != nil:
		t.index[k] = len(t.keys) - 1
	case len(t.keys) > maxLinearKeys:
		t.index = make(map[string]int, 2*len(t.keys))
		for i, x := range t.keys {
			t.index[x] = i
		}
	}
}

// collect runs a plan's backend query and gathers its true rows by key,
// in the backend's order. rows is the number expected, when known (the
// declared keys): room for them, up to maxRowsHint, is made at once.
func (e *Engine) collect(ctx context.Context, pl *planner.Plan, rows int) (*truthRows, error) {
	rows = min(rows, maxRowsHint)
	truth := &truthRows{keys: make([]string, 0, rows), rows: make([]ir.BackendRow, 0, rows)}
	err := e.backend.Aggregate(ctx, pl.Backend, func(r ir.BackendRow) error {
		for i := range r.Keys {
			r.Keys[i] = normalize(r.Keys[i], pl.Groups[i].Type)
		}
		var kbuf [64]byte
		kb := appendKey(kbuf[:0], r.Keys)
		prev, dup := truth.find(kb)
		if !dup {
			truth.add(string(kb), r)
			return nil
		}
		// Two backend groups that read as one key (SQLite's text
		// spellings of one instant, '2010-06-01 00:00:00' and
		// '2010-06-01T00:00:00'): the key's rows are both groups' rows.
		// Keeping either one alone would let one row's spelling decide
		// the whole count. A unit's rows stay bounded (the bound applies
		// before grouping), so the sum has the histogram's sensitivity.
		for i := range prev.Aggs {
			prev.Aggs[i] = exprtype.SaturatingAdd(prev.Aggs[i], r.Aggs[i])
		}
		return nil
	})
	return truth, err
}

// maxRowsHint bounds the room collect makes ahead: a large domain may
// have few keys present in the data.
const maxRowsHint = 1024

// failed settles a reservation after a failure: refunded only when the
// backend certainly never ran the statement, else kept (the failure may
// depend on private data).
func (e *Engine) failed(res budget.Reservation, err error) error {
	if sqlerr.NeverRan(err) {
		if rerr := res.Refund(); rerr != nil {
			e.log.Error("refund failed; the reservation stays charged", "err", rerr)
		}
		return err
	}
	if _, cerr := res.Commit("", nil); cerr != nil {
		return e.unsettled(cerr, err)
	}
	se := sqlerr.As(err)
	e.log.Warn("private query failed after it reached the backend; the budget stays charged", "code", se.Code.Name, "err", err)
	return se
}

// keyDomain returns the released group keys for KeysDomain plans (nil
// otherwise): the cartesian product of the groups' public domains.
func (e *Engine) keyDomain(ctx context.Context, pl *planner.Plan) ([][]ir.Value, error) {
	if pl.Keys.Mode != planner.KeysDomain {
		return nil, nil
	}
	doms := make([][]ir.Value, len(pl.Groups))
	total := 1
	for i, g := range pl.Groups {
		var err error
		switch {
		case g.Domain != nil:
			doms[i] = g.Domain
		case g.DomainSQL != "":
			doms[i], err = e.sqlDomain(ctx, g.DomainSQL, g.Type)
		case g.DomainFrom != nil:
			doms[i], err = e.tableDomain(ctx, g.DomainFrom, g.Type)
		}
		if err != nil {
			return nil, err
		}
		doms[i] = uniqueKeys(doms[i])
		if g.NullKey && !slices.ContainsFunc(doms[i], ir.Value.IsNull) {
			// A LEFT-joined column: rows without a match group under NULL,
			// a key whatever the data. Copied: the domain may be cached.
			doms[i] = append(slices.Clip(doms[i]), ir.Null())
		}
		total *= max(len(doms[i]), 1)
		if total > planner.MaxKeys {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "GROUP BY over these columns has more than %d possible keys", planner.MaxKeys).
				WithHint("group by fewer or coarser columns")
		}
	}
	return keyProduct(doms), nil
}

// keyProduct is the cartesian product of doms in lexicographic order
// (the last group varies fastest), every key a capped window of one
// array.
func keyProduct(doms [][]ir.Value) [][]ir.Value {
	n := 1
	for _, d := range doms {
		n *= len(d)
	}
	w := len(doms)
	vals := make([]ir.Value, n*w)
	keys := make([][]ir.Value, n)
	for i := range keys {
		k := vals[i*w : (i+1)*w : (i+1)*w]
		r := i
		for g := w - 1; g >= 0; g-- {
			k[g] = doms[g][r%len(doms[g])]
			r /= len(doms[g])
		}
		keys[i] = k
	}
	return keys
}

func (e *Engine) sqlDomain(ctx context.Context, sql, typ string) ([]ir.Value, error) {
	e.domMu.Lock()
	d, ok := e.domains["sql:"+sql]
	e.domMu.Unlock()
	if ok {
		return d, nil
	}
	seen := map[string]bool{}
	err := e.backend.Rows(ctx, sql, nil, func(_ []string, row []ir.Value) error {
		if len(row) == 0 {
			return nil
		}
		v := normalize(row[0], typ)
		if k := keyString([]ir.Value{v}); !seen[k] {
			seen[k] = true
			d = append(d, v)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("evaluating a domain query: %w", err)
	}
	sort.Slice(d, func(i, j int) bool { return ir.CompareValues(d[i], d[j]) < 0 })
	e.domMu.Lock()
	e.domains["sql:"+sql] = d
	e.domMu.Unlock()
	return d, nil
}

func (e *Engine) tableDomain(ctx context.Context, q *ir.BackendQuery, typ string) ([]ir.Value, error) {
	key := "table:" + q.Canonical()
	e.domMu.Lock()
	d, ok := e.domains[key]
	e.domMu.Unlock()
	if ok {
		return d, nil
	}
	seen := map[string]bool{}
	err := e.backend.Aggregate(ctx, q, func(r ir.BackendRow) error {
		// Once per key: two spellings that read as one key would
		// otherwise release that key's count twice, with two noises.
		v := normalize(r.Keys[0], typ)
		if k := keyString([]ir.Value{v}); !seen[k] {
			seen[k] = true
			d = append(d, v)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the keys of a public table: %w", err)
	}
	sort.Slice(d, func(i, j int) bool { return ir.CompareValues(d[i], d[j]) < 0 })
	e.domMu.Lock()
	e.domains[key] = d
	e.domMu.Unlock()
	return d, nil
}

// noisy draws the noise: one discrete Laplace sample per aggregate and
// released key, then one exponential-mechanism draw per quantile and
// released key (release/quantile.go).
func (e *Engine) noisy(pl *planner.Plan, keys [][]ir.Value, truth *truthRows, bins binCounts) (*stored, error) {
	rel := &stored{Version: 1}
	rows := 1 // the rows noised (an upper bound with thresholds)
	switch pl.Keys.Mode {
	case planner.KeysDomain:
		rows = len(keys)
	case planner.KeysThreshold:
		rows = len(truth.rows)
	}
	rel.Rows = make([]storedRow, 0, rows)
	width := len(pl.Aggs)
	var block []int64 // the rows' noisy values, allocated together
	addNoise := func(agg []int64) ([]int64, error) {
		if len(block) < width || width == 0 {
			block = make([]int64, width*max(rows, 1))
		}
		out := block[:width:width]
		block = block[width:]
		for i, a := range pl.Aggs {
			if a.Quantile != nil {
				continue // selected once the released keys are known
			}
			v := int64(0)
			if agg != nil {
				v = agg[i]
			}
			n, err := a.Noise(e.src)
			if err != nil {
				return nil, err
			}
			out[i] = exprtype.SaturatingAdd(v, n)
		}
		return out, nil
	}
	switch pl.Keys.Mode {
	case planner.KeysNone:
		var agg []int64 // from the one row (no GROUP BY), if any
		for _, r := range truth.rows {
			agg = r.Aggs
		}
		a, err := addNoise(agg)
		if err != nil {
			return nil, err
		}
		rel.Rows = append(rel.Rows, storedRow{Aggs: a})
	case planner.KeysDomain:
		var kbuf [128]byte
		kb := kbuf[:0]
		for _, k := range keys {
			var agg []int64
			kb = appendKey(kb[:0], k)
			if r, ok := truth.find(kb); ok {
				agg = r.Aggs
			}
			a, err := addNoise(agg)
			if err != nil {
				return nil, err
			}
			rel.Rows = append(rel.Rows, storedRow{Keys: k, Aggs: a})
		}
	case planner.KeysThreshold:
		for _, r := range truth.rows {
			a, err := addNoise(r.Aggs)
			if err != nil {
				return nil, err
			}
			if a[pl.Keys.CountAgg] >= pl.Keys.Threshold {
				rel.Rows = append(rel.Rows, storedRow{Keys: r.Keys, Aggs: a})
			}
		}
		sort.Slice(rel.Rows, func(i, j int) bool { return lessKeys(rel.Rows[i].Keys, rel.Rows[j].Keys) })
	}
	e.selectQuantiles(pl, rel, bins)
	return rel, nil
}

// noRowsRelease is the exact answer of a plan that reads no row, which
// depends on no data and is free: no group at all, except that aggregates
// without GROUP BY give their one row over the empty input (counts 0, sums
// 0 as for any empty group here, averages NULL), as in SQL.
func noRowsRelease(pl *planner.Plan) *stored {
	rel := &stored{Version: 1}
	if pl.Keys.Mode == planner.KeysNone && len(pl.Groups) == 0 && len(pl.Aggs) > 0 {
		rel.Rows = []storedRow{{Aggs: make([]int64, len(pl.Aggs))}}
		noRowsQuantiles(pl, rel.Rows[0].Aggs)
	}
	return rel
}

// finish post-processes a release: output values, HAVING, ORDER BY,
// OFFSET/LIMIT, and drops hidden columns.
func (e *Engine) finish(ctx context.Context, user *policies.User, pl *planner.Plan, rel *stored, charged policies.Budget, cached bool) (*Result, error) {
	clamp := pl.Dataset.ClampCountsAtZero()
	srs, err := expandSets(pl, rel.Rows)
	if err != nil {
		return nil, err
	}
	rows := make([][]ir.Value, 0, len(srs))
	// Every row a capped window of one array (a row HAVING drops leaves
	// its window unused); parts is outputValue's scratch.
	w := len(pl.Outputs)
	vals := make([]ir.Value, len(srs)*w)
	parts := make([]aggregate.Noisy, 0, maxParts(pl))
	for si, sr := range srs {
		if len(sr.Aggs) != len(pl.Aggs) || len(sr.Keys) != len(pl.Groups) && pl.Keys.Mode != planner.KeysNone {
			return nil, sqlerr.New(sqlerr.Internal, "internal error: a cached release does not match its plan")
		}
		row := vals[si*w : (si+1)*w : (si+1)*w]
		rp := setPlan(pl, sr)
		for i, o := range pl.Outputs {
			row[i] = outputValue(rp, o, sr, clamp, parts)
		}
		// Expressions read the other outputs only, never one another
		// (those that read a window are computed after the windows).
		if err := evalOutputs(pl, row, false); err != nil {
			return nil, err
		}
		if pl.Having != nil {
			v, err := exprtype.Eval(pl.Having, row, pl.Post)
			if err != nil {
				return nil, err
			}
			if !exprtype.IsTrue(v) {
				continue
			}
		}
		rows = append(rows, row)
	}
	// Windows run over the rows HAVING kept, as in SQL.
	windows := false
	for i, o := range pl.Outputs {
		if o.Kind != planner.OutWindow {
			continue
		}
		windows = true
		vs, err := exprtype.EvalWindow(o.Window, rows, pl.NullsHigh, pl.Post)
		if err != nil {
			return nil, err
		}
		for r := range rows {
			rows[r][i] = vs[r]
		}
	}
	if windows {
		for _, row := range rows {
			if err := evalOutputs(pl, row, true); err != nil {
				return nil, err
			}
		}
	}
	rows = OrderAndLimit(rows, pl.OrderBy, pl.Offset, pl.Limit)
	for i := range rows {
		rows[i] = rows[i][:pl.NumVisible]
	}
	cols := make([]Column, 0, pl.NumVisible)
	for _, o := range pl.Outputs[:pl.NumVisible] {
		c := Column{Name: o.Name, Type: o.Type}
		switch o.Kind {
		case planner.OutAggregate:
			c = aggregateColumn(pl, o)
			c.Name, c.Type = o.Name, o.Type
		case planner.OutExpr:
			c.Uses = exprInputs(pl, o.Expr)
			if len(c.Uses) > 0 {
				c.Aggregate = "expr"
			}
		}
		cols = append(cols, c)
	}
	for _, st := range pl.Stages {
		var err error
		if rows, err = runStage(pl, st, rows); err != nil {
			return nil, err
		}
		cols = stageColumns(st, cols)
	}
	res := &Result{Rows: rows, Columns: cols, Charged: charged, Cached: cached, NoRows: pl.NoRows}
	left, err := e.ledger.Remaining(ctx, user.Name, pl.Dataset.Name, user.Budgets[pl.Dataset.Name])
	if err != nil {
		return nil, LedgerError(ctx, err)
	}
	res.Remaining = left
	return res, nil
}

// exprInputs lists the noisy aggregates an expression output reads, in
// order of first use (through windows and other outputs too), described
// as the cost notice describes a plain aggregate column.
func exprInputs(pl *planner.Plan, e ir.Expr) []Column {
	var out []Column
	seen := map[int]bool{}
	var visit func(ir.Expr)
	visit = func(e ir.Expr) {
		ir.Walk(e, func(n ir.Expr) bool {
			r, ok := n.(ir.OutputRef)
			if !ok || seen[r.Index] || r.Index >= len(pl.Outputs) {
				return true
			}
			seen[r.Index] = true
			switch o := pl.Outputs[r.Index]; o.Kind {
			case planner.OutAggregate:
				c := aggregateColumn(pl, o)
				c.Name = o.AggLabel()
				out = append(out, c)
			case planner.OutWindow:
				visit(o.Window)
			case planner.OutExpr:
				visit(o.Expr)
			}
			return true
		})
	}
	visit(e)
	return out
}

// aggregateColumn describes an aggregate output's noise for the cost
// notice: its unit's summary of its parts' noise (a composite unit's
// scale is not the column's: only its interval, when known, is kept).
func aggregateColumn(pl *planner.Plan, o planner.Output) Column {
	c := Column{Aggregate: o.Unit.Name}
	s := pl.Summary(o)
	if o.Unit.Notice == "" {
		c.Scale = s.Scale
	} else if len(o.Parts) > 1 {
		for _, p := range pl.PartNoise(o) {
			part := Column{Name: p.Label, Aggregate: "part", Scale: p.Scale}
			if !math.IsNaN(p.CI95) {
				part.CI95 = p.CI95
			}
			c.Parts = append(c.Parts, part)
		}
	}
	if !math.IsNaN(s.CI95) {
		c.CI95 = s.CI95
	}
	c.RankError = s.RankError
	c.Interval = s.Interval
	return c
}

// evalOutputs computes the row's expression outputs: those that read no
// window (late false), or those that do (late true).
func evalOutputs(pl *planner.Plan, row []ir.Value, late bool) error {
	for i, o := range pl.Outputs {
		if o.Kind == planner.OutExpr && o.Expr != nil && o.AfterWindows == late {
			v, err := exprtype.Eval(o.Expr, row, pl.Post)
			if err != nil {
				return err
			}
			row[i] = v
		}
	}
	return nil
}

// outputValue computes one output of a row; parts is scratch space
// (aggregate.Unit.Value only reads its parts during the call).
func outputValue(pl *planner.Plan, o planner.Output, sr storedRow, clamp bool, parts []aggregate.Noisy) ir.Value {
	switch o.Kind {
	case planner.OutGroup:
		return sr.Keys[o.Group]
	case planner.OutGrouping:
		return ir.Int(pl.GroupingValue(o, sr.Set))
	case planner.OutAggregate:
		parts = parts[:0]
		for _, pi := range o.Parts {
			parts = append(parts, aggregate.Noisy{Units: sr.Aggs[pi], Quantum: pl.Aggs[pi].Quantum})
		}
		return o.Unit.Value(aggregate.Context{Arg: o.Arg, ClampCounts: clamp}, parts)
	}
	return ir.Null()
}

// maxParts is the most parts an output of pl has.
func maxParts(pl *planner.Plan) int {
	n := 0
	for _, o := range pl.Outputs {
		n = max(n, len(o.Parts))
	}
	return n
}

// normalize converts a backend key to the group column's declared type
// (drivers differ: SQLite returns booleans as integers, PostgreSQL NUMERIC
// as text...), so keys match the declared domain. A zero is +0: backends
// group -0 (ceil(-0.4)) with 0 and return the sign of whichever row they
// met first, so the sign is one row's data.
func normalize(v ir.Value, typ string) ir.Value {
	v = positiveZero(v)
	switch typ {
	case policies.TypeInteger:
		if v.Kind == ir.KindFloat && v.Float == float64(int64(v.Float)) {
			return ir.Int(int64(v.Float))
		}
	case policies.TypeReal:
		if v.Kind == ir.KindInt {
			return ir.Float(float64(v.Int))
		}
	case policies.TypeBoolean:
		if v.Kind == ir.KindInt {
			return ir.Bool(v.Int != 0)
		}
	case policies.TypeText:
		if v.Kind != ir.KindString && v.Kind != ir.KindNull {
			return ir.String(v.Text())
		}
	case policies.TypeDate, policies.TypeTimestamp, policies.TypeTimestampTZ:
		k, _ := policies.TimeKind(typ)
		return ir.AsTime(v, k)
	}
	return v
}

// uniqueKeys drops the values of d that read as an earlier one (a
// declared '2010-06-01' and '2010-06-01 00:00:00' of a timestamp, a
// derived -0 and 0): each key is released once, with one noise, or its
// count would be released twice for the price of one. d is not modified
// (it may be the policy's or a cached domain).
func uniqueKeys(d []ir.Value) []ir.Value {
	if len(d) <= maxLinearKeys {
		return uniqueKeysLinear(d)
	}
	return uniqueKeysMap(d)
}

func uniqueKeysMap(d []ir.Value) []ir.Value {
	seen := make(map[string]bool, len(d))
	var out []ir.Value
	var kb []byte
	for i, v := range d {
		kb = appendKey(kb[:0], []ir.Value{v})
		if seen[string(kb)] {
			if out == nil {
				out = slices.Clone(d[:i])
			}
			continue
		}
		seen[string(kb)] = true
		if out != nil {
			out = append(out, v)
		}
	}
	if out == nil {
		return d
	}
	return out
}

// maxLinearKeys is the size up to which uniqueKeys compares each key with
// the earlier ones instead of building a map (a declared domain is most
// often a few values).
const maxLinearKeys = 16

// uniqueKeysLinear is uniqueKeys for a short d: the keys of d[:i] lie one
// after another in kb, key j ending at ends[j].
func uniqueKeysLinear(d []ir.Value) []ir.Value {
	var out []ir.Value
	var kbuf [512]byte
	var ends [maxLinearKeys]int
	kb := kbuf[:0]
	for i, v := range d {
		start := len(kb)
		kb = appendKey(kb, []ir.Value{v})
		ends[i] = len(kb)
		dup, from := false, 0
		for j := 0; j < i && !dup; j++ {
			dup = string(kb[from:ends[j]]) == string(kb[start:])
			from = ends[j]
		}
		if dup {
			if out == nil {
				out = slices.Clone(d[:i])
			}
			continue
		}
		if out != nil {
			out = append(out, v)
		}
	}
	if out == nil {
		return d
	}
	return out
}

// positiveZero returns a real zero as +0 (see normalize).
func positiveZero(v ir.Value) ir.Value {
	if v.Kind == ir.KindFloat && v.Float == 0 {
		v.Float = 0
	}
	return v
}

// keyString identifies a key; -0 and 0 are one key, as in every backend's
// GROUP BY (a derived domain may hold either: math.Ceil(-0.4) is -0).
func keyString(keys []ir.Value) string {
	var buf [64]byte
	return string(appendKey(buf[:0], keys))
}

// appendKey appends keyString(keys) to b: a map lookup by string(b)
// allocates nothing.
func appendKey(b []byte, keys []ir.Value) []byte {
	for _, k := range keys {
		k = positiveZero(k)
		b = append(b, k.Kind.String()...)
		b = append(b, ':')
		b = k.AppendSQL(b)
		b = append(b, 0)
	}
	return b
}

func lessKeys(a, b []ir.Value) bool {
	for i := range a {
		if c := ir.CompareValues(a[i], b[i]); c != 0 {
			return c < 0
		}
	}
	return false
}

// keyedMutex serialises releases of the same cache key inside one
// process, so two identical concurrent queries are charged and noised
// once: the second one waits and reads the first one's release.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

// keyLock is one key's lock: a token in a one-slot channel, so that a
// waiter can give up when its statement is cancelled or times out.
type keyLock struct {
	held chan struct{}
	refs int
}

// lock locks key and returns the lock to pass to unlock. A waiter whose
// ctx ends first gets the cancel error: nothing of its own was reserved
// or sent yet, and whether the other query had finished by then shows in
// the response time anyway (the padding holds this error back like any
// other).
func (k *keyedMutex) lock(ctx context.Context, key string) (*keyLock, error) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyLock{held: make(chan struct{}, 1)}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()
	// A free lock is taken at once, even by a statement whose ctx has
	// just ended (the select below would pick between the two at random).
	select {
	case l.held <- struct{}{}:
		return l, nil
	default:
	}
	select {
	case l.held <- struct{}{}:
		return l, nil
	case <-ctx.Done():
		k.drop(key, l)
		// The statement was waiting for an identical one to finish.
		return nil, sqlerr.Canceled(context.Cause(ctx))
	}
}

// unlock releases key, which lock returned l for.
func (k *keyedMutex) unlock(key string, l *keyLock) {
	<-l.held
	k.drop(key, l)
}

// drop forgets one holder or waiter of l.
func (k *keyedMutex) drop(key string, l *keyLock) {
	k.mu.Lock()
	l.refs--
	if l.refs == 0 {
		delete(k.locks, key)
	}
	k.mu.Unlock()
}

// checkJoinKeys verifies, once per public table, that the declared join key
// is unique. The sensitivity assumes joins are many-to-one: a duplicated
// key would count a private row twice. The check reads public data only.
// LEFT joins need it as much as inner ones. Under = a NULL key matches
// nothing, so repeated NULLs are harmless; under the null-safe equality
// (IS NOT DISTINCT FROM) a NULL private value matches every NULL key, so
// NULL must be unique too.
func (e *Engine) checkJoinKeys(ctx context.Context, q *ir.BackendQuery) error {
	for _, j := range q.Joins {
		id := j.Table.Schema + "." + j.Table.Name + "." + j.Right.Name
		if j.NullSafe {
			id += "/null-safe"
		}
		e.domMu.Lock()
		ok := e.unique[id]
		e.domMu.Unlock()
		if ok {
			continue
		}
		kq := &ir.BackendQuery{
			From:    ir.TableRef{Schema: j.Table.Schema, Name: j.Table.Name, Alias: "t0"},
			GroupBy: []ir.Expr{ir.ColumnRef{Qualifier: "t0", Name: j.Right.Name}},
			Aggs:    []ir.BackendAgg{{Kind: ir.CountRows}},
		}
		dup, dupNull := false, false
		err := e.backend.Aggregate(ctx, kq, func(r ir.BackendRow) error {
			if r.Aggs[0] > 1 {
				if !r.Keys[0].IsNull() {
					dup = true
				} else if j.NullSafe {
					dupNull = true
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("checking the join key of public table %s: %w", j.Table.Name, err)
		}
		if dup {
			return sqlerr.New(sqlerr.FeatureNotSupported,
				"public table %s has repeated values in its declared key %s: joining it could count a private row twice", j.Table.Name, j.Right.Name).
				WithHint("make the key unique in the backend, or declare another key")
		}
		if dupNull {
			return sqlerr.New(sqlerr.FeatureNotSupported,
				"public table %s has several NULLs in its declared key %s: IS NOT DISTINCT FROM would match a private NULL with each of them and count it twice", j.Table.Name, j.Right.Name).
				WithHint("join with = instead (a NULL then matches nothing), or leave at most one NULL in the key")
		}
		e.domMu.Lock()
		e.unique[id] = true
		e.domMu.Unlock()
	}
	return nil
}
