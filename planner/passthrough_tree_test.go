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
	if strings.Count(low, "null::bigint") != 3 || !strings.Contains(low, "pg_size_pretty(null::") || !strings.Contains(pl.SQL, "$1") ||
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
	// Ordinary catalog queries are forwarded unchanged, but for pg_class
	// read through the derived table that blanks its statistics.
	for sql, want := range map[string]string{
		"SELECT * FROM pg_class c WHERE c.relname = 'zips'": "SELECT * FROM " + smallPgClass + " c WHERE c.relname = 'zips'",
		"SELECT c.*, n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace": "SELECT c.*, n.nspname FROM " + smallPgClass +
			" c JOIN pg_namespace n ON n.oid = c.relnamespace",
		"SELECT count(*) FROM pg_class":                                                 "SELECT count(*) FROM " + smallPgClass + " pg_class",
		"SELECT x FROM unnest(ARRAY[1, 2]) AS u(x), pg_class c WHERE c.oid = x":         "SELECT x FROM unnest(ARRAY[1, 2]) u(x), " + smallPgClass + " c WHERE c.oid = x",
		"SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace": "SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace",
	} {
		pl, err := plan(t, p, sql, planArgs{})
		if err != nil {
			t.Errorf("%s: %v", sql, err)
		} else if pl.SQL != want {
			t.Errorf("%s: forwarded as %q, want %q", sql, pl.SQL, want)
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
	sql := "SELECT t.typname FROM pg_catalog.pg_type t"
	if pl, err := plan(t, p, sql, planArgs{}); err != nil || pl.SQL != sql {
		t.Fatalf("%s: %v", sql, err)
	}
}

// smallPgClass is the derived table that replaces pg_class under
// planner.SmallCatalog, written out by hand: every column of the
// description in order, the statistics and transaction-counter columns as
// NULLs of their types.
const smallPgClass = "(SELECT oid, relname, relnamespace, NULL::int AS relpages, NULL::real AS reltuples, relkind, " +
	"NULL::pg_catalog.xid AS relfrozenxid FROM pg_catalog.pg_class)"

// TestPassthroughDerivedTables: every reference to a catalog relation
// with statistics columns becomes a derived table that blanks them, so
// joins, stars and set operations that reach them without naming them
// see only NULLs. The expected SQL is written by hand from SmallCatalog.
func TestPassthroughDerivedTables(t *testing.T) {
	p := planner.New(loadPolicy(t))
	// Only the served database's row: \l must not list the cluster.
	pgDatabase := "(SELECT oid, datname, NULL::pg_catalog.xid AS datfrozenxid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())"
	for _, tt := range []struct{ name, sql, want string }{
		{"using join over a row-count series",
			"SELECT relname, g FROM pg_class JOIN (SELECT g, g::real AS reltuples FROM generate_series(0,5000000) g) t USING (reltuples) WHERE relname = 'people'",
			"SELECT relname, g FROM " + smallPgClass + " pg_class JOIN (SELECT g, g::real AS reltuples FROM generate_series(0, 5000000) g) t USING (reltuples) WHERE relname = 'people'"},
		{"natural join",
			"SELECT relname FROM pg_class NATURAL JOIN (SELECT 2001::real AS reltuples) t",
			"SELECT relname FROM " + smallPgClass + " pg_class NATURAL JOIN (SELECT 2001::real AS reltuples) t"},
		{"star in a derived table",
			"SELECT x.relname FROM (SELECT * FROM pg_catalog.pg_class) x NATURAL JOIN (SELECT 1::real AS reltuples) t",
			"SELECT x.relname FROM (SELECT * FROM " + smallPgClass + " pg_class) x NATURAL JOIN (SELECT 1::real AS reltuples) t"},
		{"star in a CTE",
			"WITH x AS (SELECT * FROM pg_class) SELECT relname FROM x JOIN (SELECT 1::real AS reltuples) t USING (reltuples)",
			"WITH x AS (SELECT * FROM " + smallPgClass + " pg_class) SELECT relname FROM x JOIN (SELECT 1::real AS reltuples) t USING (reltuples)"},
		{"TABLE",
			"SELECT relname FROM (TABLE pg_class) x NATURAL JOIN (SELECT 1::real AS reltuples) t",
			"SELECT relname FROM (SELECT * FROM " + smallPgClass + " pg_class) x NATURAL JOIN (SELECT 1::real AS reltuples) t"},
		{"set operation over stars",
			"SELECT * FROM pg_class WHERE relname = 'people' INTERSECT SELECT * FROM pg_catalog.pg_class c",
			"SELECT * FROM " + smallPgClass + " pg_class WHERE relname = 'people' INTERSECT SELECT * FROM " + smallPgClass + " c"},
		{"IN over a star",
			"SELECT 1 WHERE (1::oid, 'x'::name) IN (SELECT oid, relname FROM (SELECT * FROM pg_class) s)",
			"SELECT 1 WHERE (1::oid, 'x'::name) IN (SELECT oid, relname FROM (SELECT * FROM " + smallPgClass + " pg_class) s)"},
		{"schema-qualified column references (SQLAlchemy)",
			"SELECT pg_catalog.pg_class.relname FROM pg_catalog.pg_class JOIN pg_catalog.pg_namespace ON pg_catalog.pg_namespace.oid = pg_catalog.pg_class.relnamespace",
			"SELECT pg_class.relname FROM " + smallPgClass + " pg_class JOIN pg_catalog.pg_namespace ON pg_catalog.pg_namespace.oid = pg_class.relnamespace"},
		{"transaction-counter columns",
			"SELECT * FROM pg_database d WHERE d.datname = current_database()",
			"SELECT * FROM " + pgDatabase + " d WHERE d.datname = current_database()"},
		{"inside a column filter's subquery too",
			"SELECT n.nspname FROM pg_namespace n WHERE EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid)",
			"SELECT n.nspname FROM pg_namespace n WHERE EXISTS (SELECT 1 FROM " + smallPgClass + " c WHERE c.relnamespace = n.oid)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := plan(t, p, tt.sql, planArgs{})
			if err != nil {
				t.Fatal(err)
			}
			if pl.SQL != tt.want {
				t.Fatalf("forwarded\n%s\nwant\n%s", pl.SQL, tt.want)
			}
		})
	}
}

// TestPassthroughCatalogRefusals: relations that are nothing but
// statistics, that describe other sessions or hold secrets, relations not
// on the allow-list, functions about other sessions' transactions, locks
// and backends, and system columns are refused at plan time (42501).
func TestPassthroughCatalogRefusals(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for _, tt := range []struct{ sql, msg string }{
		{"SELECT * FROM pg_statistic", "statistics"},
		{"SELECT * FROM pg_catalog.pg_stats WHERE tablename = 'people'", "statistics"},
		{"SELECT * FROM pg_stats_ext", "statistics"},
		{"SELECT n_live_tup FROM pg_stat_user_tables", "statistics"},
		{"SELECT * FROM pg_statio_user_tables", "statistics"},
		{"SELECT * FROM pg_stat_all_indexes", "statistics"},
		{"SELECT pg_stat_get_live_tuples('people'::regclass)", "statistics"},
		{"SELECT pg_catalog.pg_stat_get_numscans(1259)", "statistics"},
		{"SELECT * FROM pg_stat_activity", "other sessions"},
		{"SELECT * FROM pg_locks", "other sessions"},
		{"SELECT * FROM pg_catalog.pg_prepared_xacts", "other sessions"},
		{"SELECT * FROM pg_stat_replication", "other sessions"},
		{"SELECT * FROM pg_stat_ssl", "other sessions"},
		{"SELECT * FROM pg_stat_wal_receiver", "other sessions"},
		{"SELECT * FROM pg_replication_slots", "other sessions"},
		{"SELECT * FROM pg_cursors", "other sessions"},
		{"SELECT * FROM pg_prepared_statements", "other sessions"},
		{"SELECT txid_current()", "other sessions"},
		{"SELECT pg_catalog.txid_current_snapshot()", "other sessions"},
		{"SELECT pg_current_xact_id()", "other sessions"},
		{"SELECT pg_current_snapshot()", "other sessions"},
		{"SELECT pg_snapshot_xmax(pg_current_snapshot())", "other sessions"},
		{"SELECT pg_backend_pid()", "other sessions"},
		{"SELECT pg_advisory_lock(1)", "other sessions"},
		{"SELECT pg_try_advisory_lock(1)", "other sessions"},
		{"SELECT pg_notification_queue_usage()", "other sessions"},
		{"SELECT pg_current_wal_lsn()", "other sessions"},
		{"SELECT pg_blocking_pids(1)", "other sessions"},
		{"SELECT xmin FROM pg_class", "system column xmin"},
		{"SELECT c.ctid, c.relname FROM pg_catalog.pg_class c", "system column ctid"},
		{"SELECT n.nspname FROM pg_namespace n WHERE n.xmax <> 0", "system column xmax"},
		{"SELECT cmin FROM pg_namespace", "system column cmin"},
		{"SELECT xmin FROM zips", "system column xmin"},
		{"SELECT * FROM pg_authid", "secrets"},
		{"SELECT * FROM information_schema.user_mapping_options", "secrets"},
		{"SELECT * FROM pg_catalog.pg_some_future_view", "not on the privacy proxy's list"},
		{"SELECT * FROM information_schema._pg_foreign_servers", "secrets"},
		{"SELECT relname FROM pg_class TABLESAMPLE SYSTEM (50)", "TABLESAMPLE"},
		{"WITH pg_class AS (SELECT 1 AS x) SELECT x FROM pg_class, pg_catalog.pg_namespace", "WITH query named like"},
		{"SELECT row_to_json(c) FROM pg_class c", "row_to_json"},
		{"SELECT to_json(c)->>'reltuples' FROM pg_class c", "to_json"},
		{"SELECT relname FROM pg_class c WHERE (c.*)::text LIKE '%2001%'", "row value"},
		{"SELECT relname FROM pg_class c WHERE ROW(c.*) = ROW(1)", "row value"},
		{"SELECT relname FROM pg_class c WHERE c IS DISTINCT FROM NULL", "whole-row"},
	} {
		_, err := plan(t, p, tt.sql, planArgs{})
		if !sqlerr.HasCode(err, sqlerr.InsufficientPrivilege) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: %v, want 42501 mentioning %q", tt.sql, err, tt.msg)
		}
	}
	// The server's start time says nothing about data or sessions.
	if _, err := plan(t, p, "SELECT pg_postmaster_start_time()", planArgs{}); err != nil {
		t.Errorf("pg_postmaster_start_time: %v", err)
	}
	// Without the backend's description, a relation with statistics
	// columns cannot be blanked, so it is refused; the others still pass.
	if _, err := plan(t, p, "SELECT relname FROM pg_class", planArgs{noCatalog: true}); !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) {
		t.Errorf("pg_class without a description: %v", err)
	}
	if pl, err := plan(t, p, "SELECT nspname FROM pg_namespace", planArgs{noCatalog: true}); err != nil || pl.SQL != "SELECT nspname FROM pg_namespace" {
		t.Errorf("pg_namespace without a description: %v", err)
	}
}
