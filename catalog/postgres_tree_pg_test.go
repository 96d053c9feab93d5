package catalog_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	_ "github.com/lib/pq"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/postgres"
	"github.com/ddp-proxy/ddp-proxy/catalog"
	"github.com/ddp-proxy/ddp-proxy/internal/pgtest"
)

// pgDescription reads the catalog description from the PostgreSQL at
// DDP_TEST_POSTGRES_DSN through the backend, and opens a raw connection.
func pgDescription(t *testing.T) (*catalog.Relations, *sql.DB) {
	t.Helper()
	dsn := pgtest.DSN(t, "the PostgreSQL catalog rewrite test")
	be, err := postgres.Open(context.Background(), dsn, backends.Options{})
	if err != nil {
		t.Fatalf("PostgreSQL at DDP_TEST_POSTGRES_DSN: %v", err)
	}
	t.Cleanup(func() { be.Close() })
	rels, err := be.CatalogRelations(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	again, err := be.CatalogRelations(context.Background())
	if err != nil || again != rels {
		t.Fatalf("the description is read again (%v)", err)
	}
	raw, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return rels, raw
}

// catalogRelationsOf runs q (it selects schema and relation names) and
// returns its rows.
func catalogRelationsOf(t *testing.T, raw *sql.DB, q string, args ...any) [][2]string {
	t.Helper()
	rows, err := raw.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var r [2]string
		if err := rows.Scan(&r[0], &r[1]); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCatalogDescriptionMatchesServer: the description lists every column
// of pg_class, pg_database and pg_sequences in the server's order, and
// every relation the server has with a statistics column is one the
// allow-list reads through a derived table or refuses, never one it
// forwards as holding definitions only.
func TestCatalogDescriptionMatchesServer(t *testing.T) {
	rels, raw := pgDescription(t)
	for _, name := range []string{"pg_class", "pg_database", "pg_sequences"} {
		rel := rels.Lookup("pg_catalog", name)
		if rel == nil {
			t.Fatalf("%s is not described", name)
		}
		var got []string
		for _, c := range rel.Columns {
			got = append(got, c.Name)
		}
		var want string
		if err := raw.QueryRow(`SELECT string_agg(attname, ',' ORDER BY attnum) FROM pg_attribute
WHERE attrelid = ('pg_catalog.' || $1)::regclass AND attnum > 0 AND NOT attisdropped`, name).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s: described %v, server %s", name, got, want)
		}
	}
	catRels := catalogRelationsOf(t, raw, `SELECT DISTINCT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
WHERE n.nspname IN ('pg_catalog', 'information_schema') AND c.relkind IN ('r', 'v', 'm', 'p', 'f') AND a.attname = ANY ($1)`,
		"{"+strings.Join(catalog.StatisticsColumns(), ",")+"}")
	for _, r := range catRels {
		schema, name := r[0], r[1]
		if rels.Lookup(schema, name) == nil {
			t.Errorf("%s.%s has a statistics column but is not described", schema, name)
		}
		if catalog.PostgresRelation(schema, name) == catalog.Definitions {
			t.Errorf("%s.%s has a statistics column but is forwarded as definitions only", schema, name)
		}
	}
	n := len(catRels)
	if n != rels.Len() {
		t.Errorf("%d relations with statistics columns, %d described", n, rels.Len())
	}
}

// TestCatalogAllowListCoversServer: every relation of the server's
// pg_catalog and information_schema has a rule: the allow-list was
// reviewed against this version, and a relation a later version adds is
// refused until it is (this test then names it).
func TestCatalogAllowListCoversServer(t *testing.T) {
	_, raw := pgDescription(t)
	catRels := catalogRelationsOf(t, raw, `SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname IN ('pg_catalog', 'information_schema') AND c.relkind IN ('r', 'v', 'm', 'p', 'f') ORDER BY 1, 2`)
	for _, r := range catRels {
		schema, name := r[0], r[1]
		if catalog.PostgresRelation(schema, name) == catalog.Unknown {
			t.Errorf("%s.%s has no rule", schema, name)
		}
	}
	n := len(catRels)
	if n < 100 {
		t.Fatalf("only %d catalog relations", n)
	}
}

// TestDerivedTablesAloneCloseWholeRowLeaks: the whole-row attacks that
// the planner refuses (x.*, row values, row comparisons, to_json) learn
// nothing even without those refusals: after the derived-table rewrite
// alone, PostgreSQL answers them the same for the true row count as for a
// wrong one, while it tells the two apart on the original text.
func TestDerivedTablesAloneCloseWholeRowLeaks(t *testing.T) {
	rels, raw := pgDescription(t)
	var rnd [4]byte
	rand.Read(rnd[:])
	schema := "ddp_catrw_" + hex.EncodeToString(rnd[:])
	t.Cleanup(func() { raw.Exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE") })
	const n = 1777
	for _, q := range []string{
		"CREATE SCHEMA " + schema,
		"CREATE TABLE " + schema + ".people (id serial PRIMARY KEY, age integer)",
		fmt.Sprintf("INSERT INTO %s.people (age) SELECT g %% 90 FROM generate_series(1, %d) g", schema, n),
		"ANALYZE " + schema + ".people",
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	answer := func(q string) string {
		t.Helper()
		rows, err := raw.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var v sql.NullString
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(v))
		}
		return strings.Join(out, ",")
	}
	const people = "c.relname = 'people' AND c.relnamespace = '{S}'::regnamespace"
	const seqRow = "s.schemaname, s.sequencename, s.sequenceowner, s.data_type, s.start_value, s.min_value, s.max_value, s.increment_by, s.cycle, s.cache_size, {K}::bigint"
	for _, attack := range []string{
		"SELECT count(*) FROM pg_class c WHERE " + people + " AND (c.*)::text LIKE '%,{K},%'",
		"SELECT count(*) FROM pg_class c WHERE " + people + " AND c::text LIKE '%,{K},%'",
		"SELECT count(*) FROM pg_class c WHERE " + people + " AND (to_json(c)->>'reltuples')::real = {K}",
		"SELECT count(*) FROM pg_class c WHERE " + people + " AND row_to_json(c.*)->>'reltuples' = '{K}'",
		"SELECT count(*) FROM pg_class c WHERE " + people + " AND (SELECT array_agg(x)::text FROM (SELECT c) x) LIKE '%,{K},%'",
		"SELECT count(*) FROM pg_class AS c(a, b, x3, x4, x5, x6, x7, x8, x9, x10, rt) WHERE c.b = 'people' AND c.x3 = '{S}'::regnamespace AND c.rt = {K}",
		"SELECT count(*) FROM pg_sequences s WHERE s.schemaname = '{S}' AND ROW(s.*) = ROW(" + seqRow + ")",
		"SELECT count(*) FROM pg_sequences s WHERE s.schemaname = '{S}' AND s IS NOT DISTINCT FROM ROW(" + seqRow + ")",
		"SELECT count(*) FROM pg_sequences s WHERE s.schemaname = '{S}' AND (" + seqRow + ") IN (SELECT * FROM pg_sequences)",
		"SELECT count(*) FROM (SELECT * FROM pg_sequences WHERE schemaname = '{S}' INTERSECT SELECT " + seqRow + " FROM pg_sequences s) x",
		"SELECT count(*) FROM (SELECT DISTINCT * FROM (SELECT * FROM pg_sequences WHERE schemaname = '{S}' UNION ALL SELECT " + seqRow +
			" FROM pg_sequences s WHERE s.schemaname = '{S}') u GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11) d",
	} {
		expand := func(k int) string {
			return strings.NewReplacer("{S}", schema, "{K}", fmt.Sprint(k)).Replace(attack)
		}
		truth, wrong := expand(n), expand(n+1)
		if a, b := answer(truth), answer(wrong); a == b {
			t.Errorf("%s: directly the true and the wrong count both give %s: not an attack", attack, a)
			continue
		}
		var answers []string
		for _, q := range []string{truth, wrong} {
			tree, err := pg.Parse(q)
			if err != nil {
				t.Fatal(err)
			}
			if changed, err := catalog.BlankRelations(tree, rels); err != nil || !changed {
				t.Fatalf("%s: rewrite %v %v", q, changed, err)
			}
			out, err := pg.Deparse(tree)
			if err != nil {
				t.Fatal(err)
			}
			answers = append(answers, answer(out))
		}
		if !slices.Equal(answers[:1], answers[1:]) {
			t.Errorf("%s: after the rewrite the true count gives %s and a wrong one %s", attack, answers[0], answers[1])
		}
	}
}
