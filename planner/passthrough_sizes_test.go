package planner_test

import (
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/planner"
)

// TestPassthroughBlanksSizes: relation sizes grow with row counts, so a
// pass-through statement gets NULL in their place (psql's \dt+ shows a
// blank Size) and the rest of the statement is kept.
func TestPassthroughBlanksSizes(t *testing.T) {
	p := planner.New(loadPolicy(t))
	// psql 15's \dt+ (abridged to its size column and filters).
	sql := `SELECT n.nspname as "Schema", c.relname as "Name",
  pg_catalog.pg_size_pretty(pg_catalog.pg_table_size(c.oid)) as "Size", pg_total_relation_size(c.oid) + 1 AS t
FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r','p','') AND c.relname OPERATOR(pg_catalog.~) '^(zips)$' COLLATE pg_catalog.default
  AND EXISTS (SELECT 1 WHERE pg_relation_size(c.oid) > $1)`
	pl, err := plan(t, p, sql, planArgs{})
	if err != nil {
		t.Fatal(err)
	}
	if pl.Class != planner.ClassPassthrough {
		t.Fatalf("class %v", pl.Class)
	}
	low := strings.ToLower(pl.SQL)
	for _, f := range []string{"pg_table_size", "pg_total_relation_size", "pg_relation_size"} {
		if strings.Contains(low, f) {
			t.Errorf("%s survived: %s", f, pl.SQL)
		}
	}
	if strings.Count(low, "null::") != 3 || !strings.Contains(low, "pg_size_pretty(null::") || !strings.Contains(pl.SQL, "$1") ||
		!strings.Contains(pl.SQL, `"Size"`) || !strings.Contains(pl.SQL, "'^(zips)$'") {
		t.Errorf("rewritten: %s", pl.SQL)
	}
}
