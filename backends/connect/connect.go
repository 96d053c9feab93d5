// Package connect opens the backend a policy names. It is the one place
// that knows every driver package, so the planner and the commands stay
// free of driver imports.
package connect

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/mysql"
	"github.com/ddp-proxy/ddp-proxy/backends/postgres"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlite"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Backend is what every backend offers: the planner's interface plus
// pass-through results with column descriptions.
type Backend interface {
	planner.Backend
	Stream(ctx context.Context, text string, args []ir.Value, start func([]backends.ColumnInfo) func([]ir.Value) error) error
}

var (
	_ Backend = (*postgres.Backend)(nil)
	_ Backend = (*sqlite.Backend)(nil)
	_ Backend = (*mysql.Backend)(nil)
)

// Open connects to the policy's backend and checks that it answers.
func Open(ctx context.Context, cfg policies.Backend, log *slog.Logger) (Backend, error) {
	opts := backends.Options{
		StatementTimeout: cfg.StatementTimeout.Duration,
		ConnectTimeout:   cfg.ConnectTimeout.Duration,
		MaxOpenConns:     cfg.MaxOpenConns,
		Logger:           log,
	}
	switch cfg.Driver {
	case "postgres":
		return postgres.Open(ctx, cfg.DSN, opts)
	case "sqlite":
		return sqlite.Open(ctx, sqlitePath(cfg.DSN), opts)
	case "mysql":
		return mysql.Open(ctx, cfg.DSN, opts)
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "backend driver %q is not supported by this version", cfg.Driver)
}

// sqlitePath turns the policy's DSN (a path or a file: URI, already made
// absolute by the policy loader) into the file path sqlite.Open expects.
func sqlitePath(dsn string) string {
	p := strings.TrimPrefix(dsn, "file:")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return filepath.Clean(p)
}

// uniqueChecker is implemented by backends that can read unique indexes.
type uniqueChecker interface {
	UniqueNotNull(ctx context.Context, schema, table, column string) (bool, error)
}

// MarkUniqueUnits sets Table.UnitUnique for every private table whose unit
// column the backend's schema declares NOT NULL and unique, so the planner
// can skip the per-unit bounding window (a large saving on big tables). It
// reads the schema only. A failure leaves the flag unset (bounding stays).
func MarkUniqueUnits(ctx context.Context, pol *policies.Policy, be Backend, log *slog.Logger) {
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
