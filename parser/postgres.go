package parser

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// parsePostgres parses with PostgreSQL's own grammar (libpg_query), so that
// whatever PostgreSQL would accept is classified by what it is, not by
// what a look-alike grammar guesses.
func parsePostgres(sql string) ([]ir.Statement, error) {
	res, err := pgParse(sql)
	if err != nil {
		return nil, pgSyntaxError(err)
	}
	return pgStatements(sql, res), nil
}

// pgStatements classifies the statements of sql's tree. It reads the tree
// and never changes it (the shape cache reuses trees).
func pgStatements(sql string, res *pg.ParseResult) []ir.Statement {
	out := make([]ir.Statement, 0, len(res.Stmts))
	for _, raw := range res.Stmts {
		st := pgStatement(raw.Stmt)
		st.Text = pgStmtText(sql, raw.StmtLocation, raw.StmtLen)
		out = append(out, st)
	}
	return out
}

// pgParse calls the grammar, turning a panic inside the third-party code
// into a syntax error so one bad query cannot take a connection down.
func pgParse(sql string) (res *pg.ParseResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, &grammarPanic{value: r}
		}
	}()
	return pg.Parse(sql)
}

// pgStmtText cuts one statement out of the query string. libpg_query gives
// byte offsets; a length of 0 means "to the end of the string".
func pgStmtText(sql string, loc, n int32) string {
	start, end := int(loc), len(sql)
	if n > 0 {
		end = start + int(n)
	}
	if start < 0 || start > len(sql) || end > len(sql) || end < start {
		return trimStatement(sql)
	}
	return trimStatement(sql[start:end])
}

func pgSyntaxError(err error) error {
	var pe *pgparser.Error
	if errors.As(err, &pe) {
		msg := pe.Message
		if pe.Cursorpos > 0 {
			msg = fmt.Sprintf("%s (at character %d)", msg, pe.Cursorpos)
		}
		return sqlerr.Wrap(sqlerr.SyntaxError, err, msg)
	}
	return sqlerr.Wrap(sqlerr.SyntaxError, err, "syntax error")
}

func refusedStmt(e *sqlerr.Error) ir.Statement {
	return ir.Statement{Kind: ir.StmtRefused, Refused: e}
}

func sessionStmt(verb ir.SessionVerb, settings ...ir.Setting) ir.Statement {
	return ir.Statement{Kind: ir.StmtSession, Session: &ir.Session{Verb: verb, Settings: settings}}
}

// pgStatement classifies one raw statement. Unknown node types fall
// through to a refusal: classification fails closed.
func pgStatement(n *pg.Node) ir.Statement {
	switch x := n.GetNode().(type) {
	case *pg.Node_SelectStmt:
		return pgSelect(n, x.SelectStmt)
	case *pg.Node_ExplainStmt:
		return pgExplain(x.ExplainStmt)
	case *pg.Node_VariableSetStmt:
		return pgSet(x.VariableSetStmt)
	case *pg.Node_VariableShowStmt:
		return sessionStmt(ir.SessionShow, ir.Setting{Name: strings.ToLower(x.VariableShowStmt.Name)})
	case *pg.Node_TransactionStmt:
		return pgTransaction(x.TransactionStmt)
	case *pg.Node_DiscardStmt:
		target := strings.ToLower(strings.TrimPrefix(x.DiscardStmt.Target.String(), "DISCARD_"))
		return sessionStmt(ir.SessionOther, ir.Setting{Name: "discard", Value: target})
	case *pg.Node_DeallocateStmt:
		name := x.DeallocateStmt.Name
		if x.DeallocateStmt.Isall || name == "" {
			name = "all"
		}
		return sessionStmt(ir.SessionOther, ir.Setting{Name: "deallocate", Value: name})
	case *pg.Node_ListenStmt:
		return sessionStmt(ir.SessionOther, ir.Setting{Name: "listen", Value: x.ListenStmt.Conditionname})
	case *pg.Node_UnlistenStmt:
		ch := x.UnlistenStmt.Conditionname
		if ch == "" {
			ch = "*"
		}
		return sessionStmt(ir.SessionOther, ir.Setting{Name: "unlisten", Value: ch})
	case *pg.Node_CopyStmt:
		return refusedStmt(copyRefused())
	case *pg.Node_DeclareCursorStmt:
		return pgDeclareCursor(x.DeclareCursorStmt)
	case *pg.Node_FetchStmt:
		return pgFetch(x.FetchStmt)
	case *pg.Node_ClosePortalStmt:
		return ir.Statement{Kind: ir.StmtCursor, Cursor: &ir.Cursor{Verb: ir.CursorClose, Name: x.ClosePortalStmt.Portalname}}
	case nil:
		return refusedStmt(notSupported("this statement"))
	}
	return refusedStmt(pgRefusal(n))
}

// pgSelect lists everything the SELECT reads and, when it fits, builds the
// aggregate Query.
func pgSelect(n *pg.Node, s *pg.SelectStmt) ir.Statement {
	r := pgCollect(n)
	if r.refused != nil {
		return refusedStmt(r.refused)
	}
	st := ir.Statement{Kind: ir.StmtSelect, Relations: r.rels, Functions: r.funcs, NumParams: r.params, OutputNames: pgOutputNames(s)}
	if len(r.rels) == 0 {
		st.Local = pgLocal(s)
	} else {
		st.PsqlList = pgPsqlList(s, r.rels)
	}
	rows, err := pgRows(s)
	rowsResult(&st, rows, err)
	q, err := pgQuery(s)
	if err != nil {
		st.NotAggregate, st.Ungrouped = err.Error(), ungroupedQuery(err)
		return st
	}
	st.Query = foldTimeConsts(q, false)
	return st
}

func pgExplain(e *pg.ExplainStmt) ir.Statement {
	analyze := false
	for _, o := range e.Options {
		d := o.GetDefElem()
		if d != nil && d.Defname == "analyze" {
			analyze = pgDefBool(d.Arg)
		}
	}
	if e.Query == nil {
		return refusedStmt(notSupported("EXPLAIN of this statement"))
	}
	inner := pgStatement(e.Query)
	if inner.Kind == ir.StmtRefused {
		// EXPLAIN ANALYZE runs its statement, and a plain EXPLAIN of a
		// write is still not something the proxy forwards.
		return inner
	}
	if inner.Kind != ir.StmtSelect {
		return refusedStmt(notSupported("EXPLAIN of this statement"))
	}
	return ir.Statement{Kind: ir.StmtExplain, Explain: &inner, Analyze: analyze}
}

// PostgreSQL's cursor option bits (nodes/parsenodes.h).
const (
	pgCursorBinary = 0x0001
	pgCursorHold   = 0x0020
)

// pgVersion is the parse tree version libpg_query deparses (its own).
var pgVersion = sync.OnceValues(func() (int32, error) {
	r, err := pg.Parse("SELECT 1")
	if err != nil {
		return 0, err
	}
	return r.Version, nil
})

// pgDeclareCursor reads DECLARE name CURSOR FOR query. The query is
// classified like any statement; its text, which the planner forwards for
// catalog pass-through, is PostgreSQL's own deparse of it.
func pgDeclareCursor(d *pg.DeclareCursorStmt) ir.Statement {
	if d.Options&pgCursorBinary != 0 {
		return refusedStmt(notSupported("DECLARE BINARY CURSOR"))
	}
	if d.Query == nil {
		return refusedStmt(notSupported("DECLARE CURSOR of this statement"))
	}
	inner := pgStatement(d.Query)
	if inner.Kind == ir.StmtRefused {
		return inner // FOR UPDATE and the like: refused as they are alone
	}
	if inner.Kind == ir.StmtSelect {
		version, err := pgVersion()
		text := ""
		if err == nil {
			text, err = pg.Deparse(&pg.ParseResult{Version: version, Stmts: []*pg.RawStmt{{Stmt: d.Query}}})
		}
		if err != nil {
			return refusedStmt(notSupported("DECLARE CURSOR of this query"))
		}
		inner.Text = text
	} else {
		return refusedStmt(notSupported("DECLARE CURSOR of a statement other than SELECT"))
	}
	return ir.Statement{Kind: ir.StmtCursor, Cursor: &ir.Cursor{
		Verb: ir.CursorDeclare, Name: d.Portalname, Query: &inner, Hold: d.Options&pgCursorHold != 0}}
}

// pgFetch reads FETCH and MOVE.
func pgFetch(f *pg.FetchStmt) ir.Statement {
	c := &ir.Cursor{Verb: ir.CursorFetch, Name: f.Portalname, Count: f.HowMany}
	if f.Ismove {
		c.Verb = ir.CursorMove
	}
	switch f.Direction {
	case pg.FetchDirection_FETCH_BACKWARD:
		c.Direction = ir.FetchBackward
	case pg.FetchDirection_FETCH_ABSOLUTE:
		c.Direction = ir.FetchAbsolute
	case pg.FetchDirection_FETCH_RELATIVE:
		c.Direction = ir.FetchRelative
	default:
		c.Direction = ir.FetchForward
	}
	return ir.Statement{Kind: ir.StmtCursor, Cursor: c}
}

// pgDefBool reads an option value the way PostgreSQL's defGetBoolean does:
// no value means true.
func pgDefBool(arg *pg.Node) bool {
	if arg == nil {
		return true
	}
	switch v := arg.GetNode().(type) {
	case *pg.Node_String_:
		switch strings.ToLower(v.String_.Sval) {
		case "false", "off", "0", "no":
			return false
		}
		return true
	case *pg.Node_Integer:
		return v.Integer.Ival != 0
	case *pg.Node_Boolean:
		return v.Boolean.Boolval
	case *pg.Node_AConst:
		if b, ok := v.AConst.Val.(*pg.A_Const_Boolval); ok {
			return b.Boolval.Boolval
		}
		if i, ok := v.AConst.Val.(*pg.A_Const_Ival); ok {
			return i.Ival.Ival != 0
		}
	}
	// An unrecognised value: assume the statement would run (the unsafe
	// reading for a planner that treats ANALYZE as execution).
	return true
}

func pgSet(s *pg.VariableSetStmt) ir.Statement {
	name := strings.ToLower(s.Name)
	scope := ""
	if s.IsLocal {
		scope = "local"
	}
	switch s.Kind {
	case pg.VariableSetKind_VAR_SET_VALUE:
		vals := make([]string, 0, len(s.Args))
		for _, a := range s.Args {
			v, ok := pgSetValue(a)
			if !ok {
				return refusedStmt(sqlerr.New(sqlerr.FeatureNotSupported, "SET %s: only constant values are supported", name))
			}
			vals = append(vals, v)
		}
		return sessionStmt(ir.SessionSet, ir.Setting{Name: name, Value: strings.Join(vals, ", "), Scope: scope})
	case pg.VariableSetKind_VAR_SET_DEFAULT:
		return sessionStmt(ir.SessionSet, ir.Setting{Name: name, Default: true, Scope: scope})
	case pg.VariableSetKind_VAR_SET_MULTI:
		// SET TRANSACTION ... / SET SESSION CHARACTERISTICS AS TRANSACTION.
		return sessionStmt(ir.SessionOther, ir.Setting{Name: name, Scope: scope})
	case pg.VariableSetKind_VAR_RESET:
		return sessionStmt(ir.SessionReset, ir.Setting{Name: name})
	case pg.VariableSetKind_VAR_RESET_ALL:
		return sessionStmt(ir.SessionReset, ir.Setting{Name: "all"})
	}
	return refusedStmt(notSupported("SET ... FROM CURRENT"))
}

// pgSetValue renders one SET argument: the grammar allows only constants,
// and INTERVAL '...' (a cast of one) for SET TIME ZONE.
func pgSetValue(n *pg.Node) (string, bool) {
	switch v := n.GetNode().(type) {
	case *pg.Node_AConst:
		switch c := v.AConst.Val.(type) {
		case *pg.A_Const_Sval:
			return c.Sval.Sval, true
		case *pg.A_Const_Ival:
			return strconv.FormatInt(int64(c.Ival.Ival), 10), true
		case *pg.A_Const_Fval:
			return c.Fval.Fval, true
		case *pg.A_Const_Boolval:
			return strconv.FormatBool(c.Boolval.Boolval), true
		}
	case *pg.Node_TypeCast:
		return pgSetValue(v.TypeCast.Arg)
	}
	return "", false
}

func pgTransaction(t *pg.TransactionStmt) ir.Statement {
	switch t.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_BEGIN, pg.TransactionStmtKind_TRANS_STMT_START:
		return sessionStmt(ir.SessionBegin)
	case pg.TransactionStmtKind_TRANS_STMT_COMMIT:
		return sessionStmt(ir.SessionCommit)
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		return sessionStmt(ir.SessionRollback)
	case pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
		return sessionStmt(ir.SessionOther, ir.Setting{Name: "savepoint", Value: t.SavepointName})
	case pg.TransactionStmtKind_TRANS_STMT_RELEASE:
		return sessionStmt(ir.SessionOther, ir.Setting{Name: "release savepoint", Value: t.SavepointName})
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		return sessionStmt(ir.SessionOther, ir.Setting{Name: "rollback to savepoint", Value: t.SavepointName})
	}
	return refusedStmt(notSupported("two-phase commit (PREPARE TRANSACTION, COMMIT PREPARED, ROLLBACK PREPARED)"))
}

// pgRefusal names a statement the proxy does not run, from the name of its
// parse node ("alter_table_stmt" → "ALTER TABLE"), so that new statement
// types added to PostgreSQL are refused with a sensible message too.
func pgRefusal(n *pg.Node) *sqlerr.Error {
	m := n.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("node"))
	if fd == nil {
		return notSupported("this statement")
	}
	name := strings.TrimSuffix(string(fd.Name()), "_stmt")
	verb := strings.ToUpper(strings.ReplaceAll(name, "_", " "))
	switch x := n.GetNode().(type) {
	case *pg.Node_CreateStmt:
		verb = "CREATE TABLE"
	case *pg.Node_IndexStmt:
		verb = "CREATE INDEX"
	case *pg.Node_ViewStmt:
		verb = "CREATE VIEW"
	case *pg.Node_DefineStmt:
		verb = "CREATE"
	case *pg.Node_RenameStmt:
		verb = "ALTER ... RENAME"
	case *pg.Node_CreateTableAsStmt:
		verb = "CREATE TABLE AS"
	case *pg.Node_CreatedbStmt:
		verb = "CREATE DATABASE"
	case *pg.Node_DropdbStmt:
		verb = "DROP DATABASE"
	case *pg.Node_GrantStmt:
		if !x.GrantStmt.IsGrant {
			verb = "REVOKE"
		}
	case *pg.Node_GrantRoleStmt:
		verb = "GRANT"
		if !x.GrantRoleStmt.IsGrant {
			verb = "REVOKE"
		}
	case *pg.Node_VacuumStmt:
		verb = "VACUUM"
		if !x.VacuumStmt.IsVacuumcmd {
			verb = "ANALYZE"
		}
	case *pg.Node_CheckPointStmt:
		verb = "CHECKPOINT"
	case *pg.Node_ExecuteStmt:
		verb = "EXECUTE (SQL-level prepared statements)"
	case *pg.Node_PrepareStmt:
		verb = "PREPARE (SQL-level prepared statements; use the protocol's extended query instead)"
	}
	// Parse-node name prefixes of statements that change data, schema,
	// privileges or table maintenance state.
	writes := []string{
		"insert", "update", "delete", "merge", "truncate", "create", "alter", "drop",
		"grant", "rename", "comment", "reindex", "vacuum", "cluster", "refresh",
		"sec_label", "import_foreign", "define", "composite_type", "rule", "view",
		"index", "reassign", "lock", "createdb", "dropdb", "replica",
	}
	for _, p := range writes {
		if strings.HasPrefix(name, p) {
			return readOnly(verb)
		}
	}
	return notSupported(verb)
}

// pgOutputNames names the result columns the way PostgreSQL does for the
// common cases: the alias, else a column reference's last field, else the
// function name, else "?column?". It returns nil for SELECT * and set
// operations, whose columns depend on the catalog.
func pgOutputNames(s *pg.SelectStmt) []string {
	if s == nil || s.Op != pg.SetOperation_SETOP_NONE || len(s.TargetList) == 0 {
		return nil
	}
	names := make([]string, 0, len(s.TargetList))
	for _, t := range s.TargetList {
		rt := t.GetResTarget()
		if rt == nil {
			return nil
		}
		if rt.Name != "" {
			names = append(names, rt.Name)
			continue
		}
		name := "?column?"
		switch v := rt.Val.GetNode().(type) {
		case *pg.Node_ColumnRef:
			f := v.ColumnRef.Fields
			last := f[len(f)-1]
			if last.GetAStar() != nil {
				return nil
			}
			name = last.GetString_().GetSval()
		case *pg.Node_FuncCall:
			fn := v.FuncCall.Funcname
			name = fn[len(fn)-1].GetString_().GetSval()
		case *pg.Node_TypeCast:
			if c := v.TypeCast.Arg.GetColumnRef(); c != nil {
				name = c.Fields[len(c.Fields)-1].GetString_().GetSval()
			}
		}
		names = append(names, name)
	}
	return names
}
