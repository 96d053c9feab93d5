package emulated

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// translated is a client query rewritten for the catalog's SQLite.
type translated struct {
	sql string
	// consts are the client's string constants, bound as parameters
	// $constBase+1... (SQLite knows neither E'' strings nor PostgreSQL's
	// escapes; binding sidesteps quoting altogether).
	consts    []string
	constBase int
	// colTypes is the PostgreSQL type of each select-list item where the
	// expression alone decides it ("" otherwise): booleans that SQLite
	// computes as 0/1, count(*), casts, text functions. It makes a
	// Describe (run with NULL parameters, often no rows) agree with the
	// execution. nil when a * makes positions unknown.
	colTypes []string
}

// translate parses a PostgreSQL query and rewrites it for SQLite.
func (c *Catalog) translate(text string, nArgs int) (q *translated, err error) {
	defer func() {
		if r := recover(); r != nil {
			q, err = nil, c.unavailable(fmt.Sprintf("this query (%v)", r))
		}
	}()
	tree, err := pg.Parse(text)
	if err != nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%v", err)
	}
	if len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil {
		return nil, c.unavailable("statements other than one SELECT")
	}
	top := tree.Stmts[0].Stmt
	w := &rewriter{c: c, ctes: map[string]bool{}, asName: map[*pg.TypeCast]bool{}}
	w.constBase = max(nArgs, maxParam(top))
	w.prepass(top)
	nameTargets(top.GetSelectStmt())
	// A CTE's or subquery's columns are referred to by PostgreSQL's names
	// for them too (pgcli's casing query orders its CTE by "count").
	visit(top.ProtoReflect(), func(n *pg.Node) {
		if s := n.GetSelectStmt(); s != nil {
			nameTargets(s)
		}
	})
	colTypes := targetTypes(top.GetSelectStmt())
	w.walk(top.ProtoReflect())
	if w.err != nil {
		return nil, w.err
	}
	tree.Stmts = []*pg.RawStmt{{Stmt: top}}
	sql, err := pg.Deparse(tree)
	if err != nil {
		return nil, c.unavailable(fmt.Sprintf("this query (%v)", err))
	}
	return &translated{sql: sql, consts: w.consts, constBase: w.constBase, colTypes: colTypes}, nil
}

type rewriter struct {
	c         *Catalog
	err       error
	ctes      map[string]bool
	asName    map[*pg.TypeCast]bool // reg* casts whose value is shown, not compared
	consts    []string
	constBase int
	aliasSeq  int
}

func (w *rewriter) fail(format string, args ...any) {
	if w.err == nil {
		w.err = w.c.unavailable(fmt.Sprintf(format, args...))
	}
}

// visit calls fn on every Node of m, parents before children.
func visit(m protoreflect.Message, fn func(*pg.Node)) {
	if n, ok := m.Interface().(*pg.Node); ok {
		fn(n)
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				visit(l.Get(i).Message(), fn)
			}
		case fd.IsMap():
		case fd.Message() != nil:
			visit(v.Message(), fn)
		}
		return true
	})
}

func maxParam(top *pg.Node) int {
	n := 0
	visit(top.ProtoReflect(), func(x *pg.Node) {
		if p := x.GetParamRef(); p != nil {
			n = max(n, int(p.Number))
		}
	})
	return n
}

// prepass records CTE names and the reg* casts whose result is displayed
// (a select-list item, an ORDER BY key, or cast on to text): those become
// names, the others OIDs.
func (w *rewriter) prepass(top *pg.Node) {
	visit(top.ProtoReflect(), func(n *pg.Node) {
		switch x := n.Node.(type) {
		case *pg.Node_CommonTableExpr:
			w.ctes[strings.ToLower(x.CommonTableExpr.Ctename)] = true
		case *pg.Node_ResTarget:
			if tc := x.ResTarget.GetVal().GetTypeCast(); tc != nil {
				w.asName[tc] = true
			}
		case *pg.Node_SortBy:
			if tc := x.SortBy.GetNode().GetTypeCast(); tc != nil {
				w.asName[tc] = true
			}
		case *pg.Node_TypeCast:
			if isTextType(typeNameOf(x.TypeCast.TypeName)) {
				if inner := x.TypeCast.GetArg().GetTypeCast(); inner != nil {
					w.asName[inner] = true
				}
			}
		}
	})
}

// walk rewrites bottom-up: children first, then the node itself.
func (w *rewriter) walk(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				w.walk(l.Get(i).Message())
			}
		case fd.IsMap():
		case fd.Message() != nil:
			w.walk(v.Message())
		}
		return w.err == nil
	})
	if w.err != nil {
		return
	}
	switch x := m.Interface().(type) {
	case *pg.Node:
		w.node(x)
	case *pg.SelectStmt:
		// Also reached for set operations' Larg/Rarg, which are not Nodes.
		w.selectStmt(x)
	}
}

func strs(nodes []*pg.Node) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		if s := n.GetString_(); s != nil {
			out = append(out, s.Sval)
		}
	}
	return out
}

func typeNameOf(t *pg.TypeName) string {
	if t == nil {
		return ""
	}
	names := strs(t.Names)
	if len(names) == 0 {
		return ""
	}
	n := strings.ToLower(names[len(names)-1])
	if len(t.ArrayBounds) > 0 {
		return n + "[]"
	}
	return n
}

func isTextType(t string) bool {
	switch t {
	case "text", "varchar", "name", "char", "bpchar", "citext":
		return true
	}
	return false
}

func call(name string, args ...*pg.Node) *pg.Node {
	for _, a := range args {
		if a == nil || a.Node == nil {
			// A missing operand would crash the deparser (C code): the
			// callers check operands first; this is the last line.
			panic("emulated: missing argument to " + name)
		}
	}
	return pg.MakeFuncCallNode([]*pg.Node{pg.MakeStrNode(name)}, args, -1)
}

func colRef(fields ...string) *pg.Node {
	nodes := make([]*pg.Node, len(fields))
	for i, f := range fields {
		nodes[i] = pg.MakeStrNode(f)
	}
	return pg.MakeColumnRefNode(nodes, -1)
}

func (w *rewriter) node(n *pg.Node) {
	switch x := n.Node.(type) {
	case *pg.Node_RangeVar:
		w.rangeVar(x.RangeVar)
	case *pg.Node_ColumnRef:
		f := x.ColumnRef.Fields
		if len(f) == 3 && strings.EqualFold(f[0].GetString_().GetSval(), "pg_catalog") {
			x.ColumnRef.Fields = f[1:]
		}
		if len(f) > 3 {
			w.fail("column references with a database name")
		}
	case *pg.Node_AConst:
		if s := x.AConst.GetSval(); s != nil && !x.AConst.Isnull {
			w.consts = append(w.consts, s.Sval)
			n.Node = pg.MakeParamRefNode(int32(w.constBase+len(w.consts)), -1).Node
		}
		if x.AConst.GetBsval() != nil {
			w.fail("bit-string constants")
		}
	case *pg.Node_FuncCall:
		w.funcCall(n, x.FuncCall)
	case *pg.Node_AExpr:
		w.aExpr(n, x.AExpr)
	case *pg.Node_TypeCast:
		w.typeCast(n, x.TypeCast)
	case *pg.Node_CollateClause:
		n.Node = x.CollateClause.Arg.Node
	case *pg.Node_AArrayExpr:
		n.Node = call("pg_json_array", x.AArrayExpr.Elements...).Node
	case *pg.Node_AIndirection:
		ind := x.AIndirection.Indirection
		if len(ind) == 1 && ind[0].GetString_() != nil {
			// (composite).field: only the rows of set-returning functions
			// are composite here, and pg_field reads their JSON objects.
			w.consts = append(w.consts, ind[0].GetString_().Sval)
			n.Node = call("pg_field", x.AIndirection.Arg, pg.MakeParamRefNode(int32(w.constBase+len(w.consts)), -1)).Node
			return
		}
		if len(ind) != 1 || ind[0].GetAIndices() == nil || ind[0].GetAIndices().IsSlice {
			w.fail("field selection or array slices")
			return
		}
		n.Node = call("pg_array_elem", x.AIndirection.Arg, ind[0].GetAIndices().Uidx).Node
	case *pg.Node_SqlvalueFunction:
		name := map[pg.SQLValueFunctionOp]string{
			pg.SQLValueFunctionOp_SVFOP_CURRENT_USER: "pg_current_user", pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE: "pg_current_user",
			pg.SQLValueFunctionOp_SVFOP_USER: "pg_current_user", pg.SQLValueFunctionOp_SVFOP_SESSION_USER: "pg_current_user",
			pg.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG: "current_database", pg.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA: "current_schema",
			pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP: "pg_now", pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N: "pg_now",
			pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP: "pg_localtimestamp", pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N: "pg_localtimestamp",
			pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE: "pg_current_date",
		}[x.SqlvalueFunction.Op]
		if name == "" {
			w.fail("date and time functions")
			return
		}
		n.Node = call(name).Node
	case *pg.Node_SubLink:
		w.subLink(n, x.SubLink)
	case *pg.Node_RangeTableSample, *pg.Node_XmlExpr, *pg.Node_XmlSerialize, *pg.Node_GroupingSet,
		*pg.Node_JsonObjectConstructor, *pg.Node_JsonArrayConstructor, *pg.Node_RangeTableFunc:
		w.fail("this construct")
	}
}

func (w *rewriter) rangeVar(r *pg.RangeVar) {
	schema, name := strings.ToLower(r.Schemaname), strings.ToLower(r.Relname)
	if r.Catalogname != "" {
		w.fail("relations qualified with a database name")
		return
	}
	if schema == "" && w.ctes[name] {
		return
	}
	rel, ok := lookupRelation(schema, name)
	if !ok {
		if schema == "" {
			w.fail("queries over %s (only the emulated pg_catalog and information_schema relations can be read here)", name)
		} else {
			w.fail("queries over %s.%s (it is not emulated)", schema, name)
		}
		return
	}
	r.Schemaname, r.Relname = rel.schema, rel.name
}

// setReturning are the set-returning functions allowed in FROM.
var setReturning = map[string]bool{"unnest": true, "generate_series": true, "generate_subscripts": true, "_pg_expandarray": true,
	// pgcli's keyword-casing query splits function bodies in its select
	// list; pg_proc is empty here, so its stand-in is never evaluated.
	"regexp_split_to_table": true}

// functions maps each allowed PostgreSQL function to its SQLite name
// (a builtin with the same meaning or a Go function from funcs.go).
var functions = map[string]string{
	// SQLite builtins with PostgreSQL's meaning.
	"lower": "lower", "upper": "upper", "length": "length", "char_length": "length", "character_length": "length",
	"coalesce": "coalesce", "nullif": "nullif", "abs": "abs", "replace": "replace", "substr": "substr",
	"substring": "substr", "ltrim": "ltrim", "rtrim": "rtrim", "btrim": "trim", "count": "count", "sum": "sum",
	"min": "min", "max": "max", "avg": "avg", "row_number": "row_number", "rank": "rank", "dense_rank": "dense_rank",
	"string_agg": "group_concat", "array_agg": "json_group_array", "json_build_object": "json_object",
	"json_agg": "json_group_array", "concat": "concat", "concat_ws": "concat_ws", "round": "round",
	"greatest": "greatest", "least": "least", "bool_and": "min", "bool_or": "max", "every": "min",
	// PostgreSQL functions implemented in Go (funcs.go).
	"format_type": "format_type", "pg_get_expr": "pg_null", "pg_table_is_visible": "pg_table_is_visible",
	"pg_type_is_visible": "pg_true", "pg_function_is_visible": "pg_true", "pg_collation_is_visible": "pg_true",
	"pg_opclass_is_visible": "pg_true", "pg_ts_config_is_visible": "pg_true",
	"obj_description": "pg_null", "col_description": "pg_null", "shobj_description": "pg_null",
	"pg_get_userbyid": "pg_get_userbyid", "pg_encoding_to_char": "pg_encoding_to_char",
	"pg_char_to_encoding": "pg_char_to_encoding", "pg_get_indexdef": "pg_null", "pg_get_constraintdef": "pg_null",
	"pg_get_viewdef": "pg_null", "pg_get_triggerdef": "pg_null", "pg_get_ruledef": "pg_null",
	"pg_get_partkeydef": "pg_null", "pg_get_statisticsobjdef_columns": "pg_null", "pg_get_serial_sequence": "pg_null",
	"pg_get_function_arguments": "pg_null", "pg_get_function_result": "pg_null", "pg_get_partition_constraintdef": "pg_null",
	"pg_tablespace_location": "pg_empty", "pg_relation_is_publishable": "pg_false",
	"has_table_privilege": "pg_true", "has_schema_privilege": "pg_true", "has_database_privilege": "pg_true",
	"has_column_privilege": "pg_true", "has_any_column_privilege": "pg_true", "pg_has_role": "pg_true",
	"pg_table_size": "pg_null", "pg_relation_size": "pg_null", "pg_total_relation_size": "pg_null",
	"pg_indexes_size": "pg_null", "pg_database_size": "pg_null", "pg_size_pretty": "pg_null",
	"array_to_string": "array_to_string", "array_upper": "array_upper", "array_lower": "array_lower",
	"array_length": "array_length", "cardinality": "cardinality", "array_position": "array_position",
	"current_database": "current_database", "current_schema": "current_schema", "current_schemas": "current_schemas",
	"current_user": "pg_current_user", "session_user": "pg_current_user", "current_setting": "current_setting",
	"version": "pg_version", "pg_my_temp_schema": "pg_zero", "pg_is_other_temp_schema": "pg_false",
	"pg_backend_pid": "pg_zero", "quote_ident": "quote_ident", "pg_is_in_recovery": "pg_false",
	"left": "pg_left", "right": "pg_right", "split_part": "split_part", "position": "pg_position", "strpos": "pg_position",
	"regexp_replace": "regexp_replace", "to_regclass": "to_regclass",
	// Driver and BI-tool startup probes (psqlODBC, Tableau, Grafana,
	// Metabase): the connection's encoding, the clock, set_config.
	"pg_client_encoding": "pg_client_encoding", "now": "pg_now", "transaction_timestamp": "pg_now",
	"statement_timestamp": "pg_now", "clock_timestamp": "pg_now", "set_config": "pg_set_config",
	"pg_get_functiondef": "pg_null", "pg_get_function_identity_arguments": "pg_null",
	// Only as LIKE's ESCAPE clause (pattern, escape), which like() unpacks.
	"like_escape": "like_escape",
}

func (w *rewriter) funcCall(n *pg.Node, f *pg.FuncCall) {
	names := strs(f.Funcname)
	if len(names) == 2 && (strings.EqualFold(names[0], "pg_catalog") ||
		strings.EqualFold(names[0], "information_schema") && strings.EqualFold(names[1], "_pg_expandarray")) {
		names = names[1:]
	}
	if len(names) != 1 {
		w.fail("the function %s", strings.Join(names, "."))
		return
	}
	name := strings.ToLower(names[0])
	if f.FuncVariadic {
		w.fail("VARIADIC calls")
		return
	}
	if setReturning[name] {
		// Only in FROM (selectStmt turns it into json_each); anywhere else
		// the stand-in raises an error if it is ever evaluated.
		f.Funcname = []*pg.Node{pg.MakeStrNode("pg_srf_" + name)}
		return
	}
	to, ok := functions[name]
	if !ok {
		w.fail("the function %s()", name)
		return
	}
	f.Funcname = []*pg.Node{pg.MakeStrNode(to)}
	if name == "array_agg" {
		// An array prints as PostgreSQL prints it.
		inner := &pg.Node{Node: n.Node}
		n.Node = call("pg_array_from_json", inner).Node
	}
}

// regexOps and likeOps map PostgreSQL's pattern operators to Go functions
// (case-insensitive?, negated?).
var (
	regexOps = map[string][2]bool{"~": {false, false}, "~*": {true, false}, "!~": {false, true}, "!~*": {true, true}}
	likeOps  = map[string][2]bool{"~~": {false, false}, "~~*": {true, false}, "!~~": {false, true}, "!~~*": {true, true}}
	plainOps = map[string]bool{"=": true, "<>": true, "<": true, ">": true, "<=": true, ">=": true, "+": true, "-": true,
		"*": true, "/": true, "%": true, "||": true, "&": true, "|": true, "<<": true, ">>": true}
)

func not(x *pg.Node) *pg.Node {
	return pg.MakeBoolExprNode(pg.BoolExprType_NOT_EXPR, []*pg.Node{x}, -1)
}

func boolConst(b bool) *pg.Node {
	return &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Val: &pg.A_Const_Boolval{Boolval: &pg.Boolean{Boolval: b}}}}}
}

// opName strips pg_catalog from OPERATOR(pg_catalog.op).
func opName(names []*pg.Node) string {
	s := strs(names)
	if len(s) == 2 && strings.EqualFold(s[0], "pg_catalog") {
		s = s[1:]
	}
	if len(s) != 1 {
		return ""
	}
	return s[0]
}

func (w *rewriter) aExpr(n *pg.Node, e *pg.A_Expr) {
	op := opName(e.Name)
	switch e.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if e.Lexpr == nil || e.Rexpr == nil {
			// Prefix (and, defensively, postfix) operators: only signs.
			// Never hand the deparser a missing operand (it would crash).
			if e.Rexpr == nil || (op != "-" && op != "+") {
				w.fail("the prefix operator %s", op)
			}
			return
		}
		if m, ok := regexOps[op]; ok {
			r := call("pg_regex", e.Lexpr, e.Rexpr, boolConst(m[0]))
			if m[1] {
				r = not(r)
			}
			n.Node = r.Node
			return
		}
		if m, ok := likeOps[op]; ok {
			n.Node = w.like(e.Lexpr, e.Rexpr, m[0], m[1]).Node
			return
		}
		if !plainOps[op] {
			w.fail("the operator %s", op)
			return
		}
		e.Name = []*pg.Node{pg.MakeStrNode(op)}
		if op == "=" || op == "<>" {
			w.boolLiteral(e.Lexpr, e.Rexpr)
			w.boolLiteral(e.Rexpr, e.Lexpr)
		}
	case pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		m, ok := likeOps[op]
		if !ok {
			w.fail("the operator %s", op)
			return
		}
		n.Node = w.like(e.Lexpr, e.Rexpr, m[0], m[1]).Node
	case pg.A_Expr_Kind_AEXPR_OP_ANY:
		// x op ANY(array) → EXISTS (SELECT 1 FROM json_each(array) WHERE x op value)
		w.aliasSeq++
		alias := fmt.Sprintf("_any%d", w.aliasSeq)
		inner := pg.MakeAExprNode(pg.A_Expr_Kind_AEXPR_OP, []*pg.Node{pg.MakeStrNode(op)}, e.Lexpr, colRef(alias, "value"), -1)
		w.aExpr(inner, inner.GetAExpr())
		if w.err != nil {
			return
		}
		from := &pg.Node{Node: &pg.Node_RangeFunction{RangeFunction: &pg.RangeFunction{
			Functions: []*pg.Node{pg.MakeListNode([]*pg.Node{call("json_each", call("pg_array_in", e.Rexpr)), {}})},
			Alias:     &pg.Alias{Aliasname: alias},
		}}}
		sel := &pg.SelectStmt{
			TargetList:  []*pg.Node{pg.MakeResTargetNodeWithVal(pg.MakeAConstIntNode(1, -1), -1)},
			FromClause:  []*pg.Node{from},
			WhereClause: inner,
			LimitOption: pg.LimitOption_LIMIT_OPTION_DEFAULT,
			Op:          pg.SetOperation_SETOP_NONE,
		}
		n.Node = &pg.Node_SubLink{SubLink: &pg.SubLink{SubLinkType: pg.SubLinkType_EXISTS_SUBLINK,
			Subselect: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}}}}
	case pg.A_Expr_Kind_AEXPR_IN:
		if op != "=" && op != "<>" {
			w.fail("the operator %s", op)
			return
		}
		if l := e.Rexpr.GetList(); l != nil {
			for _, item := range l.Items {
				w.boolLiteral(e.Lexpr, item)
			}
		}
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT, pg.A_Expr_Kind_AEXPR_NULLIF,
		pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
	default:
		w.fail("this operator")
	}
}

// like builds pg_like(s, pattern, ci[, escape]).
func (w *rewriter) like(l, r *pg.Node, ci, negate bool) *pg.Node {
	args := []*pg.Node{l, r, boolConst(ci)}
	if f := r.GetFuncCall(); f != nil && len(f.Funcname) > 0 && strings.EqualFold(strs(f.Funcname)[len(strs(f.Funcname))-1], "like_escape") && len(f.Args) == 2 {
		args = []*pg.Node{l, f.Args[0], boolConst(ci), f.Args[1]}
	}
	x := call("pg_like", args...)
	if negate {
		x = not(x)
	}
	return x
}

// boolLiteral turns 't'/'f' compared with a boolean catalog column into
// 1/0: PostgreSQL coerces the literal to bool, SQLite would compare text.
func (w *rewriter) boolLiteral(col, lit *pg.Node) {
	cr := col.GetColumnRef()
	p := lit.GetParamRef()
	if cr == nil || p == nil || int(p.Number) <= w.constBase {
		return
	}
	f := strs(cr.Fields)
	if len(f) == 0 || !boolColumns[strings.ToLower(f[len(f)-1])] {
		return
	}
	v, ok := parseBool(w.consts[int(p.Number)-w.constBase-1])
	if !ok {
		w.fail("a boolean comparison with a non-boolean literal")
		return
	}
	lit.Node = pg.MakeAConstIntNode(map[bool]int64{true: 1, false: 0}[v], -1).Node
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "t", "true", "y", "yes", "on", "1":
		return true, true
	case "f", "false", "n", "no", "off", "0":
		return false, true
	}
	return false, false
}

func (w *rewriter) typeCast(n *pg.Node, tc *pg.TypeCast) {
	t := typeNameOf(tc.TypeName)
	arg := tc.Arg
	switch {
	case t == "regclass" || t == "regtype" || t == "regnamespace" || t == "regrole":
		fn := "pg_" + t
		if w.asName[tc] {
			fn += "_name"
		}
		n.Node = call(fn, arg).Node
	case t == "regproc" || t == "regprocedure":
		n.Node = call("pg_cast_text", arg).Node
	case isTextType(t):
		n.Node = call("pg_cast_text", arg).Node
	case t == "int2" || t == "int4" || t == "int8" || t == "oid" || t == "xid" || t == "integer" || t == "bigint" || t == "smallint":
		n.Node = call("pg_cast_int", arg).Node
	case t == "float4" || t == "float8" || t == "numeric" || t == "real":
		n.Node = call("pg_cast_float", arg).Node
	case t == "bool" || t == "boolean":
		n.Node = call("pg_cast_bool", arg).Node
	case strings.HasSuffix(t, "[]") || t == "int2vector" || t == "oidvector":
		n.Node = call("pg_array_in", arg).Node
	default:
		w.fail("casts to %s", t)
	}
}

func (w *rewriter) subLink(n *pg.Node, s *pg.SubLink) {
	switch s.SubLinkType {
	case pg.SubLinkType_EXISTS_SUBLINK, pg.SubLinkType_EXPR_SUBLINK:
	case pg.SubLinkType_ANY_SUBLINK:
		if op := opName(s.OperName); op != "" && op != "=" {
			w.fail("op ANY (subquery) with %s", op)
		}
	case pg.SubLinkType_ARRAY_SUBLINK:
		// ARRAY(SELECT x ...) → (SELECT json_group_array(v) FROM (SELECT x AS v ...) _arr)
		sel := s.Subselect.GetSelectStmt()
		first := sel
		for first != nil && first.Larg != nil {
			first = first.Larg
		}
		if first == nil || len(first.TargetList) != 1 || first.TargetList[0].GetResTarget() == nil {
			w.fail("ARRAY(subquery) with other than one column")
			return
		}
		first.TargetList[0].GetResTarget().Name = "v"
		w.aliasSeq++
		outer := &pg.SelectStmt{
			TargetList: []*pg.Node{pg.MakeResTargetNodeWithVal(call("pg_array_from_json", call("json_group_array", colRef("v"))), -1)},
			FromClause: []*pg.Node{{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
				Subquery: s.Subselect, Alias: &pg.Alias{Aliasname: fmt.Sprintf("_arr%d", w.aliasSeq)}}}}},
			LimitOption: pg.LimitOption_LIMIT_OPTION_DEFAULT,
			Op:          pg.SetOperation_SETOP_NONE,
		}
		n.Node = &pg.Node_SubLink{SubLink: &pg.SubLink{SubLinkType: pg.SubLinkType_EXPR_SUBLINK,
			Subselect: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: outer}}}}
	default:
		w.fail("this kind of subquery")
	}
}

func (w *rewriter) selectStmt(s *pg.SelectStmt) {
	for _, d := range s.DistinctClause {
		if d != nil && d.Node != nil {
			w.fail("DISTINCT ON")
			return
		}
	}
	if len(s.LockingClause) > 0 || s.IntoClause != nil {
		w.fail("SELECT ... FOR UPDATE / INTO")
		return
	}
	if len(s.ValuesLists) > 0 {
		w.fail("VALUES lists")
		return
	}
	// SQLite has no parenthesised set operations: a nested one becomes
	// SELECT * FROM (...).
	for _, arg := range []**pg.SelectStmt{&s.Larg, &s.Rarg} {
		if *arg == nil || (*arg).Op == pg.SetOperation_SETOP_NONE {
			continue
		}
		w.aliasSeq++
		star := pg.MakeResTargetNodeWithVal(pg.MakeColumnRefNode([]*pg.Node{pg.MakeAStarNode()}, -1), -1)
		*arg = &pg.SelectStmt{
			TargetList: []*pg.Node{star},
			FromClause: []*pg.Node{{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
				Subquery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: *arg}}, Alias: &pg.Alias{Aliasname: fmt.Sprintf("_set%d", w.aliasSeq)}}}}},
			LimitOption: pg.LimitOption_LIMIT_OPTION_DEFAULT,
			Op:          pg.SetOperation_SETOP_NONE,
		}
	}
	var found []srf
	var fromItem func(n *pg.Node)
	fromItem = func(n *pg.Node) {
		switch x := n.Node.(type) {
		case *pg.Node_JoinExpr:
			fromItem(x.JoinExpr.Larg)
			fromItem(x.JoinExpr.Rarg)
		case *pg.Node_RangeFunction:
			rf := x.RangeFunction
			if rf.IsRowsfrom || len(rf.Functions) != 1 || len(rf.Coldeflist) > 0 {
				w.fail("ROWS FROM or column definition lists")
				return
			}
			items := rf.Functions[0].GetList().GetItems()
			f := items[0].GetFuncCall()
			if f == nil {
				w.fail("this FROM item")
				return
			}
			fname := strings.TrimPrefix(strs(f.Funcname)[0], "pg_srf_")
			var src *pg.Node
			switch fname {
			case "unnest":
				if len(f.Args) != 1 {
					w.fail("unnest of several arrays")
					return
				}
				src = call("pg_array_in", f.Args[0])
			case "generate_series":
				src = call("pg_series_json", f.Args...)
			case "generate_subscripts":
				src = call("pg_subscripts_json", f.Args...)
			default:
				w.fail("the function %s in FROM", fname)
				return
			}
			alias, col, ord := fname, fname, "ordinality"
			if rf.Alias != nil {
				alias, col = rf.Alias.Aliasname, rf.Alias.Aliasname
				if cn := strs(rf.Alias.Colnames); len(cn) > 0 {
					col = cn[0]
					if len(cn) > 1 {
						ord = cn[1]
					}
				}
			}
			if !rf.Ordinality {
				ord = ""
			}
			rf.Functions = []*pg.Node{pg.MakeListNode([]*pg.Node{call("json_each", src), {}})}
			rf.Alias = &pg.Alias{Aliasname: alias}
			rf.Ordinality, rf.Lateral = false, false
			found = append(found, srf{alias, col, ord})
		}
	}
	for _, n := range s.FromClause {
		fromItem(n)
	}
	if len(found) == 0 || w.err != nil {
		return
	}
	w.expandSRFStars(s, found)
	// Column references to a set-returning FROM item's output become
	// json_each's value (key+1 for WITH ORDINALITY); a select-list item
	// keeps the name it had (a subquery's columns are referred to by it).
	for _, t := range s.TargetList {
		rt := t.GetResTarget()
		if rt == nil || rt.Name != "" {
			continue
		}
		if f := strs(rt.GetVal().GetColumnRef().GetFields()); len(f) > 0 {
			for _, x := range found {
				if f[len(f)-1] == x.col || f[len(f)-1] == x.ord {
					rt.Name = f[len(f)-1]
				}
			}
		}
	}
	visit(s.ProtoReflect(), func(n *pg.Node) {
		cr := n.GetColumnRef()
		if cr == nil {
			return
		}
		f := strs(cr.Fields)
		for _, x := range found {
			switch {
			case len(f) == 1 && f[0] == x.col, len(f) == 2 && f[0] == x.alias && f[1] == x.col:
				n.Node = colRef(x.alias, "value").Node
			case x.ord != "" && (len(f) == 1 && f[0] == x.ord || len(f) == 2 && f[0] == x.alias && f[1] == x.ord):
				n.Node = pg.MakeAExprNode(pg.A_Expr_Kind_AEXPR_OP, []*pg.Node{pg.MakeStrNode("+")},
					colRef(x.alias, "key"), pg.MakeAConstIntNode(1, -1), -1).Node
			default:
				continue
			}
			return
		}
	})
}

// srf is a set-returning function in FROM after the rewrite: json_each
// named alias, whose value is the column col and whose key+1 is the
// ordinality column ord ("" without WITH ORDINALITY).
type srf struct{ alias, col, ord string }

// expandSRFStars replaces * and alias.* over set-returning functions by
// their PostgreSQL columns, so that SELECT * FROM unnest(...) (pgcli's
// search-path query) answers the function's column and not json_each's.
// A bare * over a set-returning function joined to a relation is refused:
// the relation's columns would be listed with json_each's.
func (w *rewriter) expandSRFStars(s *pg.SelectStmt, found []srf) {
	onlySRFs := len(s.FromClause) == len(found)
	for _, n := range s.FromClause {
		if n.GetRangeFunction() == nil {
			onlySRFs = false
		}
	}
	var out []*pg.Node
	for _, t := range s.TargetList {
		f := t.GetResTarget().GetVal().GetColumnRef().GetFields()
		if len(f) == 0 || f[len(f)-1].GetAStar() == nil {
			out = append(out, t)
			continue
		}
		var expand []srf
		switch {
		case len(f) == 1 && onlySRFs:
			expand = found
		case len(f) == 1:
			w.fail("* over a set-returning function joined to other relations")
			return
		case len(f) == 2:
			name := f[0].GetString_().GetSval()
			for _, x := range found {
				if x.alias == name {
					expand = append(expand, x)
				}
			}
			if len(expand) == 0 {
				out = append(out, t) // a relation's alias.*
				continue
			}
		}
		for _, x := range expand {
			out = append(out, pg.MakeResTargetNodeWithNameAndVal(x.col, colRef(x.alias, "value"), -1))
			if x.ord != "" {
				out = append(out, pg.MakeResTargetNodeWithNameAndVal(x.ord, pg.MakeAExprNode(pg.A_Expr_Kind_AEXPR_OP,
					[]*pg.Node{pg.MakeStrNode("+")}, colRef(x.alias, "key"), pg.MakeAConstIntNode(1, -1), -1), -1))
			}
		}
	}
	s.TargetList = out
}

// nameTargets gives every unnamed select-list item PostgreSQL's column
// name (FigureColname), since SQLite would name it by its text.
func nameTargets(s *pg.SelectStmt) {
	for s != nil && s.Larg != nil {
		s = s.Larg
	}
	if s == nil {
		return
	}
	for _, t := range s.TargetList {
		rt := t.GetResTarget()
		if rt == nil || rt.Name != "" {
			continue
		}
		if cr := rt.Val.GetColumnRef(); cr != nil {
			if f := cr.Fields; len(f) > 0 && f[len(f)-1].GetAStar() != nil {
				continue
			}
		}
		rt.Name = figureName(rt.Val)
	}
}

func figureName(n *pg.Node) string {
	if n == nil {
		return "?column?"
	}
	switch x := n.Node.(type) {
	case *pg.Node_ColumnRef:
		f := strs(x.ColumnRef.Fields)
		if len(f) > 0 {
			return f[len(f)-1]
		}
	case *pg.Node_FuncCall:
		f := strs(x.FuncCall.Funcname)
		return f[len(f)-1]
	case *pg.Node_TypeCast:
		// A cast keeps a strong name (a column's, a function's) but
		// replaces a weak one (a constant's or another cast's).
		if arg := x.TypeCast.Arg; arg.GetTypeCast() == nil && arg.GetAConst() == nil {
			if name := figureName(arg); name != "?column?" {
				return name
			}
		}
		names := strs(x.TypeCast.TypeName.Names)
		if len(names) > 0 {
			return names[len(names)-1]
		}
	case *pg.Node_CaseExpr:
		return "case"
	case *pg.Node_CoalesceExpr:
		return "coalesce"
	case *pg.Node_MinMaxExpr:
		if x.MinMaxExpr.Op == pg.MinMaxOp_IS_GREATEST {
			return "greatest"
		}
		return "least"
	case *pg.Node_AArrayExpr:
		return "array"
	case *pg.Node_SubLink:
		switch x.SubLink.SubLinkType {
		case pg.SubLinkType_EXISTS_SUBLINK:
			return "exists"
		case pg.SubLinkType_ARRAY_SUBLINK:
			return "array"
		case pg.SubLinkType_EXPR_SUBLINK:
			if sel := x.SubLink.Subselect.GetSelectStmt(); sel != nil && len(sel.TargetList) == 1 {
				rt := sel.TargetList[0].GetResTarget()
				if rt.Name != "" {
					return rt.Name
				}
				return figureName(rt.Val)
			}
		}
	case *pg.Node_SqlvalueFunction:
		return map[pg.SQLValueFunctionOp]string{
			pg.SQLValueFunctionOp_SVFOP_CURRENT_USER: "current_user", pg.SQLValueFunctionOp_SVFOP_SESSION_USER: "session_user",
			pg.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA: "current_schema", pg.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG: "current_catalog",
			pg.SQLValueFunctionOp_SVFOP_USER: "current_user", pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE: "current_role",
			pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP: "current_timestamp", pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N: "current_timestamp",
			pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP: "localtimestamp", pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N: "localtimestamp",
			pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE: "current_date",
		}[x.SqlvalueFunction.Op]
	case *pg.Node_CollateClause:
		return figureName(x.CollateClause.Arg)
	case *pg.Node_AIndirection:
		return figureName(x.AIndirection.Arg)
	}
	return "?column?"
}

// boolFunctions return boolean in PostgreSQL.
var boolFunctions = map[string]bool{
	"pg_table_is_visible": true, "pg_type_is_visible": true, "pg_function_is_visible": true,
	"pg_collation_is_visible": true, "pg_opclass_is_visible": true, "pg_ts_config_is_visible": true,
	"has_table_privilege": true, "has_schema_privilege": true, "has_database_privilege": true,
	"has_column_privilege": true, "has_any_column_privilege": true, "pg_has_role": true,
	"pg_relation_is_publishable": true, "pg_is_other_temp_schema": true, "pg_is_in_recovery": true,
	"bool_and": true, "bool_or": true, "every": true,
}

// isBoolean reports whether PostgreSQL types expression n boolean.
func isBoolean(n *pg.Node) bool {
	switch x := n.GetNode().(type) {
	case *pg.Node_BoolExpr, *pg.Node_NullTest, *pg.Node_BooleanTest:
		return true
	case *pg.Node_AConst:
		return x.AConst.GetBoolval() != nil
	case *pg.Node_SubLink:
		return x.SubLink.SubLinkType == pg.SubLinkType_EXISTS_SUBLINK || x.SubLink.SubLinkType == pg.SubLinkType_ANY_SUBLINK ||
			x.SubLink.SubLinkType == pg.SubLinkType_ALL_SUBLINK
	case *pg.Node_AExpr:
		switch x.AExpr.Kind {
		case pg.A_Expr_Kind_AEXPR_OP:
			op := opName(x.AExpr.Name)
			_, re := regexOps[op]
			_, like := likeOps[op]
			return re || like || op == "=" || op == "<>" || op == "<" || op == ">" || op == "<=" || op == ">="
		case pg.A_Expr_Kind_AEXPR_NULLIF:
			return false
		}
		return true // ANY, ALL, DISTINCT, IN, LIKE, BETWEEN, ...
	case *pg.Node_FuncCall:
		f := strs(x.FuncCall.Funcname)
		return boolFunctions[strings.ToLower(f[len(f)-1])]
	case *pg.Node_TypeCast:
		t := typeNameOf(x.TypeCast.TypeName)
		return t == "bool" || t == "boolean"
	}
	return false
}

// typedFunctions are functions whose PostgreSQL result type is fixed.
var typedFunctions = map[string]string{
	"now": "timestamptz", "transaction_timestamp": "timestamptz", "statement_timestamp": "timestamptz",
	"clock_timestamp": "timestamptz", "pg_client_encoding": "name", "set_config": "text",
	"count": "int8", "length": "int4", "char_length": "int4", "character_length": "int4", "array_length": "int4",
	"array_upper": "int4", "array_lower": "int4", "cardinality": "int4", "position": "int4", "strpos": "int4",
	"array_position": "int4", "pg_char_to_encoding": "int4", "pg_backend_pid": "int4",
	"format_type": "text", "pg_get_expr": "text", "pg_get_indexdef": "text", "pg_get_constraintdef": "text",
	"pg_get_viewdef": "text", "pg_get_triggerdef": "text", "pg_get_ruledef": "text", "obj_description": "text",
	"col_description": "text", "shobj_description": "text", "quote_ident": "text", "current_database": "name",
	"current_schema": "name", "current_user": "name", "session_user": "name", "version": "text",
	"current_setting": "text", "pg_get_userbyid": "name", "pg_encoding_to_char": "name", "array_to_string": "text",
	"string_agg": "text", "lower": "text", "upper": "text", "concat": "text", "concat_ws": "text",
	"replace": "text", "substr": "text", "substring": "text", "btrim": "text", "ltrim": "text", "rtrim": "text",
	"left": "text", "right": "text", "split_part": "text", "regexp_replace": "text", "pg_size_pretty": "text",
	"pg_table_size": "int8", "pg_relation_size": "int8", "pg_total_relation_size": "int8", "pg_indexes_size": "int8",
	"pg_get_serial_sequence": "text", "pg_tablespace_location": "text",
}

// castTypes are the result types of casts the rewrite supports.
var castTypes = map[string]string{
	"text": "text", "varchar": "text", "bpchar": "text", "char": "text", "citext": "text", "name": "name",
	"int2": "int2", "smallint": "int2", "int4": "int4", "integer": "int4", "int": "int4", "int8": "int8",
	"bigint": "int8", "oid": "oid", "regclass": "oid", "regtype": "oid", "regnamespace": "oid", "regrole": "oid",
	"float4": "float8", "real": "float8", "float8": "float8", "numeric": "float8", "bool": "bool", "boolean": "bool",
}

// staticType is the PostgreSQL type of expression n when its form
// decides it, else "".
func staticType(n *pg.Node) string {
	if isBoolean(n) {
		return "bool"
	}
	switch x := n.GetNode().(type) {
	case *pg.Node_FuncCall:
		f := strs(x.FuncCall.Funcname)
		return typedFunctions[strings.ToLower(f[len(f)-1])]
	case *pg.Node_TypeCast:
		t := typeNameOf(x.TypeCast.TypeName)
		if t == "regclass" || t == "regtype" || t == "regnamespace" || t == "regrole" {
			return "" // shown as a name or an OID depending on where it stands
		}
		return castTypes[t]
	case *pg.Node_AConst:
		switch {
		case x.AConst.GetIval() != nil:
			return "int4"
		case x.AConst.GetSval() != nil:
			return "text"
		}
	case *pg.Node_SqlvalueFunction:
		switch x.SqlvalueFunction.Op {
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
			return "timestamptz"
		case pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
			return "timestamp"
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
			return "date"
		}
		return "name"
	}
	return ""
}

// targetTypes types the items of the (leftmost) select list; nil when it
// has a * (positions are then unknown).
func targetTypes(s *pg.SelectStmt) []string {
	for s != nil && s.Larg != nil {
		s = s.Larg
	}
	if s == nil {
		return nil
	}
	out := make([]string, len(s.TargetList))
	for i, t := range s.TargetList {
		rt := t.GetResTarget()
		if rt == nil {
			return nil
		}
		if cr := rt.Val.GetColumnRef(); cr != nil && len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			return nil
		}
		out[i] = staticType(rt.Val)
	}
	return out
}
