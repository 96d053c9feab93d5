package prepare

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// VerifyConstrainedDomains checks, before serving, that every row of a
// blowfish or induced table with published constraints holds a declared
// domain value (not NULL, not outside the domain) in each constrained
// column. The load-time analysis models the table as counts over those
// domains; a NULL or stray value would be an unpublished extra row or
// column of the contingency table, and its bound could be exceeded (row
// and column sums of 2×3 with a NULL row: L1 6 > min(2r, 2c) = 4). The
// check reads private data, but only the DBA sees its outcome: the proxy
// refuses to start, and the message gives no count.
func VerifyConstrainedDomains(ctx context.Context, pol *policies.Policy, be backends.Backend) error {
	for _, dn := range pol.DatasetNames {
		ds := pol.Datasets[dn]
		if ds.Analysis == nil || len(ds.Constraints) == 0 {
			continue
		}
		for _, tn := range ds.TableNames {
			t := ds.Tables[tn]
			if t.Public {
				continue
			}
			if err := verifyOneRowPerUnit(ctx, dn, ds, t, be); err != nil {
				return err
			}
			for _, cn := range ds.Analysis.ConstrainedColumns() {
				col := t.Column(cn)
				ref := ir.ColumnRef{Qualifier: "t0", Name: cn}
				if col.Type == policies.TypeText {
					if err := verifyTextDomain(ctx, dn, ds, t, col, ref, be); err != nil {
						return err
					}
					continue
				}
				var inDomain ir.Expr
				if d := col.Domain; len(d.Range) == 2 {
					// A range is its integers: a fraction inside it
					// (SQLite keeps 2.5 in an INTEGER column, a numeric
					// column holds 2.5) is no declared value.
					inDomain = ir.And{
						L: ir.Between{X: ref, Lo: ir.Literal{Value: ir.Int(d.Range[0])}, Hi: ir.Literal{Value: ir.Int(d.Range[1])}},
						R: ir.Compare{Op: ir.OpEq, L: ir.Func{Name: "floor", Args: []ir.Expr{ref}}, R: ref},
					}
				} else {
					var list []ir.Expr
					for _, v := range d.Resolved {
						list = append(list, ir.Literal{Value: v})
					}
					inDomain = ir.In{X: ref, List: list}
				}
				q := &ir.BackendQuery{
					From:  ir.TableRef{Schema: t.Schema, Name: t.Name, Alias: "t0"},
					Where: ir.Or{L: ir.IsNull{X: ref}, R: ir.Not{X: inDomain}},
					Aggs:  []ir.BackendAgg{{Kind: ir.CountRows}},
				}
				var bad int64
				if err := be.Aggregate(ctx, q, func(r ir.BackendRow) error { bad = r.Aggs[0]; return nil }); err != nil {
					return fmt.Errorf("dataset %s: checking that %s.%s holds only its declared domain: %w", dn, t.Name, cn, err)
				}
				if bad > 0 {
					return fmt.Errorf("dataset %s (model %s): column %s.%s holds NULL or values outside its declared domain, but its published constraints are analysed over that domain; declare every value (or clean the data, or use a view with NOT NULL and the domain) before serving",
						dn, ds.Model, t.Name, cn)
				}
			}
		}
	}
	return nil
}

// verifyOneRowPerUnit checks that no unit of t has two rows (nor two rows
// a NULL unit): the models read each row as one individual
// (max_rows_per_unit 1), but the backend keeps one row per unit before
// aggregating, so with a repeated unit a query reads other rows than the
// published counts count, and its answer is no longer a function of them
// (COUNT(*) WHERE a = 3 over a marginal on a counts units with a row at 3:
// swapping a values between two units keeps the marginal and changes it).
// It compares the row count with the count after that bounding; a unit
// the schema declares unique (and NOT NULL) needs no check.
func verifyOneRowPerUnit(ctx context.Context, dn string, ds *policies.Dataset, t *policies.Table, be backends.Backend) error {
	if t.UnitUnique || t.Unit == "" {
		return nil
	}
	count := func(bounded bool) (int64, error) {
		q := &ir.BackendQuery{
			From: ir.TableRef{Schema: t.Schema, Name: t.Name, Alias: "t0"},
			Aggs: []ir.BackendAgg{{Kind: ir.CountRows}},
		}
		if bounded {
			q.Unit = ir.ColumnRef{Qualifier: "t0", Name: t.Unit}
			q.MaxRowsPerUnit = 1
		}
		var n int64
		err := be.Aggregate(ctx, q, func(r ir.BackendRow) error { n = r.Aggs[0]; return nil })
		return n, err
	}
	all, err := count(false)
	if err != nil {
		return fmt.Errorf("dataset %s: checking that %s has one row per unit: %w", dn, t.Name, err)
	}
	kept, err := count(true)
	if err != nil {
		return fmt.Errorf("dataset %s: checking that %s has one row per unit: %w", dn, t.Name, err)
	}
	if all != kept {
		return fmt.Errorf("dataset %s (model %s): table %s has a unit (%s) with more than one row, or several rows with a NULL unit, but its published constraints count rows as individuals (one row per unit); give each row its own unit before serving",
			dn, ds.Model, t.Name, t.Unit)
	}
	return nil
}

// verifyTextDomain is the domain check of a constrained text column, made
// exact: the column's collation may compare case-, accent- or
// pad-insensitively (MySQL's utf8mb4_general_ci, PostgreSQL's citext,
// SQLite's NOCASE), so an IN over the declared values would accept an
// undeclared 'f' for a declared 'F', and WHERE sex = 'F' would also select
// a declared 'f' — while the analysis reads both as exact. It reads the
// exact spellings present (grouped by the exact text key, as queries
// group) and requires each to be declared, then, for each declared value
// v, that WHERE col = v selects only rows spelled v.
func verifyTextDomain(ctx context.Context, dn string, ds *policies.Dataset, t *policies.Table, col *policies.Column, ref ir.ColumnRef, be backends.Backend) error {
	exact := ir.Cast{X: ref, To: ir.CastText}
	// each streams the exact spellings WHERE where selects and stops at
	// the first one ok refuses (a column of many undeclared values is
	// never held in memory).
	each := func(where ir.Expr, ok func(v ir.Value) bool) (bad ir.Value, found bool, err error) {
		q := &ir.BackendQuery{
			From:    ir.TableRef{Schema: t.Schema, Name: t.Name, Alias: "t0"},
			Where:   where,
			GroupBy: []ir.Expr{exact},
			Aggs:    []ir.BackendAgg{{Kind: ir.CountRows}},
		}
		err = be.Aggregate(ctx, q, func(r ir.BackendRow) error {
			if !ok(r.Keys[0]) {
				bad, found = r.Keys[0], true
				return errStop
			}
			return nil
		})
		if found {
			return bad, true, nil
		}
		if err != nil {
			return ir.Value{}, false, fmt.Errorf("dataset %s: checking that %s.%s holds only its declared domain: %w", dn, t.Name, col.Name, err)
		}
		return ir.Value{}, false, nil
	}
	declared := func(v ir.Value) bool {
		return v.Kind == ir.KindString && slices.ContainsFunc(col.Domain.Resolved, func(d ir.Value) bool { return d.Kind == ir.KindString && v.Str == d.Str })
	}
	if _, found, err := each(nil, declared); err != nil {
		return err
	} else if found {
		return fmt.Errorf("dataset %s (model %s): column %s.%s holds NULL or values outside its declared domain, but its published constraints are analysed over that domain; declare every value (or clean the data, or use a view with NOT NULL and the domain) before serving",
			dn, ds.Model, t.Name, col.Name)
	}
	// Every declared value, present or not: WHERE sex = 'f' selects the
	// rows spelled 'F' even where no row is spelled 'f'.
	for _, d := range col.Domain.Resolved {
		v, found, err := each(ir.Compare{Op: ir.OpEq, L: ref, R: ir.Literal{Value: d}}, func(v ir.Value) bool { return v.Kind == ir.KindString && v.Str == d.Str })
		if err != nil {
			return err
		}
		if found {
			return fmt.Errorf("dataset %s (model %s): column %s.%s compares declared values %s and %s as equal (its collation ignores case, accents or trailing spaces), but its published constraints are analysed with every declared value distinct; give the column an exact (binary) collation, or declare one spelling",
				dn, ds.Model, t.Name, col.Name, d.SQL(), v.SQL())
		}
	}
	return nil
}

// errStop ends a verification scan at its first refused row.
var errStop = errors.New("stop")
