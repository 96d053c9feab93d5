package catalog

import (
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestVerbatimTextRefused: MySQL text forwarded as written must hold
// nothing its backend's lexer reads as code where TiDB's read a comment
// or a string.
func TestVerbatimTextRefused(t *testing.T) {
	for _, tc := range []struct {
		text, backend string
		refused       bool
	}{
		{"SELECT a FROM pub /*M! WHERE (SELECT COUNT(*) FROM secret) > 3 */", "mysql", true},
		{"SELECT 1 /*m!100000 , (SELECT COUNT(*) FROM secret) */", "mysql", true},
		{"SELECT a FROM pub /*!99999 'x */ , (SELECT COUNT(*) FROM secret) -- ' */", "mysql", true},
		{"SELECT 1 /*T! ' */ , (SELECT COUNT(*) FROM secret) -- ' */", "mysql", true},
		{"SELECT 1 /*!, 'x */ , (SELECT COUNT(*) FROM secret) -- ' */", "mysql", true},
		{"SELECT a FROM pub /*+ MAX_EXECUTION_TIME(1) */", "mysql", false},
		{"SELECT a FROM pub /* plain */ WHERE b = 'c\\'d'", "mysql", false},
		{`SELECT lower('a\') , (SELECT count(*) FROM people) -- ')`, "sqlite", true},
		{"SELECT lower('a') #x\n", "sqlite", true},
		{"SELECT lower('a') /* x */", "postgres", true},
		{"SELECT lower('a')", "sqlite", false},
	} {
		got, err := CheckPassthrough(Passthrough{Text: tc.text, Client: "mysql", Backend: tc.backend, MySQLParse: parser.MySQLTree})
		if tc.refused && !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) {
			t.Errorf("%s to %s: forwarded %q (err %v), want refused", tc.text, tc.backend, got, err)
		}
		if !tc.refused && err != nil {
			t.Errorf("%s to %s: %v", tc.text, tc.backend, err)
		}
	}
}
