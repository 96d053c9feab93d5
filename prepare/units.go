package prepare

import (
	"context"
	"log/slog"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// uniqueChecker is implemented by backends that can read unique indexes.
type uniqueChecker interface {
	UniqueNotNull(ctx context.Context, schema, table, column string) (bool, error)
}

// MarkUniqueUnits sets Table.UnitUnique for every private table whose unit
// column the backend's schema declares NOT NULL and unique, so the planner
// can skip the per-unit bounding window (a large saving on big tables). It
// reads the schema only. A failure leaves the flag unset (bounding stays).
func MarkUniqueUnits(ctx context.Context, pol *policies.Policy, be backends.Backend, log *slog.Logger) {
	uc, ok := be.(uniqueChecker)
	if !ok {
		return
	}
	for _, dn := range pol.DatasetNames {
		ds := pol.Datasets[dn]
		for _, t := range ds.Tables {
			if t == nil || t.Public || t.Unit == "" {
				continue
			}
			u, err := uc.UniqueNotNull(ctx, t.Schema, t.Name, t.Unit)
			if err != nil {
				if log != nil {
					log.Warn("could not read the unit's unique index; bounding every query", "table", t.Name, "err", err)
				}
				continue
			}
			t.UnitUnique = u
		}
	}
}
