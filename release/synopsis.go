package release

import (
	"context"
	"math"
	"math/big"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
	"github.com/ddp-proxy/ddp-proxy/synopsis"
)

// runSynopsis answers a range count from the synopsis named by the plan,
// releasing the synopsis first (charged once) when the ledger has none.
//
// The synopsis is stored in the ledger under its own key (dataset
// fingerprint, table, column, mechanism, parameters, ε), exactly like a
// cached release: reserve → histogram query → noise → commit, durable
// before any answer leaves. Every later range count on the column at that
// ε, by any user and after a restart, is post-processing of the stored
// synopsis and costs nothing. Concurrent first queries in this process are
// serialised on the key (e.flight), so only one of them is charged; across
// processes the ledger's Commit returns the first release and the later
// one's answer is taken from it.
func (e *Engine) runSynopsis(ctx context.Context, user *policies.User, pl *planner.Plan, limit policies.Budget, q Query) (*Result, error) {
	sp := pl.Synopsis
	layout, err := synopsis.NewLayout(sp.Config())
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.Internal, err, "internal error: the synopsis of "+sp.Spec.Table+"."+sp.Spec.Column+" cannot be built")
	}
	fl, err := e.flight.lock(ctx, sp.Key)
	if err != nil {
		return nil, err
	}
	defer e.flight.unlock(sp.Key, fl)

	data, ok, held, err := e.lookup(ctx, sp.Key)
	defer held()
	if err != nil {
		return nil, err
	} else if ok {
		syn, err := decodeSynopsis(data)
		if err != nil {
			return nil, err
		}
		return e.answerSynopsis(ctx, user, pl, layout, syn, policies.Budget{}, true)
	}

	res, err := e.ledger.Charge(ctx, q.charge(user.Name, pl.Dataset.Name, sp.Key, pl.Budget), limit)
	if err != nil {
		return nil, err
	}
	hist := layout.Histogram()
	err = e.backend.Aggregate(ctx, pl.Backend, func(r ir.BackendRow) error {
		if len(r.Keys) != 1 || len(r.Aggs) != 1 {
			return sqlerr.New(sqlerr.Internal, "internal error: unexpected histogram row shape")
		}
		v := normalize(r.Keys[0], policies.TypeInteger)
		if v.Kind != ir.KindInt {
			// NULL (excluded by the query) or a value that is not an
			// integer in a column declared integer (SQLite stores text
			// and fractions there): outside the integer domain, never a
			// secret pair, left out like NULL. Failing here, after the
			// backend ran, would tell whether some row holds such a value.
			return nil
		}
		if r.Aggs[0] < 0 {
			return sqlerr.New(sqlerr.Internal, "internal error: negative count from the backend")
		}
		layout.Add(hist, v.Int, r.Aggs[0])
		return nil
	})
	if err != nil {
		return nil, e.failed(res, err)
	}
	syn, err := layout.Release(e.src, hist, sp.Epsilon)
	if err != nil {
		return nil, e.failed(res, err)
	}
	data, err = syn.MarshalBinary()
	if err != nil {
		return nil, e.failed(res, err)
	}
	sent, err := res.Commit(sp.Key, data)
	if err != nil {
		// The charge stays reserved: fail closed.
		return nil, sqlerr.Wrap(sqlerr.Internal, err, "internal error: the synopsis could not be recorded; nothing was returned")
	}
	if string(sent) != string(data) {
		// Another process released this synopsis first: answer from it.
		if syn, err = decodeSynopsis(sent); err != nil {
			return nil, err
		}
	}
	if e.after != nil {
		e.after()
	}
	e.log.Info("released a range synopsis", "user", user.Name, "dataset", pl.Dataset.Name,
		"table", sp.Spec.Table, "column", sp.Spec.Column, "mechanism", sp.Spec.Mechanism, "epsilon", sp.Epsilon, "bytes", len(data))
	return e.answerSynopsis(ctx, user, pl, layout, syn, pl.Budget, false)
}

func decodeSynopsis(data []byte) (*synopsis.Synopsis, error) {
	var s synopsis.Synopsis
	if err := s.UnmarshalBinary(data); err != nil {
		return nil, sqlerr.Wrap(sqlerr.Internal, err, "internal error: a stored synopsis is unreadable")
	}
	return &s, nil
}

// answerSynopsis post-processes the synopsis into the query's one-row
// result: the range count, then HAVING/ORDER BY/LIMIT like any release.
// The reported scale is the standard deviation of the raw (pre-inference)
// estimator of this range and the 95% half-width its Chebyshev bound
// √20·σ; constrained inference usually does better, never worse in mean
// over all ranges.
func (e *Engine) answerSynopsis(ctx context.Context, user *policies.User, pl *planner.Plan, layout *synopsis.Layout, syn *synopsis.Synopsis, charged policies.Budget, cached bool) (*Result, error) {
	sp := pl.Synopsis
	if syn.Size() != layout.Size() || syn.Lo != sp.Spec.Lo || syn.Mechanism != sp.Spec.Mechanism {
		return nil, sqlerr.New(sqlerr.Internal, "internal error: a stored synopsis does not match its plan")
	}
	n := syn.Count(sp.Lo, sp.Hi)
	rel := &stored{Version: 1, Rows: []storedRow{{Aggs: []int64{n}}}}
	res, err := e.finish(ctx, user, pl, rel, charged, cached)
	if err != nil {
		return nil, err
	}
	sd := e.synopsisSD(layout, syn, sp.Lo, sp.Hi)
	for i := range res.Columns {
		if res.Columns[i].Aggregate == "count" {
			res.Columns[i].Scale = sd
			res.Columns[i].CI95 = math.Ceil(math.Sqrt(20) * sd)
		}
	}
	return res, nil
}

// synopsisSD is the standard deviation of the raw estimator of [a, b]
// (values), 0 when the range is empty or exact.
func (e *Engine) synopsisSD(l *synopsis.Layout, syn *synopsis.Synopsis, a, b int64) float64 {
	a, b = max(a, syn.Lo), min(b, syn.Hi())
	if a > b {
		return 0
	}
	ds, dh := l.Sensitivity()
	ts, err1 := scaleOf(ds, syn.EpsilonS)
	th, err2 := scaleOf(dh, syn.EpsilonH)
	if err1 != nil || err2 != nil {
		return math.NaN()
	}
	return math.Sqrt(l.RawVariance(int(a-syn.Lo), int(b-syn.Lo), ts, th))
}

// scaleOf is the discrete Laplace scale the release used for sensitivity d
// and share eps (zero when that part has no noisy node).
func scaleOf(d int64, eps float64) (noise.Scale, error) {
	if d == 0 || eps == 0 {
		return noise.Scale{}, nil
	}
	return noise.ScaleFor(big.NewRat(d, 1), eps)
}
