package session

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/postgres"
	"github.com/ddp-proxy/ddp-proxy/internal/pgtest"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// leakRows is the private table's row count: odd enough that no other
// catalog row happens to hold it.
const leakRows = 2003

// leakFixture is a private table of leakRows rows, ANALYZEd so that
// pg_class.reltuples holds its exact row count, in a schema of its own,
// behind a proxy on the real PostgreSQL.
type leakFixture struct {
	*fixture
	raw    *sql.DB
	schema string
	// pgClassRow is pg_class's column list for one table c with
	// reltuples replaced by the candidate {K}::real: the other half of a
	// whole-row comparison.
	pgClassRow string
}

func newLeakFixture(t *testing.T) *leakFixture {
	t.Helper()
	dsn := pgtest.DSN(t, "the PostgreSQL catalog leak test")
	raw, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	schema := pgtest.Schema(t, dsn, "ddp_catleak_")
	// One connection, so that its activity statistics can be flushed
	// (pg_stat_force_next_flush, PostgreSQL 15 and later) and pg_stat_*
	// shows the row count the attacks on them look for.
	ctx := context.Background()
	conn, err := raw.Conn(ctx)
	if err != nil {
		t.Fatalf("PostgreSQL at DDP_TEST_POSTGRES_DSN: %v", err)
	}
	defer conn.Close()
	for _, q := range []string{
		"CREATE SCHEMA " + schema,
		"CREATE TABLE " + schema + ".people (id serial PRIMARY KEY, age integer NOT NULL, sex text)",
		fmt.Sprintf("INSERT INTO %s.people (age, sex) SELECT 20 + g %% 50, CASE WHEN g %% 2 = 0 THEN 'F' ELSE 'M' END FROM generate_series(1, %d) g", schema, leakRows),
		// Flush the insert's counters before ANALYZE sets the live-row
		// count (flushed after it, they would be added to it).
		"SELECT pg_stat_force_next_flush()",
		"SELECT 1",
		"ANALYZE " + schema + ".people",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("PostgreSQL at DDP_TEST_POSTGRES_DSN: %s: %v", q, err)
		}
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var n int64
		if err := raw.QueryRow("SELECT coalesce(pg_stat_get_live_tuples(($1 || '.people')::regclass), 0)", schema).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == leakRows {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pg_stat_get_live_tuples shows %d rows, not %d, after 20 s", n, leakRows)
		}
	}
	var row string
	if err := raw.QueryRow(`SELECT string_agg(CASE attname WHEN 'reltuples' THEN '{K}::real' ELSE 'c.' || quote_ident(attname) END, ', ' ORDER BY attnum)
FROM pg_attribute WHERE attrelid = 'pg_catalog.pg_class'::regclass AND attnum > 0 AND NOT attisdropped`).Scan(&row); err != nil {
		t.Fatal(err)
	}
	be, err := postgres.Open(context.Background(), dsn, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &leakFixture{fixture: setup(t, "postgres", dsn, schema, be), raw: raw, schema: schema, pgClassRow: row}
}

// expand fills in the schema ({S}), the candidate row count ({K}) and the
// whole-row column list ({ROW}).
func (f *leakFixture) expand(q string, k int) string {
	q = strings.ReplaceAll(q, "{ROW}", f.pgClassRow)
	q = strings.ReplaceAll(q, "{S}", f.schema)
	return strings.ReplaceAll(q, "{K}", fmt.Sprint(k))
}

// direct runs q on PostgreSQL itself and returns its rows as text.
func (f *leakFixture) direct(t *testing.T, q string) string {
	t.Helper()
	rows, err := f.raw.Query(q)
	if err != nil {
		t.Fatalf("directly: %s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var cells []string
		for _, v := range vals {
			cells = append(cells, fmt.Sprintf("%v", v))
		}
		out = append(out, strings.Join(cells, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}

// proxied runs q through the proxy and returns its rows as text, or the
// refusal.
func (f *leakFixture) proxied(q string) (string, error) {
	rs, err := query(f.s, context.Background(), q)
	if err != nil {
		return "", err
	}
	var out []string
	for _, row := range rs[0].Rows {
		var cells []string
		for _, v := range row {
			if v.IsNull() {
				cells = append(cells, "NULL")
			} else {
				cells = append(cells, v.Text())
			}
		}
		out = append(out, strings.Join(cells, "|"))
	}
	return strings.Join(out, "\n"), nil
}

// TestCatalogRowCountLeaks: catalog queries that compare a private table's
// real reltuples (or a sequence's last_value) with a candidate without
// naming the column — USING, NATURAL, *, TABLE, set operations, IN,
// DISTINCT, whole-row values — tell the true count from a wrong one when
// run on PostgreSQL directly. Through the proxy each is refused or gives
// the same answer for both candidates: it learns nothing. None is
// charged.
func TestCatalogRowCountLeaks(t *testing.T) {
	f := newLeakFixture(t)
	const people = "relname = 'people' AND relnamespace = '{S}'::regnamespace"
	// seqRow is pg_sequences' row for the table's id sequence with
	// last_value replaced by the candidate.
	const seqRow = "s.schemaname, s.sequencename, s.sequenceowner, s.data_type, s.start_value, s.min_value, s.max_value, s.increment_by, s.cycle, s.cache_size, {K}::bigint"
	for _, tt := range []struct {
		name, sql string
		// refused: the proxy must refuse it (42501); otherwise it must
		// answer, the same for both candidates.
		refused bool
	}{
		{name: "natural join", sql: "SELECT relname FROM pg_class NATURAL JOIN (SELECT {K}::real AS reltuples) t WHERE " + people},
		{name: "using join", sql: "SELECT relname FROM pg_catalog.pg_class JOIN (SELECT {K}::real AS reltuples) t USING (reltuples) WHERE " + people},
		{name: "star in a derived table", sql: "SELECT x.relname FROM (SELECT * FROM pg_class) x NATURAL JOIN (SELECT {K}::real AS reltuples) t WHERE x." + people},
		{name: "star in a CTE", sql: "WITH x AS (SELECT * FROM pg_class) SELECT relname FROM x JOIN (SELECT {K}::real AS reltuples) t USING (reltuples) WHERE " + people},
		{name: "TABLE", sql: "SELECT relname FROM (TABLE pg_class) x NATURAL JOIN (SELECT {K}::real AS reltuples) t WHERE " + people},
		{name: "schema-qualified star", sql: "SELECT pg_catalog.pg_class.relname FROM pg_catalog.pg_class NATURAL JOIN (SELECT {K}::real AS reltuples) t WHERE pg_catalog.pg_class." + people},
		{name: "intersect", sql: "SELECT count(*) FROM (SELECT * FROM pg_class WHERE " + people + " INTERSECT SELECT {ROW} FROM pg_class c WHERE c." + people + ") s"},
		{name: "except", sql: "SELECT count(*) FROM (SELECT {ROW} FROM pg_class c WHERE c." + people + " EXCEPT SELECT * FROM pg_class) s"},
		{name: "union", sql: "SELECT count(*) FROM (SELECT * FROM pg_class WHERE " + people + " UNION SELECT {ROW} FROM pg_class c WHERE c." + people + ") s"},
		{name: "distinct", sql: "SELECT count(*) FROM (SELECT DISTINCT * FROM (SELECT * FROM pg_class WHERE " + people + " UNION ALL SELECT {ROW} FROM pg_class c WHERE c." + people + ") u) d"},
		// pg_class's pg_node_tree column has no = for row comparisons:
		// those attacks go through pg_sequences.
		// The same over pg_sequences, whose other columns are no
		// statistics: only the derived table stands between the star
		// and last_value.
		{name: "sequence intersect", sql: "SELECT count(*) FROM (SELECT * FROM pg_sequences WHERE schemaname = '{S}' INTERSECT SELECT " + seqRow + " FROM pg_sequences s) x"},
		{name: "sequence except", sql: "SELECT count(*) FROM (SELECT " + seqRow + " FROM pg_sequences s WHERE s.schemaname = '{S}' EXCEPT SELECT * FROM pg_sequences) x"},
		{name: "sequence distinct", sql: "SELECT count(*) FROM (SELECT DISTINCT * FROM (SELECT * FROM pg_sequences WHERE schemaname = '{S}' UNION ALL SELECT " + seqRow + " FROM pg_sequences s WHERE s.schemaname = '{S}') u) d"},
		{name: "in over a star", sql: "SELECT count(*) FROM pg_sequences s WHERE s.schemaname = '{S}' AND (" + seqRow + ") IN (SELECT * FROM pg_sequences)"},
		{name: "sequence last_value", sql: "SELECT sequencename FROM pg_sequences NATURAL JOIN (SELECT {K}::bigint AS last_value) t WHERE schemaname = '{S}'"},
		{name: "sequence star", sql: "SELECT count(*) FROM (SELECT * FROM pg_sequences WHERE schemaname = '{S}') s WHERE (s.*)::text LIKE '%,{K})'", refused: true},
		{name: "whole row as text", sql: "SELECT count(*) FROM pg_class c WHERE c." + people + " AND (c.*)::text LIKE '%,{K},%'", refused: true},
		{name: "row comparison", sql: "SELECT count(*) FROM pg_sequences s WHERE s.schemaname = '{S}' AND ROW(s.*) = ROW(" + seqRow + ")", refused: true},
		{name: "is distinct from", sql: "SELECT count(*) FROM pg_class c WHERE c." + people + " AND c IS NOT DISTINCT FROM ROW({ROW})", refused: true},
		{name: "row_to_json", sql: "SELECT count(*) FROM pg_class c WHERE c." + people + " AND row_to_json(c)->>'reltuples' = '{K}'", refused: true},
		{name: "to_json", sql: "SELECT count(*) FROM pg_class c WHERE c." + people + " AND (to_json(c)->>'reltuples')::real = {K}", refused: true},
		{name: "group by positions over a star", sql: "SELECT count(*) FROM (SELECT * FROM (SELECT * FROM pg_sequences WHERE schemaname = '{S}' UNION ALL SELECT " + seqRow +
			" FROM pg_sequences s WHERE s.schemaname = '{S}') u GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11) g", refused: true},
		// age takes 50 values: the candidate {K} - 1953 is the true
		// number of distinct ages only for the true count.
		{name: "pg_stats", sql: "SELECT count(*) FROM pg_stats WHERE schemaname = '{S}' AND tablename = 'people' AND attname = 'age' AND n_distinct = {K} - 1953", refused: true},
		{name: "pg_stat_user_tables", sql: "SELECT count(*) FROM pg_stat_user_tables WHERE schemaname = '{S}' AND n_live_tup = {K}", refused: true},
		{name: "pg_stat_get_live_tuples", sql: "SELECT pg_stat_get_live_tuples('{S}.people'::regclass) = {K}", refused: true},
		{name: "pg_statistic", sql: "SELECT count(*) FROM pg_statistic WHERE starelid = '{S}.people'::regclass AND staattnum = 2 AND stadistinct = {K} - 1953", refused: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			truth, wrong := f.expand(tt.sql, leakRows), f.expand(tt.sql, leakRows+1)
			// The attack works on PostgreSQL itself, so this test can fail.
			if a, b := f.direct(t, truth), f.direct(t, wrong); a == b {
				t.Fatalf("directly, the true and the wrong count give the same answer %q: the attack is not one", a)
			}
			a, errA := f.proxied(truth)
			b, errB := f.proxied(wrong)
			if tt.refused {
				for _, err := range []error{errA, errB} {
					if !sqlerr.HasCode(err, sqlerr.InsufficientPrivilege) {
						t.Fatalf("through the proxy: %v, want a 42501 refusal", err)
					}
				}
				return
			}
			if errA != nil || errB != nil {
				t.Fatalf("through the proxy: %v / %v", errA, errB)
			}
			if a != b {
				t.Fatalf("through the proxy the true count gives %q and a wrong one %q", a, b)
			}
		})
	}
	// A join over every candidate count at once: PostgreSQL names the
	// true one; through the proxy no candidate ever matches.
	q := f.expand("SELECT relname, g FROM pg_class JOIN (SELECT g, g::real AS reltuples FROM generate_series(0, 100000) g) t USING (reltuples) WHERE "+people, 0)
	if got := f.direct(t, q); got != fmt.Sprintf("{people true}|{%d true}", leakRows) {
		t.Fatalf("directly: %q", got)
	}
	if got, err := f.proxied(q); err != nil || got != "" {
		t.Fatalf("through the proxy: %q, %v; want no row", got, err)
	}
	// Through the extended protocol too (Prepare describes by running).
	p, err := f.s.Prepare(context.Background(), f.expand("SELECT relname FROM pg_class NATURAL JOIN (SELECT $1::real AS reltuples) t WHERE "+people, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{fmt.Sprint(leakRows), fmt.Sprint(leakRows + 1)} {
		if r, err := execute(f.s, context.Background(), p, []ir.Value{ir.String(k)}); err != nil || len(r.Rows) != 0 {
			t.Fatalf("prepared natural join with %s: %+v, %v", k, r.Rows, err)
		}
	}
	// Clients' own forms still answer: SQLAlchemy 2's schema-qualified
	// column references, and a join over pg_class's ordinary columns.
	for q, want := range map[string]string{
		"SELECT pg_catalog.pg_class.relname, pg_catalog.pg_class.reltuples FROM pg_catalog.pg_class JOIN pg_catalog.pg_namespace " +
			"ON pg_catalog.pg_namespace.oid = pg_catalog.pg_class.relnamespace WHERE pg_catalog.pg_class.relname = 'people' AND pg_catalog.pg_namespace.nspname = '{S}'": "people|NULL",
		"SELECT c.relname, count(*) FROM pg_class c JOIN pg_index x ON x.indrelid = c.oid JOIN pg_class i ON i.oid = x.indexrelid " +
			"WHERE c.relname = 'people' AND c.relnamespace = '{S}'::regnamespace AND i.relkind = 'i' GROUP BY c.relname": "people|1",
	} {
		if got, err := f.proxied(f.expand(q, 0)); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", q, got, err, want)
		}
	}
	// Sizes grow with row counts: blank.
	if got, err := f.proxied(f.expand("SELECT pg_relation_size('{S}.people'::regclass), pg_total_relation_size('{S}.people')", 0)); err != nil || got != "NULL|NULL" {
		t.Fatalf("sizes through the proxy: %q, %v", got, err)
	}
	if spent, _ := f.led.Spent("alice", "census"); spent.Epsilon != 0 {
		t.Fatalf("catalog queries spent %+v", spent)
	}
}

// TestCatalogOtherSessionsActivity: transaction ids, snapshots, locks,
// backends, advisory locks and the notification queue describe what other
// sessions do; through the proxy every such query is refused (42501),
// and the transaction-counter columns of pg_class and pg_database are
// blank.
func TestCatalogOtherSessionsActivity(t *testing.T) {
	f := newLeakFixture(t)
	for _, q := range []string{
		"SELECT txid_current()",
		"SELECT pg_catalog.txid_current_snapshot()",
		"SELECT pg_current_xact_id()",
		"SELECT pg_current_snapshot()",
		"SELECT xmin FROM pg_class WHERE relname = 'people'",
		"SELECT c.ctid FROM pg_catalog.pg_namespace c",
		"SELECT * FROM pg_locks",
		"SELECT * FROM pg_prepared_xacts",
		"SELECT * FROM pg_stat_activity",
		"SELECT * FROM pg_stat_replication",
		"SELECT * FROM pg_stat_ssl",
		"SELECT * FROM pg_stat_wal_receiver",
		"SELECT * FROM pg_replication_slots",
		"SELECT pg_backend_pid()",
		"SELECT pg_advisory_lock(42)",
		"SELECT pg_try_advisory_lock(42)",
		"SELECT pg_try_advisory_xact_lock_shared(42)",
		"SELECT pg_notification_queue_usage()",
		"SELECT pg_current_wal_lsn()",
	} {
		if _, err := f.proxied(q); !sqlerr.HasCode(err, sqlerr.InsufficientPrivilege) {
			t.Errorf("%s: %v, want a 42501 refusal", q, err)
		}
	}
	// Directly, the transaction counter shows in pg_database.
	if got := f.direct(t, "SELECT datfrozenxid IS NOT NULL FROM pg_database WHERE datname = current_database()"); got != "{true true}" {
		t.Fatalf("directly: %q", got)
	}
	for _, q := range []string{
		"SELECT * FROM pg_database WHERE datname = current_database()",
		"SELECT d.* FROM pg_catalog.pg_database d NATURAL JOIN (SELECT datname FROM pg_database) x WHERE datname = current_database()",
		f.expand("SELECT * FROM pg_class WHERE relname = 'people' AND relnamespace = '{S}'::regnamespace", 0),
	} {
		rs, err := query(f.s, context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if len(rs[0].Rows) != 1 {
			t.Fatalf("%s: %d rows", q, len(rs[0].Rows))
		}
		blank := 0
		for i, c := range rs[0].Columns {
			switch c.Name {
			case "datfrozenxid", "datminmxid", "relfrozenxid", "relminmxid", "reltuples", "relpages", "relallvisible":
				blank++
				if v := rs[0].Rows[0][i]; !v.IsNull() {
					t.Errorf("%s: %s = %v", q, c.Name, v)
				}
			}
		}
		if blank < 2 {
			t.Errorf("%s: columns %+v lack the blanked ones", q, rs[0].Columns)
		}
	}
	// The server's start time is not about data or sessions: kept.
	if _, err := f.proxied("SELECT pg_postmaster_start_time()"); err != nil {
		t.Errorf("pg_postmaster_start_time: %v", err)
	}
}
