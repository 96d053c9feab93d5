package catalog_test

import (
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/ddp-proxy/ddp-proxy/catalog"
	"github.com/ddp-proxy/ddp-proxy/internal/catalogtest"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// infoSchemas returns the column lists of catalogtest, built.
func infoSchemas(t testing.TB) map[string]*catalog.MySQLInfoSchema {
	t.Helper()
	out := map[string]*catalog.MySQLInfoSchema{}
	for name, rows := range catalogtest.InfoSchemas() {
		info, err := catalog.NewMySQLInfoSchema(rows)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = info
	}
	return out
}

// tablesColumns returns the columns of information_schema.TABLES in a
// column list of catalogtest.
func tablesColumns(rows [][4]string) []string {
	var out []string
	for _, r := range rows {
		if r[0] == "TABLES" {
			out = append(out, r[1])
		}
	}
	return out
}

func rewrite(t testing.TB, info *catalog.MySQLInfoSchema, sql string, params int) (string, error) {
	t.Helper()
	if _, err := parser.MySQLTree(sql); err != nil {
		t.Fatalf("%s: does not parse: %v", sql, err)
	}
	return catalog.RewriteMySQL(sql, parser.MySQLTree, info, params)
}

// checkMySQL runs every catalog rule on a MySQL client's statement to a
// MySQL backend, as the planner does: the relations, then the statement.
func checkMySQL(t testing.TB, info *catalog.MySQLInfoSchema, sql string) (string, error) {
	t.Helper()
	stmts, err := parser.Parse(parser.MySQL, sql)
	if err != nil || len(stmts) != 1 {
		t.Fatalf("%s: does not parse: %v", sql, err)
	}
	st := stmts[0]
	reads := false
	for _, r := range st.Relations {
		if catalog.IsCatalogRelation("mysql", r.Schema, r.Name) {
			reads = true
			if err := catalog.CheckRelation("mysql", r.Schema, r.Name); err != nil {
				return "", err
			}
		}
	}
	return catalog.CheckPassthrough(catalog.Passthrough{
		Text: sql, NumParams: st.NumParams, Client: "mysql", Backend: "mysql", ReadsCatalog: reads,
		Functions: st.Functions, MySQLInfo: info, MySQLParse: parser.MySQLTree,
	})
}

// TestRewriteMySQLCases runs the shared table of statistics attacks on the
// tree check, with MariaDB's and MySQL 8's column lists: each is refused,
// or forwarded as a text in which no statistics column can be reached.
func TestRewriteMySQLCases(t *testing.T) {
	infos := infoSchemas(t)
	for name, rows := range catalogtest.InfoSchemas() {
		fx := catalogtest.Fixture{Database: "test", Tables: [2]string{"big", "small"}, TablesColumns: tablesColumns(rows)}
		for _, c := range catalogtest.Cases {
			if c.MySQL == "" {
				continue
			}
			t.Run(name+"/"+c.Name, func(t *testing.T) {
				sql := fx.Expand(c.MySQL)
				out, err := checkMySQL(t, infos[name], sql)
				switch c.MySQLWant {
				case catalogtest.Refused:
					if !sqlerr.HasCode(err, sqlerr.InsufficientPrivilege) {
						t.Fatalf("%s\nerr = %v, forwarded %q; want insufficient_privilege", sql, err, out)
					}
				case catalogtest.NotForwarded:
					if !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) {
						t.Fatalf("%s\nerr = %v, forwarded %q; want feature_not_supported", sql, err, out)
					}
				case catalogtest.Forwarded:
					if err != nil {
						t.Fatalf("%s\nerr = %v", sql, err)
					}
					if strings.Contains(out, "/*") || strings.Contains(out, "--") || strings.Contains(out, "#") {
						t.Errorf("comment in forwarded text %q", out)
					}
					checkForwarded(t, rows, out, c.Params)
				}
			})
		}
	}
}

// checkForwarded parses a forwarded text and checks, independently of the
// rewrite, that it reads no statistics column: every reference to an
// information_schema table holding one is the derived table that
// projects all its columns in order with those as NULL, and no column
// reference elsewhere names one.
func checkForwarded(t testing.TB, rows [][4]string, out string, params int) {
	t.Helper()
	tree, err := parser.MySQLTree(out)
	if err != nil {
		t.Fatalf("forwarded text does not parse: %v\n%s", err, out)
	}
	cols := map[string][]string{} // upper-case table → columns
	stats := map[string]bool{}
	for _, r := range rows {
		cols[strings.ToUpper(r[0])] = append(cols[strings.ToUpper(r[0])], r[1])
		if catalog.IsStatistics(r[1]) {
			stats[strings.ToUpper(r[0])] = true
		}
	}
	v := &forwardedChecker{t: t, cols: cols, stats: stats}
	tree.Accept(v)
	if v.markers != params {
		t.Errorf("%d ? markers forwarded, want %d: %s", v.markers, params, out)
	}
}

type forwardedChecker struct {
	t       testing.TB
	cols    map[string][]string
	stats   map[string]bool
	markers int
}

func infoTable(ts *ast.TableSource) string {
	if tn, ok := ts.Source.(*ast.TableName); ok && tn.Schema.L == "information_schema" {
		return strings.ToUpper(tn.Name.O)
	}
	return ""
}

func (v *forwardedChecker) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SelectStmt:
		if x.From == nil || x.From.TableRefs.Right != nil {
			break
		}
		ts, ok := x.From.TableRefs.Left.(*ast.TableSource)
		if !ok || !v.stats[infoTable(ts)] {
			break
		}
		// The one place a table with statistics may appear: the blanking
		// derived table, which must project exactly its columns.
		want := v.cols[infoTable(ts)]
		if x.Where != nil || x.GroupBy != nil || x.Having != nil || x.OrderBy != nil || len(x.Fields.Fields) != len(want) {
			v.t.Errorf("information_schema.%s read other than through the blanking derived table", infoTable(ts))
			return n, true
		}
		for i, f := range x.Fields.Fields {
			if catalog.IsStatistics(want[i]) {
				cast, ok := f.Expr.(*ast.FuncCastExpr)
				if ok {
					null, isValue := cast.Expr.(*test_driver.ValueExpr)
					ok = isValue && null.Kind() == test_driver.KindNull
				}
				if !ok || f.AsName.O != want[i] {
					v.t.Errorf("column %d of information_schema.%s is not NULL AS %s", i+1, infoTable(ts), want[i])
				}
				continue
			}
			if c, ok := f.Expr.(*ast.ColumnNameExpr); !ok || c.Name.Name.O != want[i] || c.Name.Table.O != "" || f.AsName.O != "" {
				v.t.Errorf("column %d of information_schema.%s is not %s", i+1, infoTable(ts), want[i])
			}
		}
		return n, true
	case *ast.TableSource:
		if v.stats[infoTable(x)] {
			v.t.Errorf("information_schema.%s is read directly", infoTable(x))
		}
	case *ast.ColumnName:
		if catalog.IsStatistics(x.Name.O) {
			v.t.Errorf("statistics column %s referenced", x.Name.O)
		}
	case *test_driver.ParamMarkerExpr:
		v.markers++
	}
	return n, false
}

func (v *forwardedChecker) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// The derived tables as MariaDB 10.11's column lists make them, written
// out by hand.
const (
	mariaTables = "(SELECT `TABLE_CATALOG`,`TABLE_SCHEMA`,`TABLE_NAME`,`TABLE_TYPE`,`ENGINE`,`VERSION`,`ROW_FORMAT`," +
		"CAST(NULL AS UNSIGNED) AS `TABLE_ROWS`,CAST(NULL AS UNSIGNED) AS `AVG_ROW_LENGTH`,CAST(NULL AS UNSIGNED) AS `DATA_LENGTH`," +
		"CAST(NULL AS UNSIGNED) AS `MAX_DATA_LENGTH`,CAST(NULL AS UNSIGNED) AS `INDEX_LENGTH`,CAST(NULL AS UNSIGNED) AS `DATA_FREE`," +
		"CAST(NULL AS UNSIGNED) AS `AUTO_INCREMENT`,`CREATE_TIME`,CAST(NULL AS DATETIME) AS `UPDATE_TIME`,CAST(NULL AS DATETIME) AS `CHECK_TIME`," +
		"`TABLE_COLLATION`,CAST(NULL AS UNSIGNED) AS `CHECKSUM`,`CREATE_OPTIONS`,`TABLE_COMMENT`,CAST(NULL AS UNSIGNED) AS `MAX_INDEX_LENGTH`,`TEMPORARY` " +
		"FROM `information_schema`.`TABLES`)"
	mariaStatistics = "(SELECT `TABLE_CATALOG`,`TABLE_SCHEMA`,`TABLE_NAME`,`NON_UNIQUE`,`INDEX_SCHEMA`,`INDEX_NAME`,`SEQ_IN_INDEX`,`COLUMN_NAME`," +
		"`COLLATION`,CAST(NULL AS SIGNED) AS `CARDINALITY`,`SUB_PART`,`PACKED`,`NULLABLE`,`INDEX_TYPE`,`COMMENT`,`INDEX_COMMENT`,`IGNORED` " +
		"FROM `information_schema`.`STATISTICS`)"
)

// TestRewriteMySQLText pins the forwarded text of representative
// statements: result names stay as written, qualifiers follow the derived
// table, strings keep their escapes.
func TestRewriteMySQLText(t *testing.T) {
	info := infoSchemas(t)["mariadb-10.11"]
	for _, tc := range []struct{ sql, want string }{
		{"select/**/* from information_schema.tables order by 8",
			"SELECT * FROM " + mariaTables + " AS `TABLES` ORDER BY 8"},
		{"SELECT count(*) FROM information_schema.TABLES WHERE table_schema = 'a\\\\b' AND table_name LIKE 'x\\_%'",
			"SELECT COUNT(1) AS `count(*)` FROM " + mariaTables + " AS `TABLES` WHERE `table_schema`='a\\\\b' AND `table_name` LIKE 'x\\\\_%'"},
		{"SELECT information_schema.tables.table_name, Tables.* FROM information_schema.tables",
			"SELECT `TABLES`.`table_name` AS `table_name`,`TABLES`.* FROM " + mariaTables + " AS `TABLES`"},
		{"SELECT s.INDEX_NAME, NON_UNIQUE FROM information_schema.STATISTICS s WHERE s.TABLE_NAME = ? ORDER BY 2",
			"SELECT `s`.`INDEX_NAME` AS `INDEX_NAME`,`NON_UNIQUE` AS `NON_UNIQUE` FROM " + mariaStatistics + " AS `s` WHERE `s`.`TABLE_NAME`=? ORDER BY 2"},
		{"TABLE information_schema.STATISTICS",
			"SELECT * FROM " + mariaStatistics + " AS `STATISTICS`"},
		// Tables without statistics are read as they are.
		{"SELECT column_name FROM information_schema.columns c JOIN information_schema.tables t USING (table_name)",
			"SELECT `column_name` AS `column_name` FROM `information_schema`.`columns` AS `c` JOIN " + mariaTables + " AS `t` USING (`table_name`)"},
	} {
		got, err := rewrite(t, info, tc.sql, strings.Count(tc.sql, "?"))
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
		} else if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.sql, got, tc.want)
		}
	}
}

func TestRewriteMySQLErrors(t *testing.T) {
	info := infoSchemas(t)["mariadb-10.11"]
	if _, err := catalog.RewriteMySQL("SELECT TABLE_NAME FROM information_schema.TABLES", parser.MySQLTree, nil, 0); !sqlerr.HasCode(err, sqlerr.Internal) {
		t.Errorf("no column lists: %v", err)
	}
	if _, err := catalog.RewriteMySQL("SHOW TABLES", parser.MySQLTree, info, 0); !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) {
		t.Errorf("SHOW: %v", err)
	}
	if _, err := catalog.RewriteMySQL("SELEC 1", parser.MySQLTree, info, 0); !sqlerr.HasCode(err, sqlerr.SyntaxError) {
		t.Errorf("syntax error: %v", err)
	}
	// TiDB prints a function name in invalid UTF-8 as ?: the text would
	// not be the statement checked (found by FuzzRewriteMySQL).
	if out, err := catalog.RewriteMySQL("SELECT \xcd(1) FROM information_schema.COLUMNS", parser.MySQLTree, info, 0); !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) {
		t.Errorf("invalid UTF-8 name: %v, forwarded %q", err, out)
	}
	// On the allow list, but not in the server's column lists (the MySQL
	// 8 fixture lists three tables only): refused, not guessed.
	mysql8 := infoSchemas(t)["mysql-8.0"]
	if _, err := rewrite(t, mysql8, "SELECT * FROM information_schema.VIEWS", 0); !sqlerr.HasCode(err, sqlerr.UndefinedTable) {
		t.Errorf("unknown table: %v", err)
	}
	if _, err := catalog.NewMySQLInfoSchema(nil); err == nil {
		t.Errorf("empty column lists accepted")
	}
	if _, err := catalog.NewMySQLInfoSchema([][4]string{{"COLUMNS", "TABLE_NAME", "varchar", "varchar(64)"}}); err == nil {
		t.Errorf("column lists without TABLES accepted")
	}
}

// FuzzRewriteMySQL: whatever parses, the rewrite never panics, and what
// it forwards reads no statistics column (checkForwarded).
func FuzzRewriteMySQL(f *testing.F) {
	infos := infoSchemas(f)
	rows := catalogtest.InfoSchemas()["mariadb-10.11"]
	fx := catalogtest.Fixture{Database: "test", Tables: [2]string{"big", "small"}, TablesColumns: tablesColumns(rows)}
	for _, c := range catalogtest.Cases {
		f.Add(fx.Expand(c.MySQL))
	}
	f.Fuzz(func(t *testing.T, sql string) {
		tree, err := parser.MySQLTree(sql)
		if err != nil {
			return
		}
		params := countMarkers(tree)
		out, err := catalog.RewriteMySQL(sql, parser.MySQLTree, infos["mariadb-10.11"], params)
		if err != nil {
			return
		}
		checkForwarded(t, rows, out, params)
	})
}

type markerCounter struct{ n int }

func (c *markerCounter) Enter(n ast.Node) (ast.Node, bool) {
	if _, ok := n.(*test_driver.ParamMarkerExpr); ok {
		c.n++
	}
	return n, false
}
func (c *markerCounter) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func countMarkers(n ast.Node) int {
	c := &markerCounter{}
	n.Accept(c)
	return c.n
}
