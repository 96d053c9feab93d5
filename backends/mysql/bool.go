package mysql

import (
	"context"
	"strings"
	"sync"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// MySQL has no boolean type: BOOLEAN is TINYINT(1), and a grouped boolean
// comes back as 0/1, indistinguishable by type name from a small integer.
// The other backends return booleans, and the release step matches keys
// against the policy's domain (true/false), so Aggregate turns the keys of
// TINYINT(1) columns back into booleans. The column types are read from
// information_schema once per table (schema only, never data).
type boolColumns struct {
	mu    sync.Mutex
	cache map[string]map[string]bool // "schema.table" → lower-case column → is TINYINT(1)
}

func (b *Backend) boolColumnsOf(ctx context.Context, schema, table string) (map[string]bool, error) {
	key := schema + "." + table
	b.bools.mu.Lock()
	m, ok := b.bools.cache[key]
	b.bools.mu.Unlock()
	if ok {
		return m, nil
	}
	const q = `SELECT column_name FROM information_schema.columns
WHERE table_schema = COALESCE(NULLIF(?, ''), DATABASE()) AND table_name = ? AND LOWER(column_type) = 'tinyint(1)'`
	m = map[string]bool{}
	err := b.Rows(ctx, q, []ir.Value{ir.String(schema), ir.String(table)}, func(_ []string, row []ir.Value) error {
		m[strings.ToLower(row[0].Text())] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	b.bools.mu.Lock()
	if b.bools.cache == nil {
		b.bools.cache = map[string]map[string]bool{}
	}
	b.bools.cache[key] = m
	b.bools.mu.Unlock()
	return m, nil
}

// boolKeys returns, per GROUP BY key of q, whether it is a TINYINT(1).
func (b *Backend) boolKeys(ctx context.Context, q *ir.BackendQuery) ([]bool, error) {
	out := make([]bool, len(q.GroupBy))
	tables := append([]ir.TableRef{q.From}, make([]ir.TableRef, 0, len(q.Joins))...)
	for _, j := range q.Joins {
		tables = append(tables, j.Table)
	}
	for i, key := range q.GroupBy {
		g, ok := key.(ir.ColumnRef)
		if !ok {
			// An expression key: the release normalises a truth value
			// MySQL returns as 0/1 by the key's analysed type.
			continue
		}
		for _, t := range tables {
			if g.Qualifier != "" && !strings.EqualFold(g.Qualifier, t.RefName()) {
				continue
			}
			m, err := b.boolColumnsOf(ctx, t.Schema, t.Name)
			if err != nil {
				return nil, err
			}
			if m[strings.ToLower(g.Name)] {
				out[i] = true
				break
			}
		}
	}
	return out, nil
}

// Aggregate runs q (see backends.Engine.Aggregate) with boolean keys
// restored.
func (b *Backend) Aggregate(ctx context.Context, q *ir.BackendQuery, fn func(ir.BackendRow) error) error {
	var isBool []bool
	if len(q.GroupBy) > 0 {
		var err error
		if isBool, err = b.boolKeys(ctx, q); err != nil {
			return err
		}
	}
	return b.Engine.Aggregate(ctx, q, func(row ir.BackendRow) error {
		for i, k := range row.Keys {
			if i < len(isBool) && isBool[i] && k.Kind == ir.KindInt {
				row.Keys[i] = ir.Bool(k.Int != 0)
			}
		}
		return fn(row)
	})
}
