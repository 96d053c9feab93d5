package planner

import (
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// noRowRead turns a row-level read of a private table that provably reads
// no row — SELECT * FROM t LIMIT 0, SELECT p.*, x FROM t p WHERE 1 = 0:
// how drivers, pandas users and BI tools learn a table's columns — into
// the query the private path answers with its typed, empty result, at no
// cost and without the backend (Plan.NoRows). Each star becomes the
// columns the catalog shows for its table (catalog/emulated.Describe: the
// declared ones, in the policy's order), tables in FROM order. Nil when
// the read is not such a probe, or has a star it cannot expand (a public
// table that declares no columns shows the backend's, which only the
// backend knows): the statement is then refused as any row-level read.
func (p *Planner) noRowRead(rq *ir.RowQuery, names policies.Names) *ir.Query {
	q := &ir.Query{From: rq.From, Joins: rq.Joins, Where: rq.Where, Limit: rq.Limit, Offset: rq.Offset}
	if !q.ReadsNoRow() {
		return nil
	}
	refs := []ir.TableRef{rq.From}
	for _, j := range rq.Joins {
		refs = append(refs, j.Table)
	}
	for _, it := range rq.Items {
		if !it.Star {
			if c, ok := it.Expr.(ir.ColumnRef); ok {
				si := ir.SelectItem{Arg: &c}
				if it.Name != "" && it.Name != c.Name {
					si.Alias = it.Name
				}
				q.Select = append(q.Select, si)
				continue
			}
			q.Select = append(q.Select, ir.SelectItem{Expr: it.Expr, Alias: it.Name})
			continue
		}
		found := false
		for _, r := range refs {
			ref := r.RefName()
			if it.Qualifier != "" && !strings.EqualFold(it.Qualifier, ref) {
				continue
			}
			found = true
			_, tbl := p.pol.Resolve(names, r.Schema, r.Name)
			if tbl == nil || len(tbl.ColumnNames) == 0 {
				return nil
			}
			for _, cn := range tbl.ColumnNames {
				q.Select = append(q.Select, ir.SelectItem{Arg: &ir.ColumnRef{Qualifier: ref, Name: cn}})
			}
		}
		if !found {
			return nil
		}
	}
	return q
}
