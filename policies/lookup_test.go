package policies

import (
	"testing"
)

func lookupPolicy(t *testing.T, driver, dsn string) *Policy {
	t.Helper()
	return mustLoad(t, "l.yaml", `version: 1
backend: {driver: `+driver+`, dsn: "`+dsn+`"}
datasets:
  d:
    tables:
      plain: {unit: id}
      Sales_Facts: {unit: id, schema: Analytics, columns: {Amount: {type: real, bounds: [-5, 7]}}}
      pub: {public: true}
`)
}

func TestLookupTable(t *testing.T) {
	tests := []struct {
		driver, dsn, schema, name string
		want                      string // table name, "" for no match
	}{
		{"postgres", "postgres://h/db", "", "plain", "plain"},
		{"postgres", "postgres://h/db", "public", "PLAIN", "plain"},
		{"postgres", "postgres://h/db", "Public", "plain", "plain"},
		{"postgres", "postgres://h/db", "other", "plain", ""},
		{"postgres", "postgres://h/db", "analytics", "sales_facts", "sales_facts"},
		{"postgres", "postgres://h/db", "", "sales_facts", ""},
		{"postgres", "postgres://h/db", "public", "sales_facts", ""},
		{"postgres", "postgres://h/db", "", "missing", ""},
		{"sqlite", "x.db", "main", "plain", "plain"},
		{"sqlite", "x.db", "public", "plain", ""},
		{"mysql", "u:p@tcp(h:3306)/shop?parseTime=true", "", "plain", "plain"},
		{"mysql", "u:p@tcp(h:3306)/shop?parseTime=true", "shop", "plain", "plain"},
		{"mysql", "u:p@tcp(h:3306)/shop?parseTime=true", "other", "plain", ""},
		{"mysql", "u:p/x@tcp(h:3306)/shop", "shop", "plain", "plain"},
		{"mysql", "u:p@tcp(h:3306)/", "anything", "plain", "plain"},
		{"mysql", "u:p@tcp(h:3306)/", "", "sales_facts", "sales_facts"},
	}
	for _, tc := range tests {
		p := lookupPolicy(t, tc.driver, tc.dsn)
		d, tb := p.LookupTable(tc.schema, tc.name)
		got := ""
		if tb != nil {
			got = tb.Name
			if d != p.Datasets["d"] {
				t.Errorf("%s %s.%s: wrong dataset", tc.driver, tc.schema, tc.name)
			}
		} else if d != nil {
			t.Errorf("%s %s.%s: dataset without table", tc.driver, tc.schema, tc.name)
		}
		if got != tc.want {
			t.Errorf("%s (%s) LookupTable(%q, %q) = %q, want %q", tc.driver, tc.dsn, tc.schema, tc.name, got, tc.want)
		}
	}
}

// TestResolve: a client's name resolves a table when the backend's own
// names do (LookupTable) or when it is the name that client's catalog shows
// the table in: public to PostgreSQL clients, the session's database to
// MySQL clients, the declared schema for a table that has one.
func TestResolve(t *testing.T) {
	const pg, my, shop = "postgres://h/db", "u:p@tcp(h:3306)/shop", "u:p@tcp(h:3306)/"
	tests := []struct {
		driver, dsn string
		names       Names
		schema      string
		name        string
		want        string // table name, "" for no match
		catalog     string // CatalogSchema of the wanted table ("" = not checked)
	}{
		{"sqlite", "x.db", Names{Dialect: "postgres"}, "public", "plain", "plain", "public"},
		// PostgreSQL compares exactly: its parser folded unquoted names, so
		// a capital comes from a quoted name, which names another relation.
		{"sqlite", "x.db", Names{Dialect: "postgres"}, "PUBLIC", "Plain", "", ""},
		{"sqlite", "x.db", Names{Dialect: "postgres"}, "public", "PLAIN", "", ""},
		{"sqlite", "x.db", Names{Dialect: "postgres"}, "Public", "plain", "", ""},
		{"postgres", pg, Names{Dialect: "postgres"}, "", "Plain", "", ""},
		// MySQL: case-insensitive (lower_case_table_names 1 or 2, the
		// embedded SQLite, unknown), exact when the backend says 0.
		{"sqlite", "x.db", Names{Dialect: "mysql", Database: "demo"}, "Demo", "PLAIN", "plain", "demo"},
		{"mysql", my, Names{Dialect: "mysql", Database: "demo"}, "", "Plain", "plain", "demo"},
		{"mysql", my, Names{Dialect: "mysql", Database: "demo", ExactTableNames: true}, "", "Plain", "", ""},
		{"mysql", my, Names{Dialect: "mysql", Database: "demo", ExactTableNames: true}, "DEMO", "plain", "", ""},
		{"mysql", my, Names{Dialect: "mysql", Database: "demo", ExactTableNames: true}, "demo", "plain", "plain", "demo"},
		// The backend's own names (no client dialect) stay case-insensitive.
		{"postgres", pg, Names{}, "", "PLAIN", "plain", ""},
		{"sqlite", "x.db", Names{Dialect: "postgres"}, "main", "plain", "plain", "public"},
		{"sqlite", "x.db", Names{Dialect: "postgres"}, "", "plain", "plain", "public"},
		{"sqlite", "x.db", Names{Dialect: "postgres"}, "demo", "plain", "", ""},
		{"sqlite", "x.db", Names{Dialect: "postgres"}, "analytics", "sales_facts", "sales_facts", "analytics"},
		{"sqlite", "x.db", Names{Dialect: "postgres"}, "public", "sales_facts", "", ""},
		{"sqlite", "x.db", Names{Dialect: "postgres"}, "", "sales_facts", "", ""},
		{"mysql", my, Names{Dialect: "postgres"}, "public", "plain", "plain", "public"},
		{"mysql", my, Names{Dialect: "postgres"}, "shop", "plain", "plain", "public"},
		{"postgres", pg, Names{Dialect: "postgres"}, "analytics", "sales_facts", "sales_facts", "analytics"},
		{"postgres", pg, Names{Dialect: "postgres"}, "public", "sales_facts", "", ""},
		{"sqlite", "x.db", Names{Dialect: "mysql", Database: "demo"}, "demo", "plain", "plain", "demo"},
		{"sqlite", "x.db", Names{Dialect: "mysql", Database: "demo"}, "DEMO", "pub", "pub", "demo"},
		{"sqlite", "x.db", Names{Dialect: "mysql", Database: "demo"}, "public", "plain", "", ""},
		{"sqlite", "x.db", Names{Dialect: "mysql", Database: "demo"}, "demo", "sales_facts", "", ""},
		{"sqlite", "x.db", Names{Dialect: "mysql", Database: "demo"}, "analytics", "sales_facts", "sales_facts", "analytics"},
		{"sqlite", "x.db", Names{Dialect: "mysql"}, "main", "plain", "plain", "main"},
		{"postgres", pg, Names{Dialect: "mysql", Database: "bi"}, "bi", "plain", "plain", "bi"},
		{"postgres", pg, Names{Dialect: "mysql", Database: "bi"}, "public", "plain", "plain", "bi"},
		{"mysql", my, Names{Dialect: "mysql", Database: "demo"}, "demo", "plain", "plain", "demo"},
		{"mysql", my, Names{Dialect: "mysql", Database: "demo"}, "shop", "plain", "plain", "demo"},
		{"mysql", my, Names{Dialect: "mysql", Database: "demo"}, "other", "plain", "", ""},
		{"mysql", my, Names{Dialect: "mysql"}, "shop", "plain", "plain", "shop"},
		{"mysql", shop, Names{Dialect: "mysql", Database: "x"}, "anything", "plain", "plain", "x"},
		{"mysql", shop, Names{Dialect: "mysql"}, "", "plain", "plain", "ddp"},
		{"sqlite", "x.db", Names{}, "public", "plain", "", ""},
		{"sqlite", "x.db", Names{}, "main", "plain", "plain", "main"},
	}
	for _, tc := range tests {
		p := lookupPolicy(t, tc.driver, tc.dsn)
		d, tb := p.Resolve(tc.names, tc.schema, tc.name)
		got := ""
		if tb != nil {
			got = tb.Name
			if d != p.Datasets["d"] {
				t.Errorf("%s %s.%s: wrong dataset", tc.driver, tc.schema, tc.name)
			}
			if c := p.CatalogSchema(tc.names, tb); tc.catalog != "" && c != tc.catalog {
				t.Errorf("%s %+v: CatalogSchema(%s) = %q, want %q", tc.driver, tc.names, tb.Name, c, tc.catalog)
			}
		}
		if got != tc.want {
			t.Errorf("%s (%s) %+v Resolve(%q, %q) = %q, want %q", tc.driver, tc.dsn, tc.names, tc.schema, tc.name, got, tc.want)
		}
	}
}

func TestColumnHelpers(t *testing.T) {
	p := lookupPolicy(t, "postgres", "postgres://h/db")
	_, tb := p.LookupTable("analytics", "SALES_FACTS")
	c := tb.Column("AMOUNT")
	if c == nil || c.Name != "amount" {
		t.Fatalf("Column(AMOUNT) = %+v", c)
	}
	if !c.HasBounds() || c.Lo() != -5 || c.Hi() != 7 {
		t.Errorf("bounds: %v %v %v", c.HasBounds(), c.Lo(), c.Hi())
	}
	if tb.Column("nope") != nil {
		t.Error("unknown column found")
	}
	var none Column
	if none.HasBounds() || none.Lo() != 0 || none.Hi() != 0 {
		t.Error("column without bounds")
	}
	if p.User("nobody") != nil {
		t.Error("unknown user found")
	}
}

func TestLineAndPosition(t *testing.T) {
	fixtureEnv(t)
	src := `version: 1                                  # 1
backend: {driver: sqlite, dsn: x.db}        # 2
users:                                      # 3
  - name: Ann                               # 4
    password_env: DDP_TEST_PASSWORD         # 5
    budgets:                                # 6
      census:                               # 7
        epsilon: 1                          # 8
  - name: "12"                              # 9
    password_env: DDP_TEST_PASSWORD         # 10
datasets:                                   # 11
  census:                                   # 12
    tables:                                 # 13
      People:                               # 14
        unit: id                            # 15
        columns:                            # 16
          ZIP:                              # 17
            type: text                      # 18
`
	p := mustLoad(t, "census.yaml", src)
	lines := map[string]int{
		"version":                          1,
		"backend.dsn":                      2,
		"users":                            3,
		"users.0":                          4,
		"users.ann":                        4,
		"users.ann.name":                   4,
		"users.0.budgets.census.epsilon":   8,
		"users.ann.budgets.census.epsilon": 8,
		"users.1.password_env":             10,
		"users.12":                         0, // digit names use the index form only
		"datasets.census.tables.people":    14,
		"datasets.census.tables.people.columns.zip":        17,
		"datasets.census.tables.people.columns.zip.type":   18,
		"datasets.census.tables.people.columns.zip.domain": 0,
		"datasets.census.tables.People":                    0,
	}
	for path, want := range lines {
		if got := p.Line(path); got != want {
			t.Errorf("Line(%s) = %d, want %d", path, got, want)
		}
	}
	positions := map[string]string{
		"users.ann.budgets.census.epsilon":                 "census.yaml:8",
		"datasets.census.tables.people.columns.zip.domain": "census.yaml:17", // missing: its column
		"nothing.here": "nothing.here",
	}
	for path, want := range positions {
		if got := p.Position(path); got != want {
			t.Errorf("Position(%s) = %q, want %q", path, got, want)
		}
	}
	unnamed := mustLoad(t, "", src)
	if got := unnamed.Position("version"); got != "line 1" {
		t.Errorf("unnamed Position = %q", got)
	}
}

func TestMySQLDatabase(t *testing.T) {
	tests := map[string]string{
		"user:pw@tcp(127.0.0.1:3306)/shop":          "shop",
		"user:pw@tcp(127.0.0.1:3306)/shop?tls=true": "shop",
		"user:p/w@tcp(h)/shop":                      "shop",
		"user:pw@/shop":                             "shop",
		"/shop":                                     "shop",
		"user:pw@tcp(h)/":                           "",
		"user:pw@unix(/var/run/mysqld.sock)/shop":   "shop",
		"user:pw@tcp(h)/?parseTime=true&loc=a/b":    "",
	}
	for dsn, want := range tests {
		if got := mysqlDatabase(dsn); got != want {
			t.Errorf("mysqlDatabase(%q) = %q, want %q", dsn, got, want)
		}
	}
}
