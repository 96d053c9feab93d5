package planner

import (
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sensitivity"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// aggShape is one true aggregate as the model-specific sensitivity calculus
// sees it. The builder (b.plan, b.q, b.sc) holds the rest of the query:
// WHERE, GROUP BY columns, joins.
type aggShape struct {
	// Index into b.plan.Aggs and b.plan.Backend.Aggs.
	Index int
	Kind  sensitivity.Kind
	// Lo and Hi are the clamping bounds of a sum in units of Quantum
	// (quantized for real columns).
	Lo, Hi  int64
	Quantum float64
}

// sensitivity is the L1 sensitivity of one aggregate (in units of its
// quantum) under the dataset's privacy model.
func (b *builder) sensitivity(ds *policies.Dataset, main *policies.Table, s aggShape) (int64, error) {
	switch ds.Model {
	case policies.ModelDP, "":
		return sensitivity.DP(neighbours(ds), main.MaxRowsPerUnit, sensitivity.Aggregate{Kind: s.Kind, Lo: s.Lo, Hi: s.Hi})
	case policies.ModelBlowfish, policies.ModelInduced:
		return b.blowfishSensitivity(ds, main, s)
	case policies.ModelDDP:
		return b.dependentSensitivity(ds, main, s)
	}
	return 0, sqlerr.New(sqlerr.FeatureNotSupported, "dataset %s uses model %s, which this version cannot answer", ds.Name, ds.Model)
}
