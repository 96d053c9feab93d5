package planner_test

import (
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
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

// TestPassthroughCompositeLeaks: statistics cannot be read without naming
// them, through whole-row values or renamed columns.
func TestPassthroughCompositeLeaks(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for _, sql := range []string{
		"SELECT c FROM pg_class c WHERE relname = 'people'",
		"SELECT pg_class FROM pg_catalog.pg_class",
		"SELECT row(c.*) FROM pg_class c",
		"SELECT (SELECT array_agg(x) FROM (SELECT c) x) FROM pg_class c",
		"SELECT x FROM (SELECT * FROM pg_class) x",
		"SELECT * FROM pg_class AS c(a, b, c2, d, e, f, g, h, i, j, k)",
		"WITH x(a, b, c, d, e, f, g, h, i, j, k) AS (SELECT * FROM pg_class) SELECT * FROM x",
		"SELECT * FROM (SELECT * FROM pg_class) AS s(a, b, c, d, e, f, g, h, i, j, k)",
	} {
		if _, err := plan(t, p, sql, planArgs{}); !sqlerr.HasCode(err, sqlerr.InsufficientPrivilege) {
			t.Errorf("%s: %v", sql, err)
		}
	}
	// Ordinary catalog queries are forwarded unchanged.
	for _, sql := range []string{
		"SELECT * FROM pg_class c WHERE c.relname = 'zips'",
		"SELECT c.*, n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace",
		"SELECT count(*) FROM pg_class",
		"SELECT x FROM unnest(ARRAY[1, 2]) AS u(x), pg_class c WHERE c.oid = x",
	} {
		pl, err := plan(t, p, sql, planArgs{})
		if err != nil {
			t.Errorf("%s: %v", sql, err)
		} else if pl.SQL != sql {
			t.Errorf("%s: forwarded as %q", sql, pl.SQL)
		}
	}
}

// TestPassthroughColumnFilter: pg_attribute and information_schema.columns
// are read through a subquery that keeps only declared columns of tables
// with a column list (the SQL is checked here; TestCatalogWithPsql and
// friends run it against PostgreSQL).
func TestPassthroughColumnFilter(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for _, sql := range []string{
		"SELECT a.attname FROM pg_catalog.pg_attribute a WHERE a.attrelid = 'people'::regclass",
		"SELECT attname FROM pg_attribute WHERE attnum > 0",
		"SELECT column_name FROM information_schema.columns WHERE table_name = 'people'",
	} {
		pl, err := plan(t, p, sql, planArgs{})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		for _, want := range []string{"('public', 'people', 'age')", "('public', 'people', 'sex')", "('public', 'people')"} {
			if !strings.Contains(pl.SQL, want) {
				t.Errorf("%s: forwarded %q lacks %s", sql, pl.SQL, want)
			}
		}
		if strings.Contains(pl.SQL, "'person_id'") {
			t.Errorf("%s: the undeclared unit column is allowed: %s", sql, pl.SQL)
		}
	}
	// Other catalog relations are untouched.
	sql := "SELECT c.relname FROM pg_catalog.pg_class c"
	if pl, err := plan(t, p, sql, planArgs{}); err != nil || pl.SQL != sql {
		t.Fatalf("%s: %v", sql, err)
	}
}
