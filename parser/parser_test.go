package parser

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Shorthands for hand-written expected IR.
func col(q, n string) ir.ColumnRef   { return ir.ColumnRef{Qualifier: q, Name: n} }
func colp(q, n string) *ir.ColumnRef { c := col(q, n); return &c }
func lit(v ir.Value) ir.Literal      { return ir.Literal{Value: v} }
func i64(n int64) *int64             { return &n }
func tbl(schema, name, alias string) ir.TableRef {
	return ir.TableRef{Schema: schema, Name: name, Alias: alias}
}

// parseOne parses sql and requires exactly one statement.
func parseOne(t *testing.T, d Dialect, sql string) ir.Statement {
	t.Helper()
	stmts, err := Parse(d, sql)
	if err != nil {
		t.Fatalf("Parse(%s, %q): %v", d, sql, err)
	}
	if len(stmts) != 1 {
		t.Fatalf("Parse(%s, %q): %d statements, want 1", d, sql, len(stmts))
	}
	return stmts[0]
}

// unlabeled is q without the MySQL output names of its select items, for
// tables that check the query's shape; TestMySQLColumnLabels checks the
// names.
func unlabeled(q ir.Query) ir.Query {
	q.Select = slices.Clone(q.Select)
	for i := range q.Select {
		q.Select[i].Label = ""
	}
	return q
}

func TestDialect(t *testing.T) {
	tests := []struct {
		in      string
		want    Dialect
		wantErr bool
	}{
		{"postgres", Postgres, false},
		{"PostgreSQL", Postgres, false},
		{"mysql", MySQL, false},
		{" MariaDB ", MySQL, false},
		{"oracle", 0, true},
		{"", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseDialect(tt.in)
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("ParseDialect(%q) = %v, %v; want %v, err %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
	for _, d := range []Dialect{Postgres, MySQL} {
		back, err := ParseDialect(d.String())
		if err != nil || back != d {
			t.Errorf("ParseDialect(%q) = %v, %v; want round trip", d.String(), back, err)
		}
	}
	if _, err := Parse(Dialect(9), "SELECT 1"); !sqlerr.HasCode(err, sqlerr.Internal) {
		t.Errorf("Parse with an unknown dialect: err = %v, want an internal error", err)
	}
}

func TestEmpty(t *testing.T) {
	for _, d := range []Dialect{Postgres, MySQL} {
		for _, sql := range []string{"", "   ", ";", " ; ", "/* nothing */", "-- comment\n"} {
			st := parseOne(t, d, sql)
			if st.Kind != ir.StmtEmpty {
				t.Errorf("%s %q: kind %v, want empty", d, sql, st.Kind)
			}
		}
	}
}

func TestMultiStatementText(t *testing.T) {
	tests := []struct {
		name string
		d    Dialect
		sql  string
		want []string
		kind []ir.StatementKind
	}{
		{"pg three", Postgres, "SELECT 1;  SET x = 2 ;\n\tINSERT INTO t VALUES (1);", []string{"SELECT 1", "SET x = 2", "INSERT INTO t VALUES (1)"},
			[]ir.StatementKind{ir.StmtSelect, ir.StmtSession, ir.StmtRefused}},
		{"pg no trailing semicolon", Postgres, "BEGIN; SELECT count(*) FROM t", []string{"BEGIN", "SELECT count(*) FROM t"},
			[]ir.StatementKind{ir.StmtSession, ir.StmtSelect}},
		{"pg semicolon in string", Postgres, "SELECT 'a;b'; SELECT 2", []string{"SELECT 'a;b'", "SELECT 2"},
			[]ir.StatementKind{ir.StmtSelect, ir.StmtSelect}},
		{"pg multibyte", Postgres, "SELECT 'é☃'; SELECT 2", []string{"SELECT 'é☃'", "SELECT 2"},
			[]ir.StatementKind{ir.StmtSelect, ir.StmtSelect}},
		{"mysql three", MySQL, "SELECT 1;  SET x = 2 ;\n\tINSERT INTO t VALUES (1);", []string{"SELECT 1", "SET x = 2", "INSERT INTO t VALUES (1)"},
			[]ir.StatementKind{ir.StmtSelect, ir.StmtSession, ir.StmtRefused}},
		{"pg empty statement between", Postgres, "SELECT 1;; ;SELECT 2", []string{"SELECT 1", "SELECT 2"},
			[]ir.StatementKind{ir.StmtSelect, ir.StmtSelect}},
		{"mysql empty statement between", MySQL, "SELECT 1;; ;SELECT 2", []string{"SELECT 1", "SELECT 2"},
			[]ir.StatementKind{ir.StmtSelect, ir.StmtSelect}},
		{"mysql semicolon in string", MySQL, "SELECT 'a;b'; USE db", []string{"SELECT 'a;b'", "USE db"},
			[]ir.StatementKind{ir.StmtSelect, ir.StmtSession}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stmts, err := Parse(tt.d, tt.sql)
			if err != nil {
				t.Fatal(err)
			}
			if len(stmts) != len(tt.want) {
				t.Fatalf("%d statements, want %d", len(stmts), len(tt.want))
			}
			for i, st := range stmts {
				if st.Text != tt.want[i] || st.Kind != tt.kind[i] {
					t.Errorf("statement %d: %v %q, want %v %q", i, st.Kind, st.Text, tt.kind[i], tt.want[i])
				}
			}
		})
	}
}

func TestSyntaxError(t *testing.T) {
	tests := []struct {
		name     string
		d        Dialect
		sql      string
		wantText string // must appear in the message
	}{
		{"pg bad keyword", Postgres, "SELECT FROM WHERE", `"WHERE"`},
		{"pg position", Postgres, "SELECT 1 +", "at character"},
		{"pg second statement bad", Postgres, "SELECT 1; SELEC 2", "SELEC"},
		{"pg unterminated", Postgres, "SELECT 'abc", "unterminated"},
		{"mysql bad keyword", MySQL, "SELECT FROM WHERE", "line 1 column"},
		{"mysql second statement bad", MySQL, "SELECT 1; SELEC 2", "near"},
		// TiDB's grammar lacks these MySQL forms; failing to parse them
		// fails closed.
		{"mysql into dumpfile", MySQL, "SELECT a FROM t INTO DUMPFILE '/tmp/x'", "DUMPFILE"},
		{"mysql into variable", MySQL, "SELECT count(*) FROM t INTO @n", "@n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stmts, err := Parse(tt.d, tt.sql)
			if err == nil {
				t.Fatalf("no error; got %d statements", len(stmts))
			}
			var se *sqlerr.Error
			if !errors.As(err, &se) || se.Code != sqlerr.SyntaxError {
				t.Fatalf("err = %#v, want a SyntaxError", err)
			}
			if !strings.Contains(se.Message, tt.wantText) {
				t.Errorf("message %q does not contain %q", se.Message, tt.wantText)
			}
			for _, jargon := range []string{"TiDB", "manual", "yacc", "scan.l"} {
				if strings.Contains(se.Message, jargon) {
					t.Errorf("message %q contains parser jargon %q", se.Message, jargon)
				}
			}
		})
	}
}
