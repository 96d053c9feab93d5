package catalog_test

import (
	"os"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/catalog"
	"github.com/ddp-proxy/ddp-proxy/parser"
)

// BenchmarkRewriteMySQL: parse, rewrite, restore and the check that the
// text parses back to the same of Connector/J's
// getColumns query (information_schema.COLUMNS, no statistics) and of a
// SELECT * over TABLES (one derived table).
func BenchmarkRewriteMySQL(b *testing.B) {
	info := infoSchemas(b)["mariadb-10.11"]
	getColumns, err := os.ReadFile("../cmd/ddp-proxy/testdata/connectorj_getcolumns.sql")
	if err != nil {
		b.Fatal(err)
	}
	for name, sql := range map[string]string{
		"getColumns": string(getColumns),
		"tablesStar": "SELECT * FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'test' ORDER BY 8",
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := catalog.RewriteMySQL(sql, parser.MySQLTree, info, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
