package emulated

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// TestStartupProbes runs the probes drivers and BI tools send at startup
// against the emulated catalog, each with the type the client reads.
func TestStartupProbes(t *testing.T) {
	c := newFixture(t)
	for _, tc := range []struct {
		who, sql string
		typ      ir.ColType // ir.TypeUnknown: not checked
		want     string
	}{
		{"psqlODBC, Tableau", "select pg_client_encoding()", ir.TypeName, "UTF8"},
		{"pgcli", "SELECT * FROM unnest(current_schemas(true))", ir.TypeUnknown, "pg_catalog,public"},
		{"unnest with alias", "SELECT s FROM unnest(current_schemas(false)) AS s", ir.TypeUnknown, "public"},
		{"unnest alias.* with ordinality", "SELECT u.* FROM unnest(ARRAY['a','b']) WITH ORDINALITY AS u(x, n) ORDER BY n DESC", ir.TypeUnknown, "b,a"},
	} {
		r := query(t, c, tc.sql)
		var got []string
		for _, row := range r.Rows {
			got = append(got, row[0].Text())
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("%s: %s = %q, want %q", tc.who, tc.sql, got, tc.want)
		}
		if tc.typ != ir.TypeUnknown && r.Columns[0].Type != tc.typ {
			t.Errorf("%s: %s: type %v, want %v", tc.who, tc.sql, r.Columns[0].Type, tc.typ)
		}
	}
	// The search-path query lists the function's one column, not
	// json_each's eight.
	r := query(t, c, "SELECT * FROM unnest(current_schemas(true))")
	if len(r.Columns) != 1 || r.Columns[0].Name != "unnest" {
		t.Errorf("unnest(current_schemas(true)) columns = %v, want [unnest]", r.Columns)
	}
	r = query(t, c, "SELECT * FROM unnest(ARRAY[1,2]) WITH ORDINALITY")
	if len(r.Columns) != 2 || r.Columns[1].Name != "ordinality" || r.Rows[1][1].Int != 2 {
		t.Errorf("WITH ORDINALITY: %v %v", r.Columns, r.Rows)
	}
	if _, err := c.Query(context.Background(), "SELECT * FROM pg_class, unnest(ARRAY[1])", nil, env); err == nil {
		t.Error("* over a relation joined to unnest was answered with json_each's columns")
	}
}

// TestClockFunctions checks now() and current_timestamp against the
// clock, typed as PostgreSQL types them.
func TestClockFunctions(t *testing.T) {
	c := newFixture(t)
	before := time.Now().Add(-time.Second)
	for _, q := range []string{"SELECT now()", "SELECT current_timestamp", "SELECT CURRENT_TIMESTAMP(3)", "SELECT transaction_timestamp()"} {
		r := query(t, c, q)
		if name := strings.ToLower(strings.Fields(strings.TrimPrefix(q, "SELECT "))[0]); !strings.HasPrefix(name, r.Columns[0].Name) {
			t.Errorf("%s: column %q", q, r.Columns[0].Name)
		}
		if r.Columns[0].Type != ir.TypeTimestampTZ {
			t.Errorf("%s: type %v, want timestamptz", q, r.Columns[0].Type)
		}
		v := r.Rows[0][0]
		if v.Kind != ir.KindTimestampTZ {
			t.Fatalf("%s = %v (%v), want a timestamptz", q, v, v.Kind)
		}
		got := time.UnixMicro(v.Int)
		if got.Before(before) || got.After(time.Now().Add(time.Second)) {
			t.Errorf("%s = %v, not now", q, got)
		}
	}
	r := query(t, c, "SELECT current_date")
	if r.Columns[0].Type != ir.TypeDate || r.Rows[0][0].Kind != ir.KindDate {
		t.Errorf("current_date: %v %v", r.Columns, r.Rows)
	}
}

// TestSetConfig checks set_config sets the session's setting through Env
// and returns the value, and that a refused SET refuses set_config.
func TestSetConfig(t *testing.T) {
	c := newFixture(t)
	settings := map[string]string{}
	e := Env{Database: "demo", User: "analyst",
		Setting: func(n string) (string, bool) { v, ok := settings[n]; return v, ok },
		Set: func(n, v string) error {
			if n == "server_version" {
				return os.ErrPermission
			}
			settings[n] = v
			return nil
		}}
	r, err := c.Query(context.Background(), "SELECT set_config('search_path', 'public', false)", nil, e)
	if err != nil {
		t.Fatal(err)
	}
	if r.Rows[0][0].Text() != "public" || settings["search_path"] != "public" {
		t.Errorf("set_config: %v, settings %v", r.Rows, settings)
	}
	if _, err := c.Query(context.Background(), "SELECT set_config('server_version', '1', false)", nil, e); err == nil {
		t.Error("set_config of a read-only setting succeeded")
	}
}

// TestPgcliQueries runs pgcli 3.5's completion queries (pgexecute.py,
// server version 15): functions (pg_depend), data types, keyword casing
// (regexp_split_to_table over pg_proc, pg_language).
func TestPgcliQueries(t *testing.T) {
	c := newFixture(t)
	for _, q := range pgcliQueries {
		query(t, c, q)
	}
}

var pgcliQueries = []string{`
SELECT n.nspname schema_name,
        p.proname func_name,
        p.proargnames,
        COALESCE(proallargtypes::regtype[], proargtypes::regtype[])::text[],
        p.proargmodes,
        prorettype::regtype::text return_type,
        p.prokind = 'a' is_aggregate,
        p.prokind = 'w' is_window,
        p.proretset is_set_returning,
        d.deptype = 'e' is_extension,
        pg_get_expr(proargdefaults, 0) AS arg_defaults
FROM pg_catalog.pg_proc p
        INNER JOIN pg_catalog.pg_namespace n
            ON n.oid = p.pronamespace
LEFT JOIN pg_depend d ON d.objid = p.oid and d.deptype = 'e'
WHERE p.prorettype::regtype != 'trigger'::regtype
ORDER BY 1, 2`, `
WITH Words AS (
      SELECT regexp_split_to_table(prosrc, '\W+') AS Word, COUNT(1)
      FROM pg_catalog.pg_proc P
      JOIN pg_catalog.pg_namespace N ON N.oid = P.pronamespace
      JOIN pg_catalog.pg_language L ON L.oid = P.prolang
      WHERE L.lanname IN ('sql', 'plpgsql')
      AND N.nspname NOT IN ('pg_catalog', 'information_schema')
      GROUP BY Word
  ),
  OrderWords AS (
      SELECT Word,
          ROW_NUMBER() OVER(PARTITION BY LOWER(Word) ORDER BY Count DESC)
      FROM Words
      WHERE Word ~* '.*[a-z].*'
  ),
  Names AS (
      --Column names
      SELECT attname AS Name
      FROM pg_catalog.pg_attribute
      UNION -- Table/view names
      SELECT relname
      FROM pg_catalog.pg_class
      UNION -- Function names
      SELECT proname
      FROM pg_catalog.pg_proc
      UNION -- Type names
      SELECT typname
      FROM pg_catalog.pg_type
      UNION -- Schema names
      SELECT nspname
      FROM pg_catalog.pg_namespace
      UNION -- Parameter names
      SELECT unnest(proargnames)
      FROM pg_proc
  )
  SELECT Word
  FROM OrderWords
  WHERE LOWER(Word) IN (SELECT Name FROM Names)
  AND Row_Number = 1`,
}
