package emulated

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Column is a column of an exposed table.
type Column struct {
	Name    string
	TypeOID int64 // a PostgreSQL type OID (TypeForBackend, OIDInt8, ...)
	NotNull bool
}

// Table is a table the policy exposes.
type Table struct {
	Schema  string // "" is public
	Name    string
	Columns []Column
}

// Owner is the role that owns every emulated object.
const Owner = "ddp"

const (
	ownerOID      = 10
	nsCatalog     = 11
	nsPublic      = 2200
	nsInfo        = 13000
	firstUserOID  = 16384
	databaseOID   = 16383
	collDefault   = 100
	defaultDBName = "ddp"
)

// Env is what a query sees of its session.
type Env struct {
	Database string // current_database()
	User     string // current_user
	// Setting answers current_setting(name); ok false for unknown names.
	Setting func(name string) (string, bool)
	// Set answers set_config(name, value, _) as SET name = value would;
	// nil refuses set_config.
	Set func(name, value string) error
}

// Result is a catalog query's answer, in the proxy's one column-type
// vocabulary (ir.ColType).
type Result struct {
	Columns []ir.Column
	Rows    [][]ir.Value
}

// QueryTimeout bounds one catalog query: queries are serialised, so a
// runaway one (a recursive CTE, a cross join) must not hold the others.
const QueryTimeout = 10 * time.Second

// Catalog is an emulated PostgreSQL catalog. It is safe for concurrent use
// (queries are serialised: catalog queries are few and fast).
type Catalog struct {
	backend string
	timeout time.Duration

	mu      sync.Mutex
	conn    *sqlite3.Conn
	env     Env
	lastDB  string
	funcErr error                    // the first error raised by a Go function in this query
	now     time.Time                // the current query's start, for now() and current_timestamp
	inserts map[string]*sqlite3.Stmt // while building: one prepared INSERT per relation

	nsByName  map[string]int64
	nsOfRel   map[int64]int64
	relByName map[string]int64 // "schema.name" → oid
	relName   map[int64]string // oid → display name (qualified unless visible)
	nsName    map[int64]string
}

// New builds the catalog of tables for a backend named backend (for
// messages, e.g. "sqlite").
func New(backend string, tables []Table) (*Catalog, error) {
	conn, err := sqlite3.Open(":memory:")
	if err != nil {
		return nil, fmt.Errorf("emulated: open: %w", err)
	}
	c := &Catalog{
		backend: backend, conn: conn, timeout: QueryTimeout,
		nsByName: map[string]int64{}, nsOfRel: map[int64]int64{}, relByName: map[string]int64{},
		relName: map[int64]string{}, nsName: map[int64]string{},
	}
	if err := c.build(tables); err != nil {
		conn.Close()
		return nil, fmt.Errorf("emulated: build: %w", err)
	}
	if err := c.registerFunctions(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("emulated: functions: %w", err)
	}
	return c, nil
}

// Close releases the in-memory database.
func (c *Catalog) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn.Close()
}

func (c *Catalog) exec(sql string, args ...any) error {
	st, _, err := c.conn.Prepare(sql)
	if err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	defer st.Close()
	return bindExec(st, args)
}

// bindExec binds args to st and runs it (st is reset for reuse).
func bindExec(st *sqlite3.Stmt, args []any) error {
	defer st.Reset()
	for i, a := range args {
		var err error
		switch v := a.(type) {
		case nil:
			err = st.BindNull(i + 1)
		case int64:
			err = st.BindInt64(i+1, v)
		case int:
			err = st.BindInt64(i+1, int64(v))
		case float64:
			err = st.BindFloat(i+1, v)
		case bool:
			err = st.BindBool(i+1, v)
		case string:
			err = st.BindText(i+1, v)
		default:
			err = fmt.Errorf("unsupported argument %T", a)
		}
		if err != nil {
			return err
		}
	}
	return st.Exec()
}

// insert adds one row to rel; values are given by column name, others NULL.
func (c *Catalog) insert(rel string, vals map[string]any) error {
	r := findRelation(rel)
	cols := r.columns()
	names := make([]string, len(cols))
	qs := make([]string, len(cols))
	args := make([]any, len(cols))
	for i, col := range cols {
		names[i] = `"` + col.name + `"`
		qs[i] = "?"
		args[i] = vals[col.name]
	}
	st := c.inserts[rel]
	if st == nil {
		var err error
		st, _, err = c.conn.Prepare(fmt.Sprintf("INSERT INTO %s.%s (%s) VALUES (%s)", r.schema, r.name, strings.Join(names, ","), strings.Join(qs, ",")))
		if err != nil {
			return err
		}
		c.inserts[rel] = st
	}
	return bindExec(st, args)
}

func findRelation(qualified string) relation {
	schema, name, _ := strings.Cut(qualified, ".")
	for _, r := range relations {
		if r.schema == schema && r.name == name {
			return r
		}
	}
	panic("emulated: no relation " + qualified)
}

// lookupRelation finds an emulated relation; schema "" searches pg_catalog.
func lookupRelation(schema, name string) (relation, bool) {
	if schema == "" {
		schema = "pg_catalog"
	}
	for _, r := range relations {
		if r.schema == schema && r.name == name {
			return r, true
		}
	}
	return relation{}, false
}

func (c *Catalog) build(tables []Table) error {
	for _, schema := range []string{"pg_catalog", "information_schema"} {
		if err := c.exec(fmt.Sprintf("ATTACH DATABASE ':memory:' AS %s", schema)); err != nil {
			return err
		}
	}
	if err := c.exec("PRAGMA case_sensitive_like = ON"); err != nil {
		return err
	}
	for _, r := range relations {
		var defs []string
		for _, col := range r.columns() {
			defs = append(defs, fmt.Sprintf(`"%s" %s`, col.name, declType(col.typ)))
		}
		if err := c.exec(fmt.Sprintf("CREATE TABLE %s.%s (%s)", r.schema, r.name, strings.Join(defs, ", "))); err != nil {
			return err
		}
	}

	c.inserts = map[string]*sqlite3.Stmt{}
	defer func() {
		for _, st := range c.inserts {
			st.Close()
		}
		c.inserts = nil
	}()
	// Namespaces: the system ones and every schema a table lives in.
	c.addNamespace("pg_catalog", nsCatalog)
	c.addNamespace("public", nsPublic)
	c.addNamespace("information_schema", nsInfo)
	next := int64(firstUserOID)
	sort.SliceStable(tables, func(i, j int) bool {
		if tables[i].schema() != tables[j].schema() {
			return tables[i].schema() < tables[j].schema()
		}
		return tables[i].Name < tables[j].Name
	})
	for _, t := range tables {
		if _, ok := c.nsByName[t.schema()]; !ok {
			c.addNamespace(t.schema(), next)
			next++
		}
	}
	for name, oid := range c.nsByName {
		if err := c.insert("pg_catalog.pg_namespace", map[string]any{"oid": oid, "nspname": name, "nspowner": ownerOID}); err != nil {
			return err
		}
		if err := c.insert("information_schema.schemata", map[string]any{"catalog_name": defaultDBName, "schema_name": name,
			"schema_owner": Owner}); err != nil {
			return err
		}
	}

	// Catalog relations describe themselves, so \d pg_class works and
	// 'pg_class'::regclass has its usual OID.
	for _, r := range relations {
		var cols []Column
		for _, col := range r.columns() {
			t, _ := typeByName(col.typ)
			if col.typ == "xid" { // not among the emulated types; shown as a number
				t, _ = typeByName("int8")
			}
			cols = append(cols, Column{Name: col.name, TypeOID: t.oid})
		}
		if err := c.addRelation(r.oid, r.schema, r.name, r.relkind(), cols); err != nil {
			return err
		}
	}
	next = max(next, firstUserOID+100)
	for _, t := range tables {
		if err := c.addRelation(next, t.schema(), t.Name, "r", t.Columns); err != nil {
			return err
		}
		next++
	}

	for _, t := range builtinTypes {
		arr, _ := typeByOID(t.array)
		for _, x := range []pgType{t, arr} {
			elem, typtype := int64(0), "b"
			if x.oid == t.array {
				elem = t.oid
			}
			coll := 0
			if x.collate {
				coll = collDefault
			}
			align, storage := "i", "p"
			switch {
			case x.length == 8 || x.oid == t.array && (t.length == 8):
				align = "d"
			case x.length == 1:
				align = "c"
			case x.length == 2:
				align = "s"
			}
			if x.length < 0 {
				storage = "x"
			}
			if err := c.insert("pg_catalog.pg_type", map[string]any{"oid": x.oid, "typname": x.name, "typnamespace": nsCatalog,
				"typowner": ownerOID, "typlen": x.length, "typbyval": x.byVal, "typtype": typtype, "typcategory": x.category,
				"typispreferred": false, "typisdefined": true, "typdelim": ",", "typrelid": 0, "typelem": elem,
				"typarray": map[bool]int64{true: 0, false: t.array}[x.oid == t.array], "typinput": strings.TrimPrefix(x.name, "_") + "in",
				"typoutput": strings.TrimPrefix(x.name, "_") + "out", "typreceive": "-", "typsend": "-", "typmodin": "-",
				"typmodout": "-", "typanalyze": "-", "typsubscript": "-", "typalign": align, "typstorage": storage, "typnotnull": false,
				"typbasetype": 0, "typtypmod": -1, "typndims": 0, "typcollation": coll}); err != nil {
				return err
			}
		}
	}
	rows := []struct {
		rel  string
		vals map[string]any
	}{
		{"pg_catalog.pg_database", map[string]any{"oid": databaseOID, "datname": defaultDBName, "datdba": ownerOID, "encoding": 6,
			"datlocprovider": "c", "datistemplate": false, "datallowconn": true, "datconnlimit": -1, "dattablespace": 1663,
			"datcollate": "C.UTF-8", "datctype": "C.UTF-8"}},
		{"pg_catalog.pg_am", map[string]any{"oid": 2, "amname": "heap", "amhandler": "heap_tableam_handler", "amtype": "t"}},
		{"pg_catalog.pg_am", map[string]any{"oid": 403, "amname": "btree", "amhandler": "bthandler", "amtype": "i"}},
		{"pg_catalog.pg_roles", map[string]any{"rolname": Owner, "rolsuper": false, "rolinherit": true, "rolcreaterole": false,
			"rolcreatedb": false, "rolcanlogin": false, "rolreplication": false, "rolconnlimit": -1, "rolpassword": "********",
			"rolbypassrls": false, "oid": ownerOID}},
		{"pg_catalog.pg_user", map[string]any{"usename": Owner, "usesysid": ownerOID, "usecreatedb": false, "usesuper": false,
			"userepl": false, "usebypassrls": false, "passwd": "********"}},
		{"pg_catalog.pg_collation", map[string]any{"oid": collDefault, "collname": "default", "collnamespace": nsCatalog,
			"collowner": ownerOID, "collprovider": "d", "collisdeterministic": true, "collencoding": -1}},
		{"pg_catalog.pg_collation", map[string]any{"oid": 950, "collname": "C", "collnamespace": nsCatalog, "collowner": ownerOID,
			"collprovider": "c", "collisdeterministic": true, "collencoding": -1, "collcollate": "C", "collctype": "C"}},
		{"pg_catalog.pg_collation", map[string]any{"oid": 951, "collname": "POSIX", "collnamespace": nsCatalog, "collowner": ownerOID,
			"collprovider": "c", "collisdeterministic": true, "collencoding": -1, "collcollate": "POSIX", "collctype": "POSIX"}},
		{"pg_catalog.pg_tablespace", map[string]any{"oid": 1663, "spcname": "pg_default", "spcowner": ownerOID}},
		{"pg_catalog.pg_tablespace", map[string]any{"oid": 1664, "spcname": "pg_global", "spcowner": ownerOID}},
	}
	for _, r := range rows {
		if err := c.insert(r.rel, r.vals); err != nil {
			return err
		}
	}
	// Server constants drivers read from pg_settings (pgjdbc:
	// max_index_keys). Session settings are answered by SHOW.
	for _, kv := range [][2]string{{"max_index_keys", "32"}, {"max_identifier_length", "63"}, {"block_size", "8192"},
		{"server_encoding", "UTF8"}, {"integer_datetimes", "on"}, {"max_function_args", "100"}} {
		if err := c.insert("pg_catalog.pg_settings", map[string]any{"name": kv[0], "setting": kv[1], "context": "internal",
			"source": "default", "boot_val": kv[1], "reset_val": kv[1], "pending_restart": false}); err != nil {
			return err
		}
	}
	return nil
}

func (t Table) schema() string {
	if t.Schema == "" {
		return "public"
	}
	return strings.ToLower(t.Schema)
}

func (c *Catalog) addNamespace(name string, oid int64) {
	c.nsByName[name] = oid
	c.nsName[oid] = name
}

// addRelation adds a table or view with its columns to pg_class,
// pg_attribute, pg_tables and information_schema.
func (c *Catalog) addRelation(oid int64, schema, name, kind string, cols []Column) error {
	ns := c.nsByName[schema]
	c.nsOfRel[oid] = ns
	c.relByName[schema+"."+name] = oid
	c.relName[oid] = quoteIdentIfNeeded(name)
	if ns != nsPublic && ns != nsCatalog {
		c.relName[oid] = quoteIdentIfNeeded(schema) + "." + quoteIdentIfNeeded(name)
	}
	am := int64(2)
	if kind != "r" {
		am = 0
	}
	// No statistics: reltuples -1 (never analysed), relpages 0.
	if err := c.insert("pg_catalog.pg_class", map[string]any{"oid": oid, "relname": name, "relnamespace": ns, "reltype": 0,
		"reloftype": 0, "relowner": ownerOID, "relam": am, "relfilenode": 0, "reltablespace": 0, "relpages": 0, "reltuples": -1.0,
		"relallvisible": 0, "reltoastrelid": 0, "relhasindex": false, "relisshared": false, "relpersistence": "p", "relkind": kind,
		"relnatts": len(cols), "relchecks": 0, "relhasrules": false, "relhastriggers": false, "relhassubclass": false,
		"relrowsecurity": false, "relforcerowsecurity": false, "relispopulated": true, "relreplident": "d",
		"relispartition": false, "relrewrite": 0, "relfrozenxid": 0, "relminmxid": 0}); err != nil {
		return err
	}
	tableType := "BASE TABLE"
	if kind == "v" {
		tableType = "VIEW"
		if schema == "information_schema" || schema == "pg_catalog" {
			if err := c.insert("pg_catalog.pg_views", map[string]any{"schemaname": schema, "viewname": name, "viewowner": Owner}); err != nil {
				return err
			}
		}
	} else if err := c.insert("pg_catalog.pg_tables", map[string]any{"schemaname": schema, "tablename": name, "tableowner": Owner,
		"hasindexes": false, "hasrules": false, "hastriggers": false, "rowsecurity": false}); err != nil {
		return err
	}
	if err := c.insert("information_schema.tables", map[string]any{"table_catalog": defaultDBName, "table_schema": schema,
		"table_name": name, "table_type": tableType, "is_insertable_into": "NO", "is_typed": "NO"}); err != nil {
		return err
	}
	for i, col := range cols {
		t, ok := typeByOID(col.TypeOID)
		if !ok {
			t, _ = typeByOID(OIDText)
		}
		storage, align := "p", "i"
		if t.length < 0 {
			storage = "x"
		}
		switch t.length {
		case 8:
			align = "d"
		case 1:
			align = "c"
		case 2:
			align = "s"
		}
		coll := 0
		if t.collate {
			coll = collDefault
		}
		if err := c.insert("pg_catalog.pg_attribute", map[string]any{"attrelid": oid, "attname": col.Name, "atttypid": t.oid,
			"attstattarget": -1, "attlen": t.length, "attnum": i + 1, "attndims": 0, "attcacheoff": -1, "atttypmod": -1,
			"attbyval": t.byVal, "attalign": align, "attstorage": storage, "attcompression": "", "attnotnull": col.NotNull,
			"atthasdef": false, "atthasmissing": false, "attidentity": "", "attgenerated": "", "attisdropped": false,
			"attislocal": true, "attinhcount": 0, "attcollation": coll}); err != nil {
			return err
		}
		info := map[string]any{"table_catalog": defaultDBName, "table_schema": schema, "table_name": name,
			"column_name": col.Name, "ordinal_position": i + 1, "is_nullable": map[bool]string{true: "NO", false: "YES"}[col.NotNull],
			"data_type": t.display, "udt_catalog": defaultDBName, "udt_schema": "pg_catalog", "udt_name": t.name,
			"dtd_identifier": strconv.Itoa(i + 1), "is_self_referencing": "NO", "is_identity": "NO", "identity_cycle": "NO",
			"is_generated": "NEVER", "is_updatable": "NO"}
		if t.category == "A" {
			info["data_type"] = "ARRAY"
		}
		if t.oid == 18 {
			info["data_type"] = `"char"`
		}
		switch t.oid {
		case 21, 23, 20:
			info["numeric_precision"] = map[int64]int{21: 16, 23: 32, 20: 64}[t.oid]
			info["numeric_precision_radix"] = 2
			info["numeric_scale"] = 0
		case 700, 701:
			info["numeric_precision"] = map[int64]int{700: 24, 701: 53}[t.oid]
			info["numeric_precision_radix"] = 2
		case 1700:
			info["numeric_precision_radix"] = 10
		case 25, 1043, 1042:
			info["character_octet_length"] = 1073741824
		case 1082, 1083, 1114, 1184:
			info["datetime_precision"] = map[bool]int{true: 0, false: 6}[t.oid == 1082]
		}
		if coll != 0 {
			info["collation_catalog"], info["collation_schema"], info["collation_name"] = nil, nil, nil
		}
		if err := c.insert("information_schema.columns", info); err != nil {
			return err
		}
	}
	return nil
}

// setEnv installs the session's view before a query: the database name
// appears in pg_database and information_schema.
func (c *Catalog) setEnv(env Env) error {
	c.env = env
	db := env.Database
	if db == "" {
		db = defaultDBName
	}
	if db == c.lastDB {
		return nil
	}
	for _, u := range []string{
		"UPDATE pg_catalog.pg_database SET datname = ?",
		"UPDATE information_schema.schemata SET catalog_name = ?",
		"UPDATE information_schema.tables SET table_catalog = ?",
		"UPDATE information_schema.columns SET table_catalog = ?, udt_catalog = ?1",
	} {
		if err := c.exec(u, db); err != nil {
			return err
		}
	}
	c.lastDB = db
	return nil
}

// Query answers one PostgreSQL catalog query with its bound parameters.
func (c *Catalog) Query(ctx context.Context, text string, args []ir.Value, env Env) (*Result, error) {
	q, err := c.translate(text, len(args))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.setEnv(env); err != nil {
		return nil, sqlerr.Wrap(sqlerr.Internal, err, "internal error: the emulated catalog is unusable")
	}
	old := c.conn.SetInterrupt(ctx)
	defer c.conn.SetInterrupt(old)
	c.funcErr = nil
	c.now = time.Now()
	st, _, err := c.conn.Prepare(q.sql)
	if err != nil {
		if e := c.interrupted(ctx, err); e != nil {
			return nil, e
		}
		return nil, c.unavailableCause(fmt.Sprintf("this query (%v)", sqliteMessage(err)), fmt.Errorf("%s: %w", q.sql, err))
	}
	defer st.Close()
	bind := func(i int, v ir.Value) error {
		switch v.Kind {
		case ir.KindNull:
			return st.BindNull(i)
		case ir.KindInt:
			return st.BindInt64(i, v.Int)
		case ir.KindFloat:
			return st.BindFloat(i, v.Float)
		case ir.KindBool:
			return st.BindBool(i, v.Bool)
		}
		return st.BindText(i, v.Text())
	}
	for i := 1; i <= st.BindCount(); i++ {
		name := st.BindName(i)
		n, err := strconv.Atoi(strings.TrimPrefix(name, "$"))
		if err != nil || n < 1 {
			return nil, sqlerr.New(sqlerr.Internal, "internal error: catalog parameter %q", name)
		}
		var v ir.Value
		switch {
		case n <= len(args):
			v = args[n-1]
		case n-q.constBase-1 < len(q.consts) && n > q.constBase:
			v = ir.String(q.consts[n-q.constBase-1])
		default:
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "the statement has a parameter $%d but %d values were bound", n, len(args))
		}
		if err := bind(i, v); err != nil {
			return nil, sqlerr.Wrap(sqlerr.Internal, err, "internal error: catalog parameter")
		}
	}
	res := &Result{}
	n := st.ColumnCount()
	decl := make([]string, n)
	for i := 0; i < n; i++ {
		decl[i] = pgTypeOfDecl(st.ColumnDeclType(i))
		if decl[i] == "" && i < len(q.colTypes) {
			decl[i] = q.colTypes[i]
		}
		res.Columns = append(res.Columns, ir.Column{Name: st.ColumnName(i)})
	}
	for st.Step() {
		row := make([]ir.Value, n)
		for i := 0; i < n; i++ {
			row[i] = columnValue(st, i, decl[i])
		}
		res.Rows = append(res.Rows, row)
	}
	if c.funcErr != nil {
		return nil, c.funcErr
	}
	if err := st.Err(); err != nil {
		if e := c.interrupted(ctx, err); e != nil {
			return nil, e
		}
		return nil, c.unavailableCause(fmt.Sprintf("this query (%v)", sqliteMessage(err)), fmt.Errorf("%s: %w", q.sql, err))
	}
	for i := range res.Columns {
		res.Columns[i].Type = resultType(decl[i], res.Rows, i)
	}
	return res, nil
}

// interrupted is the error for a query stopped by its context, or nil.
func (c *Catalog) interrupted(ctx context.Context, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return sqlerr.Wrap(sqlerr.StatementTimeout, err, fmt.Sprintf("canceling statement: catalog queries may run for at most %v", c.timeout))
	case ctx.Err() != nil:
		return sqlerr.Canceled(err)
	}
	return nil
}

// sqliteMessage strips the engine's prefix from an error: it describes
// the rewritten catalog query, never data.
func sqliteMessage(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "sqlite3: ")
	s = strings.TrimPrefix(s, "SQL logic error: ")
	return s
}

// timeKinds are the clock's result types (now(), current_date...).
var timeKinds = map[string]ir.Kind{"timestamptz": ir.KindTimestampTZ, "timestamp": ir.KindTimestamp, "date": ir.KindDate}

func columnValue(st *sqlite3.Stmt, i int, decl string) ir.Value {
	switch st.ColumnType(i) {
	case sqlite3.NULL:
		return ir.Null()
	case sqlite3.INTEGER:
		v := st.ColumnInt64(i)
		if decl == "bool" {
			return ir.Bool(v != 0)
		}
		return ir.Int(v)
	case sqlite3.FLOAT:
		return ir.Float(st.ColumnFloat(i))
	}
	s := st.ColumnText(i)
	if k, ok := timeKinds[decl]; ok {
		return ir.AsTime(ir.String(s), k)
	}
	if strings.HasPrefix(decl, "_") || decl == "int2vector" || decl == "oidvector" {
		s = arrayOut(s, decl == "int2vector" || decl == "oidvector")
	}
	return ir.String(s)
}

// arrayOut renders a JSON array as PostgreSQL's array text ({a,b}), or
// space-separated for the vector types.
func arrayOut(s string, vector bool) string {
	var xs []any
	if json.Unmarshal([]byte(s), &xs) != nil {
		return s
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		switch v := x.(type) {
		case nil:
			parts[i] = "NULL"
		case string:
			parts[i] = v
			if !vector && (v == "" || strings.ContainsAny(v, `{},"\ `)) {
				parts[i] = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
			}
		default:
			parts[i] = fmt.Sprint(v)
		}
	}
	if vector {
		return strings.Join(parts, " ")
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// resultType is the type of a result column: the catalog column's own
// PostgreSQL type (decl) when the column is one, else what the values
// are.
func resultType(decl string, rows [][]ir.Value, i int) ir.ColType {
	if decl != "" {
		if t, ok := declTypes[decl]; ok {
			return t
		}
		return ir.TypeText
	}
	for _, r := range rows {
		if r[i].Kind == ir.KindNull {
			continue
		}
		if t, ok := valueTypes[r[i].Kind]; ok {
			return t
		}
		return ir.TypeText
	}
	return ir.TypeText
}

var (
	// declTypes are the catalog's PostgreSQL column types the proxy
	// sends as other than text.
	declTypes = map[string]ir.ColType{
		"bool": ir.TypeBool, "int2": ir.TypeInt4, "int4": ir.TypeInt4, "int8": ir.TypeInt8, "xid": ir.TypeInt8,
		"oid": ir.TypeOID, "name": ir.TypeName, "float4": ir.TypeFloat8, "float8": ir.TypeFloat8,
		"timestamptz": ir.TypeTimestampTZ, "timestamp": ir.TypeTimestamp, "date": ir.TypeDate,
	}
	// valueTypes type a computed column by its values.
	valueTypes = map[ir.Kind]ir.ColType{ir.KindInt: ir.TypeInt8, ir.KindFloat: ir.TypeFloat8, ir.KindBool: ir.TypeBool}
)

// unavailable is the error for anything the emulation cannot answer.
func (c *Catalog) unavailable(what string) error {
	return sqlerr.New(sqlerr.FeatureNotSupported,
		"the PostgreSQL catalog is emulated on the %s backend and cannot answer %s", c.backend, what).
		WithHint("%s", Works)
}

// unavailableCause is unavailable with the rewritten query and the
// engine's error kept as the cause (for logs, never sent to the client).
func (c *Catalog) unavailableCause(what string, cause error) error {
	e := sqlerr.Wrap(sqlerr.FeatureNotSupported, cause,
		fmt.Sprintf("the PostgreSQL catalog is emulated on the %s backend and cannot answer %s", c.backend, what))
	return e.WithHint("%s", Works)
}

// Works says what the emulated catalog answers (for hints and docs).
const Works = "what works: psql \\dt, \\d TABLE, \\d+ TABLE, \\l, \\dn; SELECT over information_schema.tables/columns/schemata/views " +
	"and pg_catalog.pg_class/pg_namespace/pg_attribute/pg_type/pg_database/pg_tables (and empty pg_index, pg_constraint, " +
	"pg_description, ...) with ordinary WHERE/JOIN/ORDER BY; pgjdbc getTables/getColumns and SQLAlchemy's inspector"

func quoteIdentIfNeeded(s string) string {
	ok := s != ""
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || i > 0 && (r >= '0' && r <= '9' || r == '$')) {
			ok = false
		}
	}
	if ok {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
