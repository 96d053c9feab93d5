package session

import (
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// TestLocalAnswersFromTheTree: PostgreSQL session functions on a backend
// of another dialect are answered from the parser's tree: comments,
// casing, schema qualification and quoted aliases are read as PostgreSQL
// reads them.
func TestLocalAnswersFromTheTree(t *testing.T) {
	f := sqliteFixture(t)
	rs := mustQuery(t, f.s, `SELECT /* c */ pg_catalog.VERSION() AS "V"; select CURRENT_USER, session_user, current_schema, Current_Catalog, user`)
	if len(rs) != 2 {
		t.Fatalf("%d results", len(rs))
	}
	if rs[0].Columns[0].Name != "V" || !strings.HasPrefix(rs[0].Rows[0][0].Str, "PostgreSQL "+ServerVersion) {
		t.Errorf("version: %+v", rs[0])
	}
	wantCols := []string{"current_user", "session_user", "current_schema", "current_catalog", "user"}
	wantVals := []ir.Value{ir.String("alice"), ir.String("alice"), ir.String("public"), ir.String("ddp"), ir.String("alice")}
	if len(rs[1].Columns) != len(wantCols) || len(rs[1].Rows) != 1 {
		t.Fatalf("session functions: %+v", rs[1])
	}
	for i, c := range rs[1].Columns {
		if c.Name != wantCols[i] || rs[1].Rows[0][i] != wantVals[i] {
			t.Errorf("item %d: %s = %+v, want %s = %+v", i, c.Name, rs[1].Rows[0][i], wantCols[i], wantVals[i])
		}
	}
}

// TestOtherStatementTags: statements accepted without effect get
// PostgreSQL's command tag, named from the tree (a leading comment used to
// become the tag).
func TestOtherStatementTags(t *testing.T) {
	f := sqliteFixture(t)
	for sql, want := range map[string]string{
		"/* c */ SAVEPOINT s1":                                 "SAVEPOINT",
		"release savepoint s1":                                 "RELEASE",
		"ROLLBACK TO s1":                                       "ROLLBACK",
		"discard /* everything */ all":                         "DISCARD ALL",
		"DEALLOCATE ALL":                                       "DEALLOCATE ALL",
		"deallocate p1":                                        "DEALLOCATE",
		"SET TRANSACTION ISOLATION LEVEL READ COMMITTED":       "SET",
		"SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY": "SET",
		"LISTEN ch":                                            "LISTEN",
		"UNLISTEN *":                                           "UNLISTEN",
	} {
		rs := mustQuery(t, f.s, sql)
		if len(rs) != 1 || rs[0].Tag != want {
			t.Errorf("%s: %+v, want tag %s", sql, rs, want)
		}
	}
}
