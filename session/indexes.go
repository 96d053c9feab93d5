package session

import (
	"context"
	"strings"
	"sync"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// exposedIndexes holds the names of a PostgreSQL backend's indexes that
// catalog results may show: plain indexes (no expression, no predicate)
// on a declared table, over declared columns only, so that their
// definitions (pg_get_indexdef, psql's "Indexes:" section of \d) name
// nothing the policy hides. Read on the first catalog pass-through of a
// policy generation; a failed read shows no index (and is retried).
type exposedIndexes struct {
	mu    sync.Mutex
	names map[string]bool
}

// indexQuery lists every user index with its key columns (one row per
// column; a column-less row for an index over expressions only).
const indexQuery = `SELECT n.nspname, t.relname, i.relname, a.attname
FROM pg_catalog.pg_index x
JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid
JOIN pg_catalog.pg_class t ON t.oid = x.indrelid
JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace
LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = t.oid AND a.attnum = ANY (x.indkey::pg_catalog.int2[])
WHERE x.indexprs IS NULL AND x.indpred IS NULL
  AND n.nspname <> 'pg_catalog' AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg_toast%'`

// loadExposedIndexes reads the backend's indexes once per generation.
func (p *generation) loadExposedIndexes(ctx context.Context) {
	if p.pol.Backend.Driver != "postgres" {
		return
	}
	p.indexes.mu.Lock()
	defer p.indexes.mu.Unlock()
	if p.indexes.names != nil {
		return
	}
	type index struct {
		schema, table string
		ok            bool
	}
	seen := map[string]*index{}
	err := p.backend.Rows(ctx, indexQuery, nil, func(_ []string, row []ir.Value) error {
		key := row[0].Text() + "." + row[2].Text()
		ix := seen[key]
		if ix == nil {
			_, t := p.pol.LookupTable(row[0].Text(), row[1].Text())
			ix = &index{schema: row[0].Text(), table: row[1].Text(), ok: t != nil}
			seen[key] = ix
		}
		if !ix.ok {
			return nil
		}
		_, t := p.pol.LookupTable(ix.schema, ix.table)
		switch {
		case row[3].IsNull():
			ix.ok = false // a key column that is not a plain column
		case len(t.ColumnNames) == 0 && t.Public:
			// A public table without a column list shows all columns.
		case t.Columns[strings.ToLower(row[3].Text())] == nil:
			ix.ok = false
		}
		return nil
	})
	if err != nil {
		p.log.Warn("reading the backend's indexes failed; catalog results show none", "err", err)
		return
	}
	names := map[string]bool{}
	for key, ix := range seen {
		if ix.ok {
			names[key[strings.IndexByte(key, '.')+1:]] = true
		}
	}
	p.indexes.names = names
}

// exposedIndex reports whether name is an index catalog results may show.
func (p *generation) exposedIndex(name string) bool {
	p.indexes.mu.Lock()
	defer p.indexes.mu.Unlock()
	return p.indexes.names[name]
}
