package planner

import "testing"

// FuzzCheckCatalogTree: any statement is checked, rewritten or refused;
// the rewrite never crashes (the deparser is C code) and never lets a
// statistics column or size function through.
func FuzzCheckCatalogTree(f *testing.F) {
	for _, s := range []string{
		"SELECT relname, reltuples FROM pg_catalog.pg_class",
		"SELECT pg_size_pretty(pg_table_size(c.oid)) FROM pg_class c WHERE c.relpages > 0 ORDER BY c.reltuples",
		"SELECT (c).reltuples, x.* FROM pg_class c, LATERAL (SELECT relallvisible) x",
		"WITH t AS (SELECT reltuples FROM pg_class) SELECT * FROM t UNION SELECT relpages FROM pg_class",
		"SELECT CASE WHEN reltuples > 0 THEN pg_total_relation_size(oid) END FROM pg_class GROUP BY 1 HAVING max(relpages) > 1",
	} {
		f.Add(s)
	}
	f.Add("SELECT a.attname FROM pg_attribute a, information_schema.columns c WHERE a.attname = c.column_name")
	cols := &declaredColumns{tables: [][]string{{"public", "people"}}, columns: [][]string{{"public", "people", "age"}}}
	f.Fuzz(func(t *testing.T, text string) {
		out, err := checkCatalogTree(text, true, cols)
		if err != nil || out == text {
			return
		}
		// The deparser does not always print re-parseable SQL
		// ((0).a → 0.a): PostgreSQL then refuses it too, which leaks
		// nothing. What parses must need no further blanking.
		again, err := checkCatalogTree(out, true, nil)
		if err == nil && again != out {
			t.Fatalf("rewrite of %q is not a fixed point: %q → %q (%v)", text, out, again, err)
		}
	})
}
