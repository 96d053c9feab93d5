package release

import (
	"context"

	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// runSynopsis answers a range count from the synopsis named by the plan,
// releasing the synopsis first (charged once) when the ledger has none.
func (e *Engine) runSynopsis(ctx context.Context, user *policies.User, pl *planner.Plan, limit policies.Budget) (*Result, error) {
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "range synopses are not supported by this version yet")
}
