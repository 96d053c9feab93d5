package sqlite

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/internal/backendtest"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// BenchmarkAggregate runs a bounded GROUP BY with a quantized sum over
// ~600 rows (200 units) joined to the public table.
func BenchmarkAggregate(b *testing.B) {
	d := backendtest.Generate(rand.New(rand.NewPCG(1, 1)), 200, "bench")
	path := b.TempDir() + "/bench.db"
	raw, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		b.Fatal(err)
	}
	if err := d.Load(context.Background(), raw, "sqlite"); err != nil {
		b.Fatal(err)
	}
	raw.Close()
	be, err := Open(context.Background(), path, backends.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	tc := func(n string) ir.ColumnRef { return ir.ColumnRef{Qualifier: "t", Name: n} }
	f := tc("f")
	q := &ir.BackendQuery{
		From:           ir.TableRef{Name: d.PrivateName, Alias: "t"},
		Joins:          []ir.Join{{Table: ir.TableRef{Name: d.PublicName, Alias: "p"}, Left: tc("cid"), Right: ir.ColumnRef{Qualifier: "p", Name: "id"}}},
		Where:          ir.Compare{Op: ir.OpGt, L: tc("i"), R: ir.Literal{Value: ir.Int(-15)}},
		Unit:           tc("uid"),
		MaxRowsPerUnit: 2,
		GroupBy:        []ir.Expr{ir.ColumnRef{Qualifier: "p", Name: "region"}},
		Aggs:           []ir.BackendAgg{{Kind: ir.CountRows}, {Kind: ir.SumClamped, Column: &f, Lo: -5, Hi: 5, Quantum: 0.25}},
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := be.Aggregate(context.Background(), q, func(ir.BackendRow) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
