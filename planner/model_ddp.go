package planner

import (
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// ExplainDependence is what explain adds for the ddp model.
type ExplainDependence struct{}

func (b *builder) dependentSensitivity(ds *policies.Dataset, main *policies.Table, s aggShape) (int64, error) {
	return 0, sqlerr.New(sqlerr.FeatureNotSupported, "dataset %s uses model %s, which this version cannot answer", ds.Name, ds.Model)
}
