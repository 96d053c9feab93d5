package backends_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/aggregate/quantile"
	"github.com/ddp-proxy/ddp-proxy/backends/internal/backendtest"
	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// quantileRow is one row of the quantile table; a nil field is NULL.
type quantileRow struct {
	u    int64
	g    *int64
	x    *int64   // integer, bounds [0, 1000]: every integer a candidate
	w    *int64   // integer, bounds [-5000, 100000]: bins of width 103
	f    *float64 // real, bounds [0, 100]: 1024 bins
	d    *int64   // date (days), bounds [2010-01-01, 2012-12-31]: bins of 2 days
	tsUS *int64   // timestamp (µs), bounds [2010-01-01, 2011-01-01)
}

// TestQuantileBinsOnEveryBackend runs the per-bin count query of the
// quantile aggregates — GROUP BY g, BinExpr(col) with COUNT(col), each unit
// keeping at most 2 rows — on SQLite, PostgreSQL and MariaDB over random
// rows that include values on the cuts, just below them, beyond both
// bounds and NULL, for an integer grid of points, an integer grid of wide
// bins, a real grid, a date grid and a timestamp grid. Every backend must
// return exactly the counts Go computes with quantile.Grid.BinOf from the
// stored values, and the query stays within each dialect's parameter and
// depth limits (units hold at most 2 rows here, so the contribution bound
// keeps every row and the expected counts do not depend on which rows a
// backend keeps).
func TestQuantileBinsOnEveryBackend(t *testing.T) {
	table := uniqueTable("quantile_bins")
	cols := map[string]string{
		"sqlite":   "u INTEGER, g INTEGER, x INTEGER, w INTEGER, f REAL, d DATE, ts TIMESTAMP",
		"postgres": "u BIGINT, g BIGINT, x BIGINT, w BIGINT, f DOUBLE PRECISION, d DATE, ts TIMESTAMP",
		"mysql":    "u BIGINT, g BIGINT, x BIGINT, w BIGINT, f DOUBLE, d DATE, ts DATETIME(6)",
	}
	const jan1 = 14610 // 2010-01-01
	grids := map[string]struct {
		g    quantile.Grid
		kind ir.Kind
		typ  exprtype.Type
		lo   ir.Value
		hi   ir.Value
	}{}
	mk := func(name string, g quantile.Grid, err error, kind ir.Kind, typ exprtype.Type, lo, hi ir.Value) {
		if err != nil {
			t.Fatal(err)
		}
		grids[name] = struct {
			g    quantile.Grid
			kind ir.Kind
			typ  exprtype.Type
			lo   ir.Value
			hi   ir.Value
		}{g, kind, typ, lo, hi}
	}
	gx, err := quantile.IntegerGrid(0, 1000)
	mk("x", gx, err, ir.KindInt, exprtype.Integer, ir.Int(0), ir.Int(1000))
	gw, err := quantile.IntegerGrid(-5000, 100000)
	mk("w", gw, err, ir.KindInt, exprtype.Integer, ir.Int(-5000), ir.Int(100000))
	gf, err := quantile.RealGrid(0, 100)
	mk("f", gf, err, ir.KindFloat, exprtype.Real, ir.Float(0), ir.Float(100))
	gd, err := quantile.IntegerGrid(jan1, jan1+1095)
	mk("d", gd, err, ir.KindDate, exprtype.Date, ir.Date(jan1), ir.Date(jan1+1095))
	tsLo, tsHi := int64(jan1)*ir.MicrosPerDay, int64(jan1+365)*ir.MicrosPerDay-1
	gt, err := quantile.IntegerGrid(tsLo, tsHi)
	mk("ts", gt, err, ir.KindTimestamp, exprtype.Timestamp, ir.Timestamp(tsLo), ir.Timestamp(tsHi))

	rng := rand.New(rand.NewPCG(21, 22))
	pick := func(g quantile.Grid, lo, hi int64) int64 {
		switch rng.IntN(4) {
		case 0: // a cut or the integer below it
			c := g.Cut(1 + rng.IntN(g.Len()-1)).Int
			return c - int64(rng.IntN(2))
		case 1: // beyond the bounds
			if rng.IntN(2) == 0 {
				return lo - 1 - rng.Int64N(100)
			}
			return hi + 1 + rng.Int64N(100)
		}
		return lo + rng.Int64N(hi-lo+1)
	}
	var data []quantileRow
	for i := range 600 {
		r := quantileRow{u: int64(i / 2)}
		if rng.IntN(8) > 0 {
			g := rng.Int64N(3)
			r.g = &g
		}
		if rng.IntN(10) > 0 {
			v := pick(gx, 0, 1000)
			r.x = &v
		}
		if rng.IntN(10) > 0 {
			v := pick(gw, -5000, 100000)
			r.w = &v
		}
		if rng.IntN(10) > 0 {
			var v float64
			switch rng.IntN(4) {
			case 0:
				v = gf.Cut(1 + rng.IntN(gf.Len()-1)).Real
			case 1:
				v = rng.Float64()*40 - 20 + float64(rng.IntN(2))*100
			default:
				v = rng.Float64() * 100
			}
			r.f = &v
		}
		if rng.IntN(10) > 0 {
			v := pick(gd, jan1, jan1+1095)
			r.d = &v
		}
		if rng.IntN(10) > 0 {
			v := pick(gt, tsLo, tsHi)
			r.tsUS = &v
		}
		data = append(data, r)
	}
	rowsFor := func(dialect string) []string {
		var out []string
		num := func(p *int64) string {
			if p == nil {
				return "NULL"
			}
			return strconv.FormatInt(*p, 10)
		}
		tm := func(k ir.Kind, p *int64) string {
			if p == nil {
				return "NULL"
			}
			return "'" + ir.CanonicalText(k, *p) + "'"
		}
		for _, r := range data {
			f := "NULL"
			if r.f != nil {
				f = strconv.FormatFloat(*r.f, 'g', -1, 64)
			}
			out = append(out, fmt.Sprintf("(%d, %s, %s, %s, %s, %s, %s)", r.u, num(r.g), num(r.x), num(r.w), f,
				tm(ir.KindDate, r.d), tm(ir.KindTimestamp, r.tsUS)))
		}
		return out
	}
	columns := func(c ir.ColumnRef) (exprtype.Column, error) {
		gr, ok := grids[c.Name]
		if !ok {
			return exprtype.Column{}, sqlerr.New(sqlerr.UndefinedColumn, "column %s does not exist", c.Name)
		}
		return exprtype.Column{Ref: ir.ColumnRef{Qualifier: "t", Name: c.Name}, Type: gr.typ, HasBounds: true, Lo: gr.lo, Hi: gr.hi}, nil
	}
	value := func(r quantileRow, name string) (quantile.Value, bool) {
		switch name {
		case "x":
			return quantile.Value{IsInt: true, Int: deref(r.x)}, r.x != nil
		case "w":
			return quantile.Value{IsInt: true, Int: deref(r.w)}, r.w != nil
		case "f":
			if r.f == nil {
				return quantile.Value{}, false
			}
			return quantile.Value{Real: *r.f}, true
		case "d":
			return quantile.Value{IsInt: true, Int: deref(r.d)}, r.d != nil
		}
		return quantile.Value{IsInt: true, Int: deref(r.tsUS)}, r.tsUS != nil
	}
	backends := eachBackendRows(t, table, cols, rowsFor)
	g := ir.ColumnRef{Qualifier: "t", Name: "g"}
	for _, name := range []string{"x", "w", "f", "d", "ts"} {
		gr := grids[name]
		bin, _, err := exprtype.Scalar(quantile.BinExpr(ir.ColumnRef{Name: name}, gr.g, gr.kind), columns)
		if err != nil {
			t.Fatalf("%s: the bin expression does not lower: %v", name, err)
		}
		col := ir.ColumnRef{Qualifier: "t", Name: name}
		q := &ir.BackendQuery{
			From: ir.TableRef{Name: table, Alias: "t"}, Unit: ir.ColumnRef{Qualifier: "t", Name: "u"}, MaxRowsPerUnit: 2,
			GroupBy: []ir.Expr{g, bin},
			Aggs:    []ir.BackendAgg{{Kind: ir.CountValues, Column: &col}},
		}
		want := map[string]int64{}
		for _, r := range data {
			v, ok := value(r, name)
			if !ok {
				continue
			}
			gk := ir.Null()
			if r.g != nil {
				gk = ir.Int(*r.g)
			}
			want[gk.SQL()+"/"+strconv.Itoa(gr.g.BinOf(v))]++
		}
		for _, b := range backends {
			// The planner refuses statements over the dialect's limits
			// (54000/54001): the bin query of 1024 bins stays inside them.
			sh, err := b.dialect.Measure(q)
			if err != nil || sh.Params > b.dialect.MaxParams || sh.Depth > b.dialect.MaxDepth {
				t.Fatalf("%s %s: the bin query measures %+v (%v), limits %d params, depth %d", b.name, name, sh, err, b.dialect.MaxParams, b.dialect.MaxDepth)
			}
			rows, err := backendtest.Collect(context.Background(), b.agg, q)
			if err != nil {
				t.Fatalf("%s %s: %v", b.name, name, err)
			}
			got := map[string]int64{}
			for _, r := range rows {
				if r.Aggs[0] == 0 {
					continue // the bin of NULL values: no weight
				}
				if r.Keys[1].Kind != ir.KindInt || r.Keys[1].Int < 0 || r.Keys[1].Int >= int64(gr.g.Len()) {
					t.Fatalf("%s %s: bin %v outside 0..%d", b.name, name, r.Keys[1], gr.g.Len()-1)
				}
				got[r.Keys[0].SQL()+"/"+strconv.FormatInt(r.Keys[1].Int, 10)] += r.Aggs[0]
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s %s: per-bin counts differ from Go's\n got %v\nwant %v", b.name, name, got, want)
			}
		}
	}
	if len(backends) < 3 {
		t.Logf("ran on %d backends; set DDP_TEST_POSTGRES_DSN and DDP_TEST_MYSQL_DSN for all three", len(backends))
	}
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
