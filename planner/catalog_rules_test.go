package planner_test

import (
	"testing"

	"github.com/ddp-proxy/ddp-proxy/catalog"
	"github.com/ddp-proxy/ddp-proxy/internal/catalogtest"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestCatalogRules plans every catalog safety rule of the shared table
// (catalogtest.Cases) in both dialects: the PostgreSQL form from the
// PostgreSQL front end to a PostgreSQL backend, the MySQL form from the
// MySQL front end to a MySQL backend. A refusal must carry its code
// (42501 / 1142 for a rule, 0A000 / 1235 for what cannot be forwarded
// faithfully); a forwarded statement must plan as a pass-through. What
// the forwarded text returns on a real server is the business of
// cmd/ddp-proxy's TestCatalogRules.
func TestCatalogRules(t *testing.T) {
	info, err := catalog.NewMySQLInfoSchema(catalogtest.InfoSchemas()["mariadb-10.11"])
	if err != nil {
		t.Fatal(err)
	}
	rows := catalogtest.InfoSchemas()["mariadb-10.11"]
	var tablesCols []string
	for _, r := range rows {
		if r[0] == "TABLES" {
			tablesCols = append(tablesCols, r[1])
		}
	}
	fx := catalogtest.Fixture{Database: "test", Tables: [2]string{"big", "small"}, TablesColumns: tablesCols}
	pgPlanner := planner.New(loadPolicy(t))
	code := map[catalogtest.Want]sqlerr.Code{catalogtest.Refused: sqlerr.InsufficientPrivilege, catalogtest.NotForwarded: sqlerr.FeatureNotSupported}
	check := func(t *testing.T, sql string, want catalogtest.Want, pl *planner.Plan, err error) {
		t.Helper()
		if want == catalogtest.Forwarded {
			if err != nil || pl.Class != planner.ClassPassthrough {
				t.Fatalf("%s: %v, want it forwarded", sql, err)
			}
			return
		}
		if !sqlerr.HasCode(err, code[want]) {
			t.Fatalf("%s: %v, want %s", sql, err, code[want].Name)
		}
	}
	for _, c := range catalogtest.Cases {
		if c.Postgres == "" && c.MySQL == "" {
			t.Errorf("%s: no statement", c.Name)
		}
		if c.Postgres != "" {
			t.Run("postgres/"+c.Name, func(t *testing.T) {
				sql := fx.Expand(c.Postgres)
				pl, err := plan(t, pgPlanner, sql, planArgs{})
				check(t, sql, c.PostgresWant, pl, err)
			})
		}
		if c.MySQL != "" && c.Params == 0 {
			t.Run("mysql/"+c.Name, func(t *testing.T) {
				sql := fx.Expand(c.MySQL)
				pl, err := planMySQL(t, sql, info)
				check(t, sql, c.MySQLWant, pl, err)
			})
		}
	}
}
