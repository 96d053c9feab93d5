package planner_test

import (
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// namesPolicy is a policy on the given backend with one private table
// without a schema (people), one public table without a schema (zips) and
// one private table declared in schema sales (orders).
func namesPolicy(t *testing.T, driver, dsn string) *policies.Policy {
	t.Helper()
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	src := `version: 1
backend:
  driver: ` + driver + `
  dsn: "` + dsn + `"
users:
  - name: alice
    password_env: DDP_TEST_PLANNER_PASSWORD
    budgets:
      census: {epsilon: 10}
datasets:
  census:
    tables:
      people:
        unit: person_id
        columns:
          sex: {type: text, domain: {values: [Female, Male]}}
          zip: {type: text}
      zips:
        public: true
        key: zip
        columns:
          zip: {type: text}
          state: {type: text}
      orders:
        schema: sales
        unit: person_id
        columns:
          kind: {type: text, domain: {values: [a, b]}}
`
	pol, err := policies.LoadBytes("names.yaml", []byte(src))
	if err != nil {
		t.Fatalf("loading policy: %v", err)
	}
	return pol
}

func planNames(t *testing.T, pol *policies.Policy, d parser.Dialect, database, sql string) (*planner.Plan, error) {
	t.Helper()
	stmts, err := parser.Parse(d, sql)
	if err != nil {
		t.Fatalf("%q: %v", sql, err)
	}
	if len(stmts) != 1 {
		t.Fatalf("%q: %d statements", sql, len(stmts))
	}
	req := planner.Request{User: pol.User("alice"), Epsilon: 1, Dialect: d.String(), Database: database, Statement: &stmts[0]}
	return planner.New(pol).Plan(req)
}

// TestCatalogNamesResolve: every schema or database name the proxy's
// catalogs show a table under resolves to that table, and the backend is
// sent the declared name; other names stay refused with 42P01.
func TestCatalogNamesResolve(t *testing.T) {
	const metabase = `SELECT "public"."people"."sex" AS "sex", count(*) AS "count" FROM "public"."people" ` +
		`GROUP BY "public"."people"."sex" ORDER BY "public"."people"."sex" ASC`
	tests := []struct {
		name, driver, dsn string
		d                 parser.Dialect
		database, sql     string
		table             string // the declared table the backend must read; "" = refused with 42P01
	}{
		// PostgreSQL clients see tables without a schema in public.
		{"pg public on sqlite", "sqlite", "demo.db", parser.Postgres, "", "SELECT count(*) FROM public.people", "people"},
		{"pg quoted public on sqlite", "sqlite", "demo.db", parser.Postgres, "", `SELECT count(*) FROM "public"."people"`, "people"},
		{"pg metabase on sqlite", "sqlite", "demo.db", parser.Postgres, "", metabase, "people"},
		{"pg metabase on mysql", "mysql", "u@tcp(h)/test", parser.Postgres, "", metabase, "people"},
		{"pg backend's own schema still resolves", "sqlite", "demo.db", parser.Postgres, "", "SELECT count(*) FROM main.people", "people"},
		{"pg unqualified", "sqlite", "demo.db", parser.Postgres, "", "SELECT count(*) FROM people", "people"},
		{"pg wrong schema", "sqlite", "demo.db", parser.Postgres, "", "SELECT count(*) FROM other.people", ""},
		{"pg mysql database name is not a pg schema", "sqlite", "demo.db", parser.Postgres, "demo", "SELECT count(*) FROM demo.people", ""},
		{"pg declared schema", "postgres", "postgres://h/db", parser.Postgres, "", "SELECT count(*) FROM sales.orders", "orders"},
		{"pg declared schema on sqlite", "sqlite", "demo.db", parser.Postgres, "", "SELECT count(*) FROM sales.orders", "orders"},
		{"pg declared schema is not public", "postgres", "postgres://h/db", parser.Postgres, "", "SELECT count(*) FROM public.orders", ""},
		{"pg declared schema unqualified as today", "postgres", "postgres://h/db", parser.Postgres, "", "SELECT count(*) FROM orders", ""},
		// PostgreSQL keeps quoted names as written: "PEOPLE" is not people.
		{"pg quoted upper case", "sqlite", "demo.db", parser.Postgres, "", `SELECT count(*) FROM "PUBLIC"."PEOPLE"`, ""},
		{"pg quoted upper-case table", "sqlite", "demo.db", parser.Postgres, "", `SELECT count(*) FROM public."People"`, ""},
		{"pg unquoted upper case folds", "sqlite", "demo.db", parser.Postgres, "", `SELECT count(*) FROM PUBLIC.PEOPLE`, "people"},
		// MySQL clients see tables without a schema in the session's database.
		{"mysql session database on sqlite", "sqlite", "demo.db", parser.MySQL, "demo", "SELECT COUNT(*) FROM `demo`.`people`", "people"},
		{"mysql database case-insensitive", "sqlite", "demo.db", parser.MySQL, "demo", "SELECT COUNT(*) FROM DEMO.People", "people"},
		{"mysql three-part on sqlite", "sqlite", "demo.db", parser.MySQL, "demo",
			"SELECT `demo`.`people`.`sex`, COUNT(*) FROM `demo`.`people` GROUP BY `demo`.`people`.`sex`", "people"},
		{"mysql session database on postgres", "postgres", "postgres://h/db", parser.MySQL, "analytics", "SELECT COUNT(*) FROM analytics.people", "people"},
		{"mysql session database on mysql", "mysql", "u@tcp(h)/test", parser.MySQL, "demo", "SELECT COUNT(*) FROM demo.people", "people"},
		{"mysql dsn database on mysql", "mysql", "u@tcp(h)/test", parser.MySQL, "demo", "SELECT COUNT(*) FROM test.people", "people"},
		{"mysql no session database", "sqlite", "demo.db", parser.MySQL, "", "SELECT COUNT(*) FROM main.people", "people"},
		{"mysql wrong database", "sqlite", "demo.db", parser.MySQL, "demo", "SELECT COUNT(*) FROM other.people", ""},
		{"mysql pg schema is not a database", "sqlite", "demo.db", parser.MySQL, "demo", "SELECT COUNT(*) FROM public.people", ""},
		{"mysql declared schema", "postgres", "postgres://h/db", parser.MySQL, "demo", "SELECT COUNT(*) FROM sales.orders", "orders"},
		{"mysql declared schema is not the session database", "postgres", "postgres://h/db", parser.MySQL, "demo", "SELECT COUNT(*) FROM demo.orders", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol := namesPolicy(t, tt.driver, tt.dsn)
			pl, err := planNames(t, pol, tt.d, tt.database, tt.sql)
			if tt.table == "" {
				if err == nil {
					t.Fatalf("planned %+v, want refusal", pl)
				}
				if !sqlerr.HasCode(err, sqlerr.UndefinedTable) {
					t.Fatalf("code %v (%v), want 42P01", sqlerr.As(err).Code.Name, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if pl.Backend == nil {
				t.Fatalf("class %v, want a private plan", pl.Class)
			}
			_, want := pol.LookupTable("", tt.table)
			if want == nil {
				_, want = pol.LookupTable("sales", tt.table)
			}
			if got := pl.Backend.From; got.Name != want.Name || got.Schema != want.Schema {
				t.Errorf("backend reads %s.%s, want the declared %s.%s", got.Schema, got.Name, want.Schema, want.Name)
			}
		})
	}
}

// TestThreePartColumns: schema.table.column resolves when schema.table
// names a table of FROM (written without an alias), and is the usual
// missing FROM-clause entry otherwise.
func TestThreePartColumns(t *testing.T) {
	pol := namesPolicy(t, "sqlite", "demo.db")
	ok := []struct {
		name     string
		d        parser.Dialect
		database string
		sql      string
	}{
		{"pg from qualified", parser.Postgres, "", `SELECT "public"."people"."sex" AS "sex", count(*) AS "count" FROM "public"."people" ` +
			`WHERE "public"."people"."zip" = '1' GROUP BY "public"."people"."sex" ORDER BY "public"."people"."sex" ASC`},
		{"pg from unqualified", parser.Postgres, "", "SELECT public.people.sex, count(*) FROM people GROUP BY public.people.sex"},
		{"pg mixed qualification", parser.Postgres, "", "SELECT people.sex, count(*) FROM public.people GROUP BY public.people.sex ORDER BY sex"},
		{"pg public join", parser.Postgres, "", "SELECT public.people.sex, count(*) FROM public.people JOIN public.zips ON public.people.zip = public.zips.zip WHERE public.zips.state = 'x' GROUP BY public.people.sex"},
		{"pg public left join", parser.Postgres, "", `SELECT "public"."people"."sex" AS "sex", count(*) AS "count" FROM "public"."people" ` +
			`LEFT JOIN "public"."zips" "Zips" ON "public"."people"."zip" = "Zips"."zip" GROUP BY "public"."people"."sex"`},
		{"mysql public left join", parser.MySQL, "demo", "SELECT `demo`.`people`.`sex`, COUNT(*) FROM `demo`.`people` LEFT OUTER JOIN `demo`.`zips` `Zips` ON `demo`.`people`.`zip` = `Zips`.`zip` GROUP BY `demo`.`people`.`sex`"},
		{"mysql", parser.MySQL, "demo", "SELECT `demo`.`people`.`sex`, COUNT(*) FROM `demo`.`people` GROUP BY `demo`.`people`.`sex`"},
		{"mysql case-insensitive", parser.MySQL, "demo", "SELECT DEMO.PEOPLE.sex, COUNT(*) FROM demo.people GROUP BY demo.people.sex"},
	}
	for _, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := planNames(t, pol, tt.d, tt.database, tt.sql)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if len(pl.Groups) != 1 || len(pl.Backend.GroupBy) != 1 {
				t.Fatalf("groups %+v, want one", pl.Groups)
			}
			// A text key is grouped by its exact spelling (exactTextKey).
			if g := pl.Backend.GroupBy[0]; g != (ir.Cast{X: ir.ColumnRef{Qualifier: "t0", Name: "sex"}, To: ir.CastText}) {
				t.Errorf("backend groups by %+v, want CAST(t0.sex AS text)", g)
			}
			if d := pl.Groups[0].Domain; len(d) != 2 || d[0].Str != "Female" || d[1].Str != "Male" {
				t.Errorf("group keys %v, want the declared Female, Male", d)
			}
		})
	}
	refused := []struct {
		name, sql string
		d         parser.Dialect
		database  string
	}{
		{"pg table not in from", "SELECT count(*) FROM people WHERE public.zips.state = 'x'", parser.Postgres, ""},
		{"pg wrong schema", "SELECT other.people.sex, count(*) FROM people GROUP BY other.people.sex", parser.Postgres, ""},
		{"pg alias hides the table name", "SELECT public.people.sex, count(*) FROM people p GROUP BY public.people.sex", parser.Postgres, ""},
		{"pg declared schema elsewhere", "SELECT count(*) FROM people WHERE sales.orders.kind = 'a'", parser.Postgres, ""},
		{"mysql wrong database", "SELECT other.people.sex, COUNT(*) FROM people GROUP BY other.people.sex", parser.MySQL, "demo"},
		{"mysql pg schema", "SELECT COUNT(*) FROM people WHERE public.people.sex = 'Male'", parser.MySQL, "demo"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := planNames(t, pol, tt.d, tt.database, tt.sql)
			if err == nil {
				t.Fatalf("planned %+v, want refusal", pl)
			}
			if !sqlerr.HasCode(err, sqlerr.UndefinedTable) || !strings.Contains(err.Error(), "missing FROM-clause entry") {
				t.Fatalf("got %v (%s), want 42P01 missing FROM-clause entry", err, sqlerr.As(err).Code.Name)
			}
		})
	}
}

// TestPassthroughKeepsBackendNames: a public-table statement is passed
// through as text, so a client name the backend reads as another relation
// (a MySQL session's database that is not the backend's) is refused
// rather than sent.
func TestPassthroughKeepsBackendNames(t *testing.T) {
	pol := namesPolicy(t, "mysql", "u@tcp(h)/test")
	if _, err := planNames(t, pol, parser.MySQL, "demo", "SELECT * FROM demo.zips"); !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) {
		t.Fatalf("demo.zips passed through: %v", err)
	}
	for _, sql := range []string{"SELECT state, COUNT(*) FROM zips GROUP BY state", "SELECT state, COUNT(*) FROM test.zips GROUP BY state"} {
		pl, err := planNames(t, pol, parser.MySQL, "demo", sql)
		if err != nil || pl.Class != planner.ClassPassthrough || pl.SQL != sql {
			t.Errorf("%s: %+v, %v; want passed through as written", sql, pl, err)
		}
	}
	// A row read of zips (a column list) is rendered with the declared
	// names, whatever the client's database.
	for _, sql := range []string{"SELECT * FROM zips", "SELECT * FROM test.zips"} {
		pl, err := planNames(t, pol, parser.MySQL, "demo", sql)
		if err != nil || !pl.Rendered || pl.SQL != "SELECT `zips`.`zip` AS `zip`, `zips`.`state` AS `state` FROM `zips` AS `zips`" {
			t.Errorf("%s: %+v, %v; want the declared columns, rendered", sql, pl, err)
		}
	}
}
