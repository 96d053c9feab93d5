package parser

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	tidb "github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// parseMySQL parses with TiDB's MySQL grammar in the server's default SQL
// mode (so "x" is a string and || is OR, as in a stock MySQL). Value
// expressions are built by TiDB's test_driver, which has no dependency on
// the TiDB server.
func parseMySQL(sql string) ([]ir.Statement, error) {
	nodes, err := myParse(sql)
	if err != nil {
		return nil, mySyntaxError(err)
	}
	out := make([]ir.Statement, 0, len(nodes))
	for _, n := range nodes {
		st := myStatement(n)
		st.Text = trimStatement(n.Text())
		out = append(out, st)
	}
	return out, nil
}

// myParse calls the grammar, turning a panic inside the third-party code
// into a syntax error so one bad query cannot take a connection down.
func myParse(sql string) (nodes []ast.StmtNode, err error) {
	defer func() {
		if r := recover(); r != nil {
			nodes, err = nil, &grammarPanic{value: r}
		}
	}()
	nodes, _, err = tidb.New().ParseSQL(sql)
	return nodes, err
}

// MySQLTree parses one MySQL statement into TiDB's syntax tree, for the
// checks that rewrite the tree itself (catalog.RewriteMySQL). Every call
// returns a fresh tree, which the caller may change; cached ir.Statements
// never share it.
func MySQLTree(sql string) (ast.StmtNode, error) {
	nodes, err := myParse(sql)
	if err != nil {
		return nil, mySyntaxError(err)
	}
	if len(nodes) != 1 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "expected one statement, got %d", len(nodes))
	}
	return nodes[0], nil
}

// grammarPanic is a panic recovered from a third-party grammar.
type grammarPanic struct{ value any }

func (p *grammarPanic) Error() string { return fmt.Sprintf("SQL grammar panicked: %v", p.value) }

// mySyntaxError keeps the position part of TiDB's message ("line 1 column
// 14 near ...") and drops its boilerplate about the TiDB manual. TiDB's
// error carries no structured position, so the text is the only source.
func mySyntaxError(err error) error {
	if _, ok := err.(*grammarPanic); ok {
		return sqlerr.Wrap(sqlerr.SyntaxError, err, "syntax error")
	}
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		return sqlerr.Wrap(sqlerr.SyntaxError, err, "syntax error at "+strings.TrimSpace(msg[i:]))
	}
	return sqlerr.Wrap(sqlerr.SyntaxError, err, "syntax error")
}

// myStatement classifies one statement; anything not named here is
// refused.
func myStatement(n ast.StmtNode) ir.Statement {
	switch x := n.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		return mySelect(n)
	case *ast.ExplainStmt:
		return myExplain(x)
	case *ast.ShowStmt:
		return myShow(x)
	case *ast.SetStmt:
		return mySet(x)
	case *ast.UseStmt:
		return sessionStmt(ir.SessionUse, ir.Setting{Name: x.DBName})
	case *ast.BeginStmt:
		return sessionStmt(ir.SessionBegin)
	case *ast.CommitStmt:
		return sessionStmt(ir.SessionCommit)
	case *ast.RollbackStmt:
		if x.SavepointName != "" {
			return sessionStmt(ir.SessionOther, ir.Setting{Name: "rollback to savepoint", Value: x.SavepointName})
		}
		return sessionStmt(ir.SessionRollback)
	case *ast.SavepointStmt:
		return sessionStmt(ir.SessionOther, ir.Setting{Name: "savepoint", Value: x.Name})
	case *ast.ReleaseSavepointStmt:
		return sessionStmt(ir.SessionOther, ir.Setting{Name: "release savepoint", Value: x.Name})
	case *ast.KillStmt:
		if x.TiDBExtension || x.Expr != nil {
			return refusedStmt(notSupported("KILL with an expression (write KILL [QUERY | CONNECTION] id)"))
		}
		what := "connection"
		if x.Query {
			what = "query"
		}
		return sessionStmt(ir.SessionKill, ir.Setting{Name: what, Value: strconv.FormatUint(x.ConnectionID, 10)})
	case *ast.DeallocateStmt:
		return sessionStmt(ir.SessionOther, ir.Setting{Name: "deallocate", Value: x.Name})
	case *ast.InsertStmt:
		if x.IsReplace {
			return refusedStmt(readOnly("REPLACE"))
		}
		return refusedStmt(readOnly("INSERT"))
	case *ast.LoadDataStmt:
		return refusedStmt(readOnly("LOAD DATA"))
	case *ast.PrepareStmt:
		return refusedStmt(notSupported("PREPARE (SQL-level prepared statements; use the protocol's COM_STMT_PREPARE instead)"))
	case *ast.ExecuteStmt:
		return refusedStmt(notSupported("EXECUTE (SQL-level prepared statements)"))
	}
	return refusedStmt(myRefusal(n))
}

// myRefusal names a refused statement after its AST type
// ("CreateTableStmt" → "CREATE TABLE") so new statement types get a
// sensible message too.
func myRefusal(n ast.StmtNode) *sqlerr.Error {
	t := reflect.TypeOf(n)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	verb := "this statement"
	if t != nil {
		verb = camelWords(strings.TrimSuffix(t.Name(), "Stmt"))
	}
	if _, ok := n.(ast.DDLNode); ok {
		return readOnly(verb)
	}
	if _, ok := n.(ast.DMLNode); ok {
		return readOnly(verb)
	}
	for _, p := range []string{"GRANT", "REVOKE", "CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE", "FLUSH", "ANALYZE", "LOCK", "UNLOCK", "SET PWD", "SET ROLE", "SET DEFAULT", "SET PASSWORD"} {
		if strings.HasPrefix(verb, p) {
			return readOnly(verb)
		}
	}
	return notSupported(verb)
}

// camelWords turns "CreateTable" into "CREATE TABLE".
func camelWords(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte(' ')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

func mySelect(n ast.StmtNode) ir.Statement {
	r, params := myCollect(n)
	if r.refused != nil {
		return refusedStmt(r.refused)
	}
	st := ir.Statement{Kind: ir.StmtSelect, Relations: r.rels, Functions: r.funcs, NumParams: r.params}
	s, ok := n.(*ast.SelectStmt)
	if !ok {
		st.NotAggregate, st.RowsRefusal = msgSetOp, msgSetOp
		return st
	}
	if len(r.rels) == 0 {
		st.Local = myLocal(s)
	}
	rows, err := (&myQueryBuilder{params: params}).rows(s)
	rowsResult(&st, rows, err)
	q, err := (&myQueryBuilder{params: params}).query(s)
	if err != nil {
		st.NotAggregate, st.Ungrouped = err.Error(), ungroupedQuery(err)
		return st
	}
	st.Query = foldTimeConsts(q, true)
	return st
}

func myExplain(x *ast.ExplainStmt) ir.Statement {
	if show, ok := x.Stmt.(*ast.ShowStmt); ok { // DESCRIBE t
		return myShow(show)
	}
	if x.Stmt == nil {
		return refusedStmt(notSupported("EXPLAIN of this statement"))
	}
	inner := myStatement(x.Stmt)
	if inner.Kind == ir.StmtRefused {
		return inner
	}
	if inner.Kind != ir.StmtSelect {
		return refusedStmt(notSupported("EXPLAIN of this statement"))
	}
	return ir.Statement{Kind: ir.StmtExplain, Explain: &inner, Analyze: x.Analyze}
}

// myShow maps the SHOW statements the MySQL front end answers from its own
// catalog. Settings[0] names what is shown; its Value is the LIKE pattern
// (variables, status, tables, ...) or the table (columns, index, create
// table). Extra entries carry "database" (SHOW TABLES FROM db), "like"
// (SHOW COLUMNS ... LIKE) and "column" (DESCRIBE t col).
func myShow(x *ast.ShowStmt) ir.Statement {
	var where []ir.Setting
	if x.Where != nil {
		// Connector/J 5.1 reads its variables with SHOW VARIABLES WHERE
		// Variable_name = 'a' OR Variable_name = 'b' ...: conditions on
		// the name become LIKE patterns; anything else is refused.
		pats, ok := myNameConditions(x.Where)
		if !ok || (x.Tp != ast.ShowVariables && x.Tp != ast.ShowStatus) {
			return refusedStmt(notSupported("SHOW ... WHERE other than on Variable_name (use SHOW ... LIKE 'pattern')"))
		}
		for _, p := range pats {
			where = append(where, ir.Setting{Name: "name like", Value: p})
		}
	}
	pattern := ""
	if x.Pattern != nil {
		if ve, ok := x.Pattern.Pattern.(*test_driver.ValueExpr); ok && ve.Kind() == test_driver.KindString {
			pattern = ve.GetString()
		} else {
			return refusedStmt(notSupported("SHOW ... LIKE with a non-constant pattern"))
		}
	}
	scope := ""
	if x.GlobalScope {
		scope = "global"
	}
	table := ""
	if x.Table != nil {
		table = x.Table.Name.O
		db := x.Table.Schema.O
		if db == "" {
			db = x.DBName
		}
		if db != "" {
			table = db + "." + table
		}
	}
	simple := map[ast.ShowStmtType]string{
		ast.ShowVariables: "variables", ast.ShowStatus: "status", ast.ShowWarnings: "warnings",
		ast.ShowErrors: "errors", ast.ShowEngines: "engines", ast.ShowCollation: "collation",
		ast.ShowCharset: "charset", ast.ShowDatabases: "databases",
	}
	if name, ok := simple[x.Tp]; ok {
		return sessionStmt(ir.SessionShow, append([]ir.Setting{{Name: name, Value: pattern, Scope: scope}}, where...)...)
	}
	switch x.Tp {
	case ast.ShowTables:
		s := []ir.Setting{{Name: "tables", Value: pattern}}
		if x.DBName != "" {
			s = append(s, ir.Setting{Name: "database", Value: x.DBName})
		}
		return showFull(x.Full, s)
	case ast.ShowColumns, ast.ShowIndex, ast.ShowCreateTable:
		name := map[ast.ShowStmtType]string{ast.ShowColumns: "columns", ast.ShowIndex: "index", ast.ShowCreateTable: "create table"}[x.Tp]
		s := []ir.Setting{{Name: name, Value: table}}
		if pattern != "" {
			s = append(s, ir.Setting{Name: "like", Value: pattern})
		}
		if x.Column != nil {
			s = append(s, ir.Setting{Name: "column", Value: x.Column.Name.O})
		}
		return showFull(x.Full, s)
	}
	// SHOW TABLE STATUS, SHOW INDEX statistics and the like expose row
	// counts and sizes, which are private: refuse everything not listed.
	return refusedStmt(notSupported("this SHOW statement"))
}

// myNameConditions reads a SHOW ... WHERE made of Variable_name = 'x',
// Variable_name LIKE 'p' and Variable_name IN ('x', ...) joined by OR, as
// LIKE patterns (case-insensitive, as the name's collation compares).
func myNameConditions(e ast.ExprNode) ([]string, bool) {
	isName := func(e ast.ExprNode) bool {
		c, ok := e.(*ast.ColumnNameExpr)
		return ok && c.Name.Table.O == "" && c.Name.Name.L == "variable_name"
	}
	str := func(e ast.ExprNode) (string, bool) {
		v, ok := e.(*test_driver.ValueExpr)
		if !ok || v.Kind() != test_driver.KindString {
			return "", false
		}
		return v.GetString(), true
	}
	exact := func(s string) string {
		return strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(s)
	}
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		return myNameConditions(x.Expr)
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.LogicOr:
			l, ok := myNameConditions(x.L)
			if !ok {
				return nil, false
			}
			r, ok := myNameConditions(x.R)
			return append(l, r...), ok
		case opcode.EQ:
			if v, ok := str(x.R); ok && isName(x.L) {
				return []string{exact(v)}, true
			}
		}
	case *ast.PatternLikeOrIlikeExpr:
		if v, ok := str(x.Pattern); ok && isName(x.Expr) && !x.Not && (x.Escape == '\\' || x.Escape == 0) {
			return []string{v}, true
		}
	case *ast.PatternInExpr:
		if x.Not || x.Sel != nil || !isName(x.Expr) {
			return nil, false
		}
		var out []string
		for _, it := range x.List {
			v, ok := str(it)
			if !ok {
				return nil, false
			}
			out = append(out, exact(v))
		}
		return out, true
	}
	return nil, false
}

// showFull is a SHOW statement with its FULL flag.
func showFull(full bool, settings []ir.Setting) ir.Statement {
	st := sessionStmt(ir.SessionShow, settings...)
	st.Session.Full = full
	return st
}

func mySet(x *ast.SetStmt) ir.Statement {
	verb := ir.SessionSet
	settings := make([]ir.Setting, 0, len(x.Variables))
	for _, v := range x.Variables {
		s := ir.Setting{Name: strings.ToLower(v.Name)}
		switch {
		case v.Name == ast.SetNames:
			s.Name = "names"
		case v.Name == ast.SetCharset:
			s.Name = "charset"
		case v.Name == "tx_isolation_one_shot":
			// SET TRANSACTION ISOLATION LEVEL: the next transaction only.
			s.Name, verb = "transaction_isolation", ir.SessionOther
		case v.IsGlobal || v.IsInstance:
			s.Scope = "global"
		case !v.IsSystem:
			s.Scope = "user"
		}
		if _, ok := v.Value.(*ast.DefaultExpr); ok || v.Value == nil {
			s.Default = true
		} else if val, ok := mySetAppend(s, v.Value); ok {
			s.Value, s.Append = val, true
		} else {
			val, ok := mySetValue(v.Value)
			if !ok {
				// A subquery or function here would read data (even
				// private tables) outside the aggregate path.
				return refusedStmt(sqlerr.New(sqlerr.FeatureNotSupported, "SET %s: only constant values are supported", s.Name))
			}
			s.Value = val
		}
		settings = append(settings, s)
		if v.ExtendValue != nil {
			if val, ok := mySetValue(v.ExtendValue); ok {
				settings = append(settings, ir.Setting{Name: "collation_connection", Value: val})
			}
		}
	}
	return sessionStmt(verb, settings...)
}

// mySetAppend reads SET x = CONCAT(@@x, 'constant'...), which Connector/J
// and MariaDB Connector/J send for sql_mode on connect: the constants,
// to be appended to the variable's current value. ok is false for any
// other value.
func mySetAppend(s ir.Setting, e ast.ExprNode) (string, bool) {
	f, ok := e.(*ast.FuncCallExpr)
	if !ok || f.FnName.L != "concat" || len(f.Args) < 2 || s.Scope == "user" {
		return "", false
	}
	cur, ok := f.Args[0].(*ast.VariableExpr)
	if !ok || !cur.IsSystem || cur.IsGlobal || cur.IsInstance || cur.Value != nil || !strings.EqualFold(cur.Name, s.Name) {
		return "", false
	}
	var b strings.Builder
	for _, a := range f.Args[1:] {
		ve, ok := a.(*test_driver.ValueExpr)
		if !ok || ve.Kind() != test_driver.KindString {
			return "", false
		}
		b.WriteString(ve.GetString())
	}
	return b.String(), true
}

// mySetValue renders a constant SET value; ok is false for anything else.
func mySetValue(e ast.ExprNode) (string, bool) {
	switch x := e.(type) {
	case *test_driver.ValueExpr:
		switch x.Kind() {
		case test_driver.KindString, test_driver.KindBytes:
			return x.GetString(), true
		case test_driver.KindInt64:
			return strconv.FormatInt(x.GetInt64(), 10), true
		case test_driver.KindUint64:
			return strconv.FormatUint(x.GetUint64(), 10), true
		case test_driver.KindFloat64, test_driver.KindFloat32:
			return strconv.FormatFloat(x.GetFloat64(), 'g', -1, 64), true
		case test_driver.KindMysqlDecimal:
			return x.GetMysqlDecimal().String(), true
		case test_driver.KindNull:
			return "", true
		}
	case *ast.ColumnNameExpr: // SET x = ON, SET sql_mode = ANSI
		if x.Name.Table.O == "" {
			return x.Name.Name.O, true
		}
	case *ast.UnaryOperationExpr:
		if x.Op == opcode.Minus {
			if v, ok := mySetValue(x.V); ok {
				return "-" + v, true
			}
		}
	}
	return "", false
}
