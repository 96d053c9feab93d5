package planner

import (
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// ExplainBlowfish is what explain adds for the blowfish and induced models.
type ExplainBlowfish struct{}

func (b *builder) blowfishSensitivity(ds *policies.Dataset, main *policies.Table, s aggShape) (int64, error) {
	return 0, sqlerr.New(sqlerr.FeatureNotSupported, "dataset %s uses model %s, which this version cannot answer", ds.Name, ds.Model)
}
