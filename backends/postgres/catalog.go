package postgres

import (
	"context"
	"strings"
	"sync"

	"github.com/ddp-proxy/ddp-proxy/catalog"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// catalogCache holds the description of the server's catalog relations
// that have statistics columns, read once per pool: the catalog's shape
// changes only with the server's major version.
type catalogCache struct {
	mu   sync.Mutex
	rels *catalog.Relations
}

// catalogRelationsSQL lists every column, in order and with its type, of
// each relation of pg_catalog and information_schema that has a column
// named in $1 (a comma-separated list).
const catalogRelationsSQL = `SELECT n.nspname::text, c.relname::text, a.attname::text, tn.nspname::text, t.typname::text
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
JOIN pg_catalog.pg_namespace tn ON tn.oid = t.typnamespace
WHERE n.nspname IN ('pg_catalog', 'information_schema') AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
  AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute s
    WHERE s.attrelid = c.oid AND s.attnum > 0 AND NOT s.attisdropped
      AND s.attname::text = ANY (pg_catalog.string_to_array($1, ',')))
ORDER BY n.nspname, c.relname, a.attnum`

// CatalogRelations describes the server's catalog relations that hold a
// statistics column (catalog.IsStatistics), so that catalog queries can
// read them through derived tables that blank those columns. It is read
// on first use and kept for the life of the pool; a failure is not
// cached (the next call tries again).
func (b *Backend) CatalogRelations(ctx context.Context) (*catalog.Relations, error) {
	b.catalog.mu.Lock()
	defer b.catalog.mu.Unlock()
	if b.catalog.rels != nil {
		return b.catalog.rels, nil
	}
	var rels []catalog.Relation
	names := strings.Join(catalog.StatisticsColumns(), ",")
	err := b.Rows(ctx, catalogRelationsSQL, []ir.Value{ir.String(names)}, func(_ []string, row []ir.Value) error {
		schema, rel := row[0].Str, row[1].Str
		if n := len(rels); n == 0 || rels[n-1].Schema != schema || rels[n-1].Name != rel {
			rels = append(rels, catalog.Relation{Schema: schema, Name: rel})
		}
		last := &rels[len(rels)-1]
		last.Columns = append(last.Columns, catalog.Column{Name: row[2].Str, TypeSchema: row[3].Str, Type: row[4].Str})
		return nil
	})
	if err != nil {
		return nil, err
	}
	b.catalog.rels = catalog.NewRelations(rels)
	return b.catalog.rels, nil
}
