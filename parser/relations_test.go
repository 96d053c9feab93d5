package parser

import (
	"reflect"
	"slices"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// TestRelationsComplete hides the private table "secret" in every place a
// statement can read it; it must always be listed, because the planner
// decides pass-through from Relations alone.
func TestRelationsComplete(t *testing.T) {
	hiding := []struct {
		name string
		d    Dialect
		sql  string
	}{
		{"where subquery", Postgres, "SELECT count(*) FROM t WHERE a IN (SELECT a FROM secret)"},
		{"where exists", Postgres, "SELECT count(*) FROM t WHERE EXISTS (SELECT 1 FROM secret)"},
		{"select-list subquery", Postgres, "SELECT (SELECT max(a) FROM secret)"},
		{"having subquery", Postgres, "SELECT a FROM t GROUP BY a HAVING count(*) > (SELECT count(*) FROM secret)"},
		{"order by subquery", Postgres, "SELECT a FROM t ORDER BY (SELECT 1 FROM secret LIMIT 1)"},
		{"limit subquery", Postgres, "SELECT a FROM t LIMIT (SELECT count(*) FROM secret)"},
		{"cte body", Postgres, "WITH x AS (SELECT * FROM secret) SELECT * FROM x"},
		{"nested cte", Postgres, "WITH x AS (WITH y AS (SELECT * FROM secret) SELECT * FROM y) SELECT * FROM x"},
		{"union branch", Postgres, "SELECT a FROM t UNION SELECT a FROM secret"},
		{"except branch", Postgres, "SELECT a FROM t EXCEPT (SELECT a FROM t INTERSECT SELECT a FROM secret)"},
		{"function argument", Postgres, "SELECT coalesce((SELECT a FROM secret), 1)"},
		{"lateral", Postgres, "SELECT * FROM t, LATERAL (SELECT * FROM secret WHERE secret.a = t.a) s"},
		{"derived table", Postgres, "SELECT * FROM (SELECT * FROM (SELECT * FROM secret) a) b"},
		{"join", Postgres, "SELECT * FROM t LEFT JOIN secret ON true"},
		{"case branch", Postgres, "SELECT CASE WHEN true THEN (SELECT 1 FROM secret) END"},
		{"values", Postgres, "VALUES ((SELECT a FROM secret))"},
		{"array subquery", Postgres, "SELECT ARRAY(SELECT a FROM secret)"},
		{"any subquery", Postgres, "SELECT 1 WHERE 1 = ANY (SELECT a FROM secret)"},
		{"table statement", Postgres, "TABLE secret"},
		{"window partition", Postgres, "SELECT count(*) OVER (PARTITION BY (SELECT 1 FROM secret)) FROM t"},
		{"filter", Postgres, "SELECT count(*) FILTER (WHERE a IN (SELECT a FROM secret)) FROM t"},
		{"cte shadowed elsewhere", Postgres, "SELECT (SELECT count(*) FROM secret), (WITH secret AS (SELECT 1) SELECT * FROM secret)"},
		{"cte sibling before definition", Postgres, "WITH a AS (SELECT * FROM secret), secret AS (SELECT 1) SELECT * FROM a"},
		{"cte self reference without recursive", Postgres, "WITH secret AS (SELECT * FROM secret) SELECT * FROM secret"},
		{"explain inner", Postgres, "EXPLAIN SELECT * FROM secret"},
		{"json table", Postgres, "SELECT * FROM JSON_TABLE((SELECT j FROM secret), '$' COLUMNS (a int))"},
		{"xmltable", Postgres, "SELECT * FROM XMLTABLE('/r' PASSING (SELECT x FROM secret) COLUMNS a int)"},
		{"rows from", Postgres, "SELECT * FROM ROWS FROM (generate_series(1, (SELECT count(*) FROM secret)))"},
		{"group by subquery", Postgres, "SELECT count(*) FROM t GROUP BY (SELECT 1 FROM secret)"},

		{"mysql where subquery", MySQL, "SELECT count(*) FROM t WHERE a IN (SELECT a FROM secret)"},
		{"mysql where exists", MySQL, "SELECT count(*) FROM t WHERE EXISTS (SELECT 1 FROM secret)"},
		{"mysql compare any", MySQL, "SELECT count(*) FROM t WHERE a > ANY (SELECT a FROM secret)"},
		{"mysql select-list subquery", MySQL, "SELECT (SELECT max(a) FROM secret)"},
		{"mysql having subquery", MySQL, "SELECT a FROM t GROUP BY a HAVING count(*) > (SELECT count(*) FROM secret)"},
		{"mysql order by subquery", MySQL, "SELECT a FROM t ORDER BY (SELECT 1 FROM secret LIMIT 1)"},
		{"mysql cte body", MySQL, "WITH x AS (SELECT * FROM secret) SELECT * FROM x"},
		{"mysql recursive cte", MySQL, "WITH RECURSIVE x AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM x JOIN secret) SELECT * FROM x"},
		{"mysql union branch", MySQL, "SELECT a FROM t UNION SELECT a FROM secret"},
		{"mysql union cte", MySQL, "WITH x AS (SELECT 1) SELECT * FROM x UNION SELECT a FROM secret"},
		{"mysql function argument", MySQL, "SELECT IFNULL((SELECT a FROM secret), 1)"},
		{"mysql lateral", MySQL, "SELECT * FROM t, LATERAL (SELECT * FROM secret WHERE secret.a = t.a) s"},
		{"mysql derived table", MySQL, "SELECT * FROM (SELECT * FROM (SELECT * FROM secret) a) b"},
		{"mysql join", MySQL, "SELECT * FROM t LEFT JOIN secret ON 1"},
		{"mysql case branch", MySQL, "SELECT CASE WHEN 1 THEN (SELECT 1 FROM secret) END"},
		{"mysql table statement", MySQL, "TABLE secret"},
		{"mysql values row", MySQL, "VALUES ROW((SELECT a FROM secret))"},
		{"mysql window partition", MySQL, "SELECT count(*) OVER (PARTITION BY (SELECT 1 FROM secret)) FROM t"},
		{"mysql cte shadowed elsewhere", MySQL, "SELECT (SELECT count(*) FROM secret), (WITH secret AS (SELECT 1) SELECT * FROM secret)"},
		{"mysql cte sibling before definition", MySQL, "WITH a AS (SELECT * FROM secret), secret AS (SELECT 1) SELECT * FROM a"},
		{"mysql explain inner", MySQL, "EXPLAIN SELECT * FROM secret"},
		{"mysql in list subquery", MySQL, "SELECT count(*) FROM t WHERE a IN (1, (SELECT a FROM secret))"},
		{"mysql limit in subquery", MySQL, "SELECT count(*) FROM t WHERE a = (SELECT a FROM secret LIMIT 1)"},
		{"mysql group by subquery", MySQL, "SELECT count(*) FROM t GROUP BY (SELECT 1 FROM secret)"},
	}
	for _, tt := range hiding {
		t.Run(tt.name, func(t *testing.T) {
			st := parseOne(t, tt.d, tt.sql)
			if st.Kind == ir.StmtExplain {
				st = *st.Explain
			}
			if st.Kind != ir.StmtSelect {
				t.Fatalf("kind %v, want select (refused: %v)", st.Kind, st.Refused)
			}
			if !slices.Contains(st.Relations, ir.TableRef{Name: "secret"}) {
				t.Errorf("Relations = %v, missing secret", st.Relations)
			}
			if st.Query != nil {
				t.Errorf("a query hiding a table in a subquery got a Query: %#v", st.Query)
			}
		})
	}
}

// TestRelationsExact checks the full relation and function lists,
// including that CTE references are not listed.
func TestRelationsExact(t *testing.T) {
	tests := []struct {
		name  string
		d     Dialect
		sql   string
		rels  []ir.TableRef
		funcs []string
	}{
		{"cte references are not tables", Postgres, "WITH x AS (SELECT a FROM t), y AS (SELECT * FROM x) SELECT * FROM y JOIN x USING (a)",
			[]ir.TableRef{{Name: "t"}}, nil},
		{"recursive cte", Postgres, "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT count(*) FROM r",
			nil, []string{"count"}},
		{"qualified name is never a cte", Postgres, "WITH t AS (SELECT 1) SELECT * FROM public.t, t",
			[]ir.TableRef{{Schema: "public", Name: "t"}}, nil},
		{"duplicates listed once, schema kept", Postgres, "SELECT count(*) FROM people a JOIN people b ON a.id = b.id JOIN public.people c ON c.id = a.id",
			[]ir.TableRef{{Name: "people"}, {Schema: "public", Name: "people"}}, []string{"count"}},
		{"functions everywhere", Postgres, "SELECT pg_catalog.format_type(a, b), version(), current_database() FROM t WHERE pg_sleep(1) IS NULL AND coalesce(a, 1) = greatest(1, 2) AND x = current_user",
			[]ir.TableRef{{Name: "t"}}, []string{"pg_catalog.format_type", "version", "current_database", "pg_sleep", "coalesce", "greatest", "current_user"}},
		{"sql-syntax functions lose the implicit schema", Postgres, "SELECT trim(a), extract(year from b) FROM t",
			[]ir.TableRef{{Name: "t"}}, []string{"btrim", "extract"}},
		{"quoted function keeps case", Postgres, `SELECT "Version"()`, nil, []string{"Version"}},
		{"function in from", Postgres, "SELECT * FROM generate_series(1, 2)", nil, []string{"generate_series"}},
		{"mysql functions lower-cased", MySQL, "SELECT SLEEP(1), Version(), DATABASE(), COUNT(*) FROM t",
			[]ir.TableRef{{Name: "t"}}, []string{"sleep", "version", "database", "count"}},
		{"mysql cte references are not tables", MySQL, "WITH x AS (SELECT a FROM t), y AS (SELECT * FROM x) SELECT * FROM y JOIN x USING (a)",
			[]ir.TableRef{{Name: "t"}}, nil},
		{"mysql schema-qualified", MySQL, "SELECT * FROM information_schema.tables JOIN test.people",
			[]ir.TableRef{{Schema: "information_schema", Name: "tables"}, {Schema: "test", Name: "people"}}, nil},
		{"mysql qualified name is never a cte", MySQL, "WITH t AS (SELECT 1) SELECT * FROM test.t, t",
			[]ir.TableRef{{Schema: "test", Name: "t"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := parseOne(t, tt.d, tt.sql)
			if st.Kind != ir.StmtSelect {
				t.Fatalf("kind %v, want select (refused: %v)", st.Kind, st.Refused)
			}
			if !reflect.DeepEqual(st.Relations, tt.rels) {
				t.Errorf("Relations = %#v, want %#v", st.Relations, tt.rels)
			}
			if !reflect.DeepEqual(st.Functions, tt.funcs) {
				t.Errorf("Functions = %#v, want %#v", st.Functions, tt.funcs)
			}
		})
	}
}

func TestNumParams(t *testing.T) {
	tests := []struct {
		name string
		d    Dialect
		sql  string
		want int
	}{
		{"none", Postgres, "SELECT count(*) FROM t", 0},
		{"highest index", Postgres, "SELECT count(*) FROM t WHERE a = $3 AND b = $1", 3},
		{"in select list", Postgres, "SELECT $1::text", 1},
		{"in subquery", Postgres, "SELECT count(*) FROM t WHERE a IN (SELECT b FROM u WHERE c = $2)", 2},
		{"mysql count", MySQL, "SELECT count(*) FROM t WHERE a = ? AND b IN (?, ?)", 3},
		{"mysql select list", MySQL, "SELECT ?, ? FROM t", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseOne(t, tt.d, tt.sql).NumParams; got != tt.want {
				t.Errorf("NumParams = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestCatalogQueries feeds the queries psql, pgjdbc and the mysql client
// send; they are StmtSelect reading only catalog relations.
func TestCatalogQueries(t *testing.T) {
	tests := []struct {
		name   string
		d      Dialect
		sql    string
		schema string // every relation must be in this schema
		nrels  int
	}{
		{"psql \\dt", Postgres, `SELECT n.nspname as "Schema",
  c.relname as "Name",
  CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'i' THEN 'index' WHEN 'S' THEN 'sequence' WHEN 't' THEN 'TOAST table' WHEN 'f' THEN 'foreign table' WHEN 'p' THEN 'partitioned table' WHEN 'I' THEN 'partitioned index' END as "Type",
  pg_catalog.pg_get_userbyid(c.relowner) as "Owner"
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam
WHERE c.relkind IN ('r','p','')
      AND n.nspname <> 'pg_catalog'
      AND n.nspname !~ '^pg_toast'
      AND n.nspname <> 'information_schema'
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 1,2;`, "pg_catalog", 3},
		{"psql \\d table lookup", Postgres, `SELECT c.oid,
  n.nspname,
  c.relname
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname OPERATOR(pg_catalog.~) '^(people)$' COLLATE pg_catalog.default
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 2, 3;`, "pg_catalog", 2},
		{"psql \\l", Postgres, `SELECT d.datname as "Name", pg_catalog.pg_get_userbyid(d.datdba) as "Owner", pg_catalog.pg_encoding_to_char(d.encoding) as "Encoding", pg_catalog.array_to_string(d.datacl, E'\n') AS "Access privileges" FROM pg_catalog.pg_database d ORDER BY 1;`, "pg_catalog", 1},
		{"pgjdbc type lookup", Postgres, `SELECT typinput='pg_catalog.array_in'::regproc as is_array, typtype, typname, pg_type.oid FROM pg_catalog.pg_type LEFT JOIN (select ns.oid as nspoid, ns.nspname, r.r from pg_namespace as ns join ( select s.r, (current_schemas(false))[s.r] as nspname from generate_series(1, array_upper(current_schemas(false), 1)) as s(r) ) as r using ( nspname ) ) as sp ON sp.nspoid = typnamespace WHERE pg_type.oid = $1 ORDER BY sp.r, pg_type.oid DESC`, "", 0},
		{"information_schema", Postgres, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'", "information_schema", 1},
		{"mysql client", MySQL, "select @@version_comment limit 1", "", 0},
		{"mysql information_schema", MySQL, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()", "information_schema", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := parseOne(t, tt.d, tt.sql)
			if st.Kind != ir.StmtSelect {
				t.Fatalf("kind %v, want select (refused: %v)", st.Kind, st.Refused)
			}
			if st.Query != nil {
				t.Errorf("catalog query got an aggregate Query")
			}
			if tt.nrels > 0 && len(st.Relations) != tt.nrels {
				t.Errorf("Relations = %v, want %d", st.Relations, tt.nrels)
			}
			for _, r := range st.Relations {
				if tt.schema != "" && r.Schema != tt.schema {
					t.Errorf("relation %v is not in %s", r, tt.schema)
				}
			}
		})
	}
	// pgjdbc's query names unqualified catalog tables: they are listed as
	// written, and the planner resolves them.
	st := parseOne(t, Postgres, tests[3].sql)
	want := []ir.TableRef{{Schema: "pg_catalog", Name: "pg_type"}, {Name: "pg_namespace"}}
	if !reflect.DeepEqual(st.Relations, want) || st.NumParams != 1 {
		t.Errorf("pgjdbc: Relations = %v NumParams = %d, want %v and 1", st.Relations, st.NumParams, want)
	}
}
