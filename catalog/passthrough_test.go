package catalog_test

import (
	"testing"

	"github.com/ddp-proxy/ddp-proxy/catalog"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestStatisticsNamesOnTheTree: outside a catalog query (a public table on
// a backend without the catalog to blank, or no relation at all) a
// statistics column named in either grammar is refused, and decided on
// the parse tree: a string literal or an alias that spells one is not a
// column and passes (the text scan this replaced refused those), and a
// comment cannot hide a column from the tree.
func TestStatisticsNamesOnTheTree(t *testing.T) {
	for _, tt := range []struct {
		client, backend, sql string
		refused              bool
	}{
		{"postgres", "sqlite", "SELECT reltuples FROM people", true},
		{"postgres", "sqlite", `SELECT p."n_live_tup" FROM people p`, true},
		{"postgres", "sqlite", "SELECT (p).relpages FROM people p", true},
		{"postgres", "sqlite", "SELECT count(*) FROM people WHERE/**/reltuples > 0", true},
		{"postgres", "sqlite", "SELECT 'reltuples' AS x FROM people", false},
		{"postgres", "sqlite", "SELECT 1 AS reltuples", false},
		{"postgres", "postgres", "SELECT reltuples FROM people", true},
		{"postgres", "postgres", "SELECT 'last_value, reltuples'", false},
		{"mysql", "sqlite", "SELECT TABLE_ROWS FROM people", true},
		{"mysql", "sqlite", "SELECT `Table_Rows` FROM people", true},
		{"mysql", "sqlite", "SELECT/**/cardinality FROM people", true},
		{"mysql", "sqlite", "SELECT DEFAULT(auto_increment) FROM people", true},
		{"mysql", "sqlite", "SELECT 'table_rows' FROM people", false},
		{"mysql", "postgres", "SELECT 1 AS table_rows", false},
	} {
		d := parser.Postgres
		if tt.client == "mysql" {
			d = parser.MySQL
		}
		stmts, err := parser.Parse(d, tt.sql)
		if err != nil {
			t.Fatalf("%s: %v", tt.sql, err)
		}
		_, err = catalog.CheckPassthrough(catalog.Passthrough{
			Text: tt.sql, Client: tt.client, Backend: tt.backend, Functions: stmts[0].Functions, MySQLParse: parser.MySQLTree,
		})
		if tt.refused != sqlerr.HasCode(err, sqlerr.InsufficientPrivilege) || !tt.refused && err != nil {
			t.Errorf("%s from %s to %s: %v, want refused %v", tt.sql, tt.client, tt.backend, err, tt.refused)
		}
	}
}

// TestSizeFunctionsOnlyBlankedOnPostgresText: a size function is blanked
// on pg_query's tree; MySQL text to a PostgreSQL backend cannot be
// rewritten there, so it is refused instead of forwarded with the size.
func TestSizeFunctionsOnlyBlankedOnPostgresText(t *testing.T) {
	out, err := catalog.CheckPassthrough(catalog.Passthrough{
		Text: "SELECT pg_relation_size('people')", Client: "postgres", Backend: "postgres", Functions: []string{"pg_relation_size"},
	})
	if err != nil || out != "SELECT NULL::bigint" {
		t.Errorf("PostgreSQL client: %q, %v", out, err)
	}
	_, err = catalog.CheckPassthrough(catalog.Passthrough{
		Text: "SELECT pg_relation_size('people')", Client: "mysql", Backend: "postgres", Functions: []string{"pg_relation_size"}, MySQLParse: parser.MySQLTree,
	})
	if !sqlerr.HasCode(err, sqlerr.InsufficientPrivilege) {
		t.Errorf("MySQL client: %v, want refused", err)
	}
}
