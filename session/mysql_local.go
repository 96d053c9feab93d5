package session

import (
	"context"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ddp-proxy/ddp-proxy/catalog/emulated"
	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
	"github.com/ddp-proxy/ddp-proxy/wire/mysqlwire"
)

// defaultMySQLVars are the system variables connectors read on connect
// (Connector/J's and MariaDB Connector/J's SELECT @@..., pymysql's
// @@version_comment, the mysql CLI's status line). They describe the
// proxy's session, never the backend's.
//
// maxPacket is max_allowed_packet: the MySQL front end's command limit, so
// connectors that split long parameters by it stay under it.
//
// lower_case_table_names says how the proxy compares a MySQL client's table
// names (policies.Names): 0 (exactly) when the backend is a MySQL server
// that says 0, else 1 (case-insensitively).
func defaultMySQLVars(env mysqlEnv) map[string]string {
	lowerCase := "1"
	if env.exactTables {
		lowerCase = "0"
	}
	return map[string]string{
		"version": mysqlwire.ServerVersion, "version_comment": "ddp-proxy privacy proxy (aggregate queries answered with differential privacy)",
		"version_compile_os": "Linux", "version_compile_machine": "x86_64",
		"autocommit": "1", "auto_increment_increment": "1", "auto_increment_offset": "1",
		"character_set_client": "utf8mb4", "character_set_connection": "utf8mb4", "character_set_results": "utf8mb4",
		"character_set_server": "utf8mb4", "character_set_database": "utf8mb4", "character_set_system": "utf8mb3",
		"collation_connection": "utf8mb4_general_ci", "collation_server": "utf8mb4_general_ci", "collation_database": "utf8mb4_general_ci",
		"init_connect": "", "interactive_timeout": "28800", "wait_timeout": "28800", "net_write_timeout": "60", "net_read_timeout": "30",
		"license": "GPL", "lower_case_table_names": lowerCase, "lower_case_file_system": "OFF",
		"max_allowed_packet": strconv.Itoa(env.maxPacket), "net_buffer_length": "16384", "performance_schema": "0",
		"query_cache_size": "0", "query_cache_type": "OFF", "have_query_cache": "NO", "have_ssl": "DISABLED",
		"sql_mode":         "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION",
		"system_time_zone": "UTC", "time_zone": "SYSTEM", "transaction_isolation": "REPEATABLE-READ", "tx_isolation": "REPEATABLE-READ",
		"transaction_read_only": "1", "tx_read_only": "1", "read_only": "1", "sql_select_limit": "18446744073709551615",
		"sql_auto_is_null": "0", "max_execution_time": "0", "max_statement_time": "0.000000", "default_storage_engine": "InnoDB", "storage_engine": "InnoDB",
		"default_authentication_plugin": "mysql_native_password", "protocol_version": "10", "port": env.port,
		"hostname": "ddp-proxy", "server_id": "0", "socket": "", "language": "", "event_scheduler": "OFF",
		"session_track_schema": "ON", "session_track_system_variables": "", "session_track_state_change": "OFF",
		"div_precision_increment": "4", "group_concat_max_len": "1024", "sql_quote_show_create": "1",
		"foreign_key_checks": "1", "unique_checks": "1", "sql_safe_updates": "0", "innodb_version": "8.0.33",
		"time_format": "%H:%i:%s", "date_format": "%Y-%m-%d", "datetime_format": "%Y-%m-%d %H:%i:%s",
	}
}

// onOffVars are shown as ON/OFF by SHOW VARIABLES and as 1/0 by @@.
var onOffVars = map[string]bool{
	"autocommit": true, "transaction_read_only": true, "tx_read_only": true, "read_only": true,
	"sql_auto_is_null": true, "foreign_key_checks": true, "unique_checks": true, "sql_safe_updates": true,
	"sql_quote_show_create": true,
}

// epsilonNames are the spellings of the ε setting on the MySQL side:
// SET @ddp_epsilon = 0.05 (documented), SET ddp_epsilon = 0.05, and
// SET @@ddp_epsilon.
func isEpsilonName(n string) bool { return n == "ddp_epsilon" || n == "ddp.epsilon" }

// keepsWarnings: SHOW WARNINGS, SHOW ERRORS and SELECTs of variables read
// the previous statement's diagnostics instead of clearing them.
func keepsWarnings(st *ir.Statement) bool {
	if st.Kind == ir.StmtSelect && len(st.Relations) == 0 {
		// Statements that use no table keep the diagnostics, as in
		// MySQL: SELECT @@warning_count reads them.
		return answersLocally(st.Local)
	}
	if st.Kind != ir.StmtSession || st.Session.Verb != ir.SessionShow || len(st.Session.Settings) == 0 {
		return false
	}
	n := st.Session.Settings[0].Name
	return n == "warnings" || n == "errors"
}

// handledLocally reports statements answered by the MySQL layer.
func (ms *mySession) handledLocally(st *ir.Statement) bool {
	switch st.Kind {
	case ir.StmtSession:
		return true
	case ir.StmtSelect:
		return len(st.Relations) == 0 && answersLocally(st.Local)
	}
	return false
}

func (ms *mySession) tryLocal(ctx context.Context, st *ir.Statement) (Result, bool, error) {
	if !ms.handledLocally(st) {
		return Result{}, false, nil
	}
	r, err := ms.local(ctx, st)
	return r, true, err
}

func (ms *mySession) local(ctx context.Context, st *ir.Statement) (Result, error) {
	if st.Kind == ir.StmtSelect {
		return ms.selectLocal(st.Local)
	}
	ss := st.Session
	switch ss.Verb {
	case ir.SessionShow:
		return ms.show(ctx, ss)
	case ir.SessionSet:
		for _, set := range ss.Settings {
			if err := ms.set(set); err != nil {
				return Result{}, err
			}
		}
		return Result{}, nil
	case ir.SessionUse:
		name := ""
		if len(ss.Settings) > 0 {
			name = ss.Settings[0].Name
		}
		return Result{}, ms.UseDatabase(name)
	case ir.SessionReset:
		return Result{}, nil
	case ir.SessionKill:
		return Result{}, killStatement(ctx, ss.Settings)
	}
	// BEGIN, COMMIT, ROLLBACK, SAVEPOINT...: nothing runs in a backend
	// transaction, and every answer is read-only.
	return Result{}, nil
}

// killStatement runs KILL [QUERY | CONNECTION] id through the front end,
// which alone knows the connections.
func killStatement(ctx context.Context, settings []ir.Setting) error {
	if len(settings) != 1 {
		return sqlerr.New(sqlerr.SyntaxError, "KILL needs a connection id")
	}
	id, err := strconv.ParseUint(settings[0].Value, 10, 32)
	if err != nil {
		return sqlerr.New(sqlerr.NoSuchThread, "Unknown thread id: %s", settings[0].Value)
	}
	return mysqlwire.Kill(ctx, uint32(id), settings[0].Name == "query")
}

func (ms *mySession) set(st ir.Setting) error {
	name := strings.ToLower(st.Name)
	if isEpsilonName(name) {
		return ms.core.SetEpsilon(st.Value, st.Default)
	}
	switch st.Scope {
	case "user":
		if st.Default {
			delete(ms.userVars, name)
		} else {
			ms.userVars[name] = literalValue(st.Value)
		}
		return nil
	case "global":
		return sqlerr.New(sqlerr.InsufficientPrivilege, "SET GLOBAL %s: global variables cannot be changed through the privacy proxy", st.Name)
	}
	switch name {
	case "names", "charset", "character set":
		cs := strings.ToLower(strings.Trim(st.Value, "'\" "))
		if st.Default || cs == "" {
			cs = "utf8mb4"
		}
		switch cs {
		case "utf8mb4", "utf8", "utf8mb3", "latin1", "ascii", "binary":
		default:
			return sqlerr.New(sqlerr.FeatureNotSupported, "character set %s is not supported; use utf8mb4", cs)
		}
		for _, v := range []string{"character_set_client", "character_set_connection", "character_set_results"} {
			ms.vars[v] = cs
		}
		return nil
	case "read_only", "transaction_read_only", "tx_read_only":
		// SET SESSION TRANSACTION READ ONLY (JDBC's setReadOnly(true))
		// asks for what every session already is.
		switch strings.ToLower(st.Value) {
		case "1", "on", "true":
			if !st.Default {
				return nil
			}
		}
		return sqlerr.New(sqlerr.InsufficientPrivilege, "variable %s cannot be changed through the privacy proxy: every session is read-only", st.Name)
	case "transaction_isolation", "tx_isolation":
		// One setting under MySQL's and MariaDB's names (SET SESSION
		// TRANSACTION ISOLATION LEVEL sets tx_isolation). Nothing runs
		// in a backend transaction, so it is reported, not applied.
		v := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(st.Value), " ", "-"))
		if st.Default {
			v = defaultMySQLVars(ms.env)["transaction_isolation"]
		}
		switch v {
		case "READ-UNCOMMITTED", "READ-COMMITTED", "REPEATABLE-READ", "SERIALIZABLE":
		default:
			return sqlerr.New(sqlerr.InvalidParameterValue, "variable '%s' can't be set to the value of '%s'", st.Name, st.Value)
		}
		ms.vars["transaction_isolation"], ms.vars["tx_isolation"] = v, v
		return nil
	case "max_execution_time", "max_statement_time":
		return ms.setStatementTimeout(name, st)
	case "version", "version_comment", "have_ssl", "hostname", "port", "license",
		// The front end enforces max_allowed_packet: reporting another
		// value would mislead connectors.
		"max_allowed_packet":
		return sqlerr.New(sqlerr.InsufficientPrivilege, "variable %s cannot be changed through the privacy proxy", st.Name)
	}
	if st.Default {
		if v, ok := defaultMySQLVars(ms.env)[name]; ok {
			ms.vars[name] = v
			if name == "time_zone" {
				ms.core.SetTimeZone(v)
			}
		}
		return nil
	}
	v := st.Value
	if st.Append { // SET sql_mode = CONCAT(@@sql_mode, ',X')
		v = ms.vars[name] + v
	}
	if onOffVars[name] {
		switch strings.ToLower(v) {
		case "on", "1", "true":
			v = "1"
		case "off", "0", "false":
			v = "0"
		default:
			return sqlerr.New(sqlerr.InvalidParameterValue, "variable '%s' can't be set to the value of '%s'", st.Name, v)
		}
	}
	ms.vars[name] = v
	if name == "time_zone" {
		ms.core.SetTimeZone(v)
	}
	return nil
}

// setStatementTimeout sets one of the MySQL client's statement timeouts:
// MySQL's max_execution_time (whole milliseconds) or MariaDB's
// max_statement_time (seconds, with a fraction; the mariadb CLI's users
// know this one). Either may be set; the shorter non-zero one applies
// (timeout.go: a cancel the proxy sends itself).
func (ms *mySession) setStatementTimeout(name string, st ir.Setting) error {
	v := strings.Trim(st.Value, "'\" ")
	if st.Default {
		v = defaultMySQLVars(ms.env)[name]
	}
	switch name {
	case "max_execution_time":
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return sqlerr.New(sqlerr.InvalidParameterValue, "variable '%s' can't be set to the value of '%s'", st.Name, st.Value).
				WithHint("max_execution_time is a whole number of milliseconds, 0 for no limit")
		}
		v = strconv.FormatUint(n, 10)
	default: // max_statement_time
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 31536000 || math.IsNaN(f) {
			return sqlerr.New(sqlerr.InvalidParameterValue, "variable '%s' can't be set to the value of '%s'", st.Name, st.Value).
				WithHint("max_statement_time is a number of seconds from 0 (no limit) to 31536000")
		}
		v = strconv.FormatFloat(f, 'f', 6, 64)
	}
	ms.vars[name] = v
	// The shorter of the two that are set.
	d, other := ms.timeoutVar("max_execution_time"), ms.timeoutVar("max_statement_time")
	if other > 0 && (d == 0 || other < d) {
		d = other
	}
	ms.core.SetStatementTimeout(d)
	return nil
}

// timeoutVar reads a statement timeout variable as stored by
// setStatementTimeout (0: none).
func (ms *mySession) timeoutVar(name string) time.Duration {
	f, err := strconv.ParseFloat(ms.vars[name], 64)
	if err != nil || f <= 0 {
		return 0
	}
	if name == "max_execution_time" {
		return time.Duration(f) * time.Millisecond
	}
	return time.Duration(math.Round(f*1e6)) * time.Microsecond
}

// literalValue types a SET @var value: integers and numbers as numbers.
func literalValue(s string) ir.Value {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ir.Int(n)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return ir.Float(f)
	}
	return ir.String(s)
}

// sysVar returns @@name.
func (ms *mySession) sysVar(name string) (ir.Value, bool) {
	name = strings.ToLower(name)
	switch {
	case isEpsilonName(name):
		return ir.Float(ms.core.Epsilon()), true
	case name == "warning_count":
		return ir.Int(int64(len(ms.warnings))), true
	case name == "error_count":
		n := 0
		for _, w := range ms.warnings {
			if w.level == "Error" {
				n++
			}
		}
		return ir.Int(int64(n)), true
	}
	v, ok := ms.vars[name]
	if !ok {
		return ir.Value{}, false
	}
	return literalValue(v), true
}

// answersLocally reports whether the MySQL layer evaluates every item of
// a local SELECT (the parser's ir.Statement.Local): variables, literals
// and the session functions of localFuncs.
func answersLocally(items []ir.LocalItem) bool {
	for _, it := range items {
		if it.Kind == ir.LocalFunc && !localFuncs[it.Name] {
			return false
		}
	}
	return len(items) > 0
}

var localFuncs = map[string]bool{
	"database": true, "schema": true, "user": true, "current_user": true, "session_user": true, "system_user": true,
	"connection_id": true, "version": true, "last_insert_id": true, "row_count": true, "found_rows": true,
	"now": true, "current_timestamp": true, "sysdate": true, "utc_timestamp": true, "curdate": true, "current_date": true,
}

func (ms *mySession) selectLocal(items []ir.LocalItem) (Result, error) {
	var r Result
	row := make([]ir.Value, len(items))
	for i, it := range items {
		v, err := ms.evalLocal(it)
		if err != nil {
			return Result{}, err
		}
		name := it.Output
		t := TypeText
		switch v.Kind {
		case ir.KindInt:
			t = TypeInt8
		case ir.KindFloat:
			t = TypeFloat8
		}
		r.Columns = append(r.Columns, Column{Name: name, Type: t})
		row[i] = v
	}
	r.Rows = [][]ir.Value{row}
	r.Tag = "SELECT 1"
	return r, nil
}

func (ms *mySession) evalLocal(it ir.LocalItem) (ir.Value, error) {
	switch it.Kind {
	case ir.LocalSysVar:
		v, ok := ms.sysVar(it.Name)
		if !ok {
			return ir.Value{}, sqlerr.New(sqlerr.UndefinedObject, "Unknown system variable '%s'", it.Name)
		}
		return v, nil
	case ir.LocalUserVar:
		if isEpsilonName(it.Name) {
			return ir.Float(ms.core.Epsilon()), nil
		}
		return ms.userVars[it.Name], nil // NULL when unset, as in MySQL
	case ir.LocalLiteral:
		return it.Value, nil
	}
	now := time.Now().UTC()
	switch it.Name {
	case "database", "schema":
		if ms.database == "" {
			return ir.Null(), nil
		}
		return ir.String(ms.database), nil
	case "user", "current_user", "session_user", "system_user":
		return ir.String(ms.user.Name + "@%"), nil
	case "connection_id":
		return ir.Int(int64(ms.connID)), nil
	case "version":
		return ir.String(mysqlwire.ServerVersion), nil
	case "last_insert_id", "found_rows":
		return ir.Int(0), nil
	case "row_count":
		return ir.Int(-1), nil
	case "now", "current_timestamp", "sysdate", "utc_timestamp":
		return ir.String(now.Format(time.DateTime)), nil
	case "curdate", "current_date":
		return ir.String(now.Format(time.DateOnly)), nil
	}
	return ir.Value{}, sqlerr.New(sqlerr.FeatureNotSupported, "%s() is not supported here", it.Name)
}

// likeMatcher is SHOW ... LIKE 'pattern': case-insensitive, as on MySQL's
// default collations.
func likeMatcher(p string) func(string) bool {
	return func(s string) bool { return exprtype.LikeMatch(s, p, true) }
}

func textColumns(names ...string) []Column {
	cs := make([]Column, len(names))
	for i, n := range names {
		cs[i] = Column{Name: n, Type: TypeText}
	}
	return cs
}

func (ms *mySession) show(ctx context.Context, ss *ir.Session) (Result, error) {
	// SHOW FULL TABLES / COLUMNS: clients index the extra columns by
	// position (SQLAlchemy reads Table_type).
	full, settings := ss.Full, ss.Settings
	if len(settings) == 0 {
		return Result{}, sqlerr.New(sqlerr.SyntaxError, "SHOW needs an object")
	}
	what, arg := settings[0].Name, settings[0].Value
	opt := map[string]string{}
	for _, s := range settings[1:] {
		opt[s.Name] = s.Value
	}
	var match func(string) bool = func(string) bool { return true }
	if arg != "" && (what == "variables" || what == "status" || what == "tables" || what == "databases" || what == "collation" || what == "charset") {
		match = likeMatcher(arg)
	}
	// SHOW VARIABLES WHERE Variable_name = 'a' OR ...: any of the
	// parser's patterns.
	var where []func(string) bool
	for _, s := range settings[1:] {
		if s.Name == "name like" {
			where = append(where, likeMatcher(s.Value))
		}
	}
	if len(where) > 0 {
		like := match
		match = func(n string) bool {
			return like(n) && slices.ContainsFunc(where, func(m func(string) bool) bool { return m(n) })
		}
	}
	switch what {
	case "warnings", "errors":
		r := Result{Columns: []Column{{Name: "Level", Type: TypeText}, {Name: "Code", Type: TypeInt8}, {Name: "Message", Type: TypeText}}}
		for _, w := range ms.warnings {
			if what == "errors" && w.level != "Error" {
				continue
			}
			r.Rows = append(r.Rows, []ir.Value{ir.String(w.level), ir.Int(int64(w.code)), ir.String(w.msg)})
		}
		return r, nil
	case "variables":
		r := Result{Columns: textColumns("Variable_name", "Value")}
		names := make([]string, 0, len(ms.vars)+1)
		for k := range ms.vars {
			names = append(names, k)
		}
		names = append(names, "ddp_epsilon", "warning_count", "error_count")
		sort.Strings(names)
		for _, k := range names {
			if !match(k) {
				continue
			}
			v, _ := ms.sysVar(k)
			txt := v.Text()
			if onOffVars[k] {
				txt = map[string]string{"1": "ON", "0": "OFF"}[txt]
			}
			r.Rows = append(r.Rows, []ir.Value{ir.String(k), ir.String(txt)})
		}
		return r, nil
	case "status":
		return Result{Columns: textColumns("Variable_name", "Value")}, nil
	case "engines":
		r := Result{Columns: textColumns("Engine", "Support", "Comment", "Transactions", "XA", "Savepoints")}
		r.Rows = [][]ir.Value{{ir.String("InnoDB"), ir.String("DEFAULT"), ir.String("read-only through ddp-proxy"), ir.String("YES"), ir.String("NO"), ir.String("NO")}}
		return r, nil
	case "charset":
		r := Result{Columns: []Column{{Name: "Charset", Type: TypeText}, {Name: "Description", Type: TypeText}, {Name: "Default collation", Type: TypeText}, {Name: "Maxlen", Type: TypeInt8}}}
		if match("utf8mb4") {
			r.Rows = [][]ir.Value{{ir.String("utf8mb4"), ir.String("UTF-8 Unicode"), ir.String("utf8mb4_general_ci"), ir.Int(4)}}
		}
		return r, nil
	case "collation":
		r := Result{Columns: []Column{{Name: "Collation", Type: TypeText}, {Name: "Charset", Type: TypeText}, {Name: "Id", Type: TypeInt8}, {Name: "Default", Type: TypeText}, {Name: "Compiled", Type: TypeText}, {Name: "Sortlen", Type: TypeInt8}}}
		if match("utf8mb4_general_ci") {
			r.Rows = [][]ir.Value{{ir.String("utf8mb4_general_ci"), ir.String("utf8mb4"), ir.Int(45), ir.String("Yes"), ir.String("Yes"), ir.Int(1)}}
		}
		return r, nil
	case "databases":
		r := Result{Columns: textColumns("Database")}
		for _, db := range ms.databases() {
			if match(db) {
				r.Rows = append(r.Rows, []ir.Value{ir.String(db)})
			}
		}
		return r, nil
	case "tables":
		db := opt["database"]
		if db == "" {
			db = ms.currentDatabase()
		}
		r := Result{Columns: textColumns("Tables_in_" + db)}
		if full {
			r.Columns = append(r.Columns, Column{Name: "Table_type", Type: TypeText})
		}
		for _, t := range ms.tables(db) {
			if match(t.Name) {
				row := []ir.Value{ir.String(t.Name)}
				if full {
					row = append(row, ir.String("BASE TABLE"))
				}
				r.Rows = append(r.Rows, row)
			}
		}
		return r, nil
	case "columns":
		cols, err := ms.describe(ctx, arg)
		if err != nil {
			return Result{}, err
		}
		r := Result{Columns: textColumns("Field", "Type", "Null", "Key", "Default", "Extra")}
		if full {
			r.Columns = textColumns("Field", "Type", "Collation", "Null", "Key", "Default", "Extra", "Privileges", "Comment")
		}
		var like func(string) bool
		if p, ok := opt["like"]; ok {
			like = likeMatcher(p)
		} else if c, ok := opt["column"]; ok {
			like = likeMatcher(c) // DESCRIBE t col: a pattern too
		}
		for _, c := range cols {
			if like != nil && !like(c.name) {
				continue
			}
			if full {
				coll := ir.Null()
				if c.typ == TypeText {
					coll = ir.String("utf8mb4_general_ci")
				}
				r.Rows = append(r.Rows, []ir.Value{ir.String(c.name), ir.String(c.sqlType), coll, ir.String("YES"), ir.String(c.key), ir.Null(), ir.String(""), ir.String("select"), ir.String(c.extra)})
				continue
			}
			r.Rows = append(r.Rows, []ir.Value{ir.String(c.name), ir.String(c.sqlType), ir.String("YES"), ir.String(c.key), ir.Null(), ir.String(c.extra)})
		}
		return r, nil
	case "index":
		if _, err := ms.describe(ctx, arg); err != nil {
			return Result{}, err
		}
		// Index cardinalities estimate distinct counts: none are shown.
		return Result{Columns: textColumns("Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name", "Collation",
			"Cardinality", "Sub_part", "Packed", "Null", "Index_type", "Comment", "Index_comment", "Visible", "Expression")}, nil
	case "create table":
		cols, err := ms.describe(ctx, arg)
		if err != nil {
			return Result{}, err
		}
		name := arg
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:]
		}
		var b strings.Builder
		b.WriteString("CREATE TABLE `" + name + "` (\n")
		for i, c := range cols {
			if i > 0 {
				b.WriteString(",\n")
			}
			b.WriteString("  `" + c.name + "` " + c.sqlType + " DEFAULT NULL")
			if c.extra != "" {
				b.WriteString(" COMMENT '" + strings.ReplaceAll(c.extra, "'", "''") + "'")
			}
		}
		// Only the columns the policy exposes, with what it declares.
		b.WriteString("\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4")
		return Result{Columns: textColumns("Table", "Create Table"), Rows: [][]ir.Value{{ir.String(name), ir.String(b.String())}}}, nil
	}
	return Result{}, sqlerr.New(sqlerr.FeatureNotSupported, "SHOW %s is not supported by the privacy proxy", strings.ToUpper(what))
}

// currentDatabase is the name SHOW TABLES reports the tables under (the
// policy decides it, so that the same name resolves in queries).
func (ms *mySession) currentDatabase() string { return ms.core.Policy().MySQLDatabase(ms.database) }

// databases lists the current database and the policy's schemas.
func (ms *mySession) databases() []string {
	set := map[string]bool{"information_schema": true, ms.currentDatabase(): true}
	for _, dn := range ms.core.Policy().DatasetNames {
		for _, t := range ms.core.Policy().Datasets[dn].Tables {
			if t.Schema != "" {
				set[t.Schema] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// tables lists the policy's tables (private and public), sorted; with a
// database, only those that database.table names in a query (the policy's
// one rule, policies.Policy.Resolve), so that what SHOW TABLES lists
// under a database is what resolves there.
func (ms *mySession) tables(database string) []*policies.Table {
	pol := ms.core.Policy()
	var out []*policies.Table
	for _, dn := range pol.DatasetNames {
		for _, t := range pol.Datasets[dn].Tables {
			if t == nil {
				continue
			}
			if database != "" {
				if _, r := pol.Resolve(ms.core.Names(), database, t.Name); r != t {
					continue
				}
			}
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// colDesc is one DESCRIBE row.
type colDesc struct {
	name, sqlType, key, extra string
	typ                       ColType
}

// describe returns the columns of a table the policy exposes, from the
// builder of both emulated catalogs (emulated.Describe): its declared
// columns, or for a public table without a column list, the backend's. A
// private table that declares none shows none: its backend columns are
// not the policy's to expose (the PostgreSQL emulation's \d agrees).
func (ms *mySession) describe(ctx context.Context, qualified string) ([]colDesc, error) {
	schema, name := "", qualified
	if i := strings.LastIndexByte(qualified, '.'); i >= 0 {
		schema, name = qualified[:i], qualified[i+1:]
	}
	// The names a query may use (policies.Policy.Resolve), so DESCRIBE
	// db.t works exactly when SELECT ... FROM db.t does.
	_, t := ms.core.Policy().Resolve(ms.core.Names(), schema, name)
	if t == nil {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "Table '%s' doesn't exist or is not exposed by the privacy policy", qualified)
	}
	es, err := ms.core.Describe(ctx, []*policies.Table{t})
	if err != nil {
		return nil, err
	}
	var out []colDesc
	for i, mc := range emulated.MySQLTables(es)[0].Columns {
		out = append(out, colDesc{name: mc.Name, sqlType: mc.ColumnType, key: mc.Key, extra: mc.Comment, typ: exposedType(es[0].Columns[i])})
	}
	return out, nil
}

// FieldList answers COM_FIELD_LIST (the mysql CLI's column completion).
func (ms *mySession) FieldList(ctx context.Context, table string) ([]Column, error) {
	cols, err := ms.describe(ctx, table)
	if err != nil {
		return nil, err
	}
	out := make([]Column, len(cols))
	for i, c := range cols {
		out[i] = Column{Name: c.name, Type: c.typ}
	}
	return out, nil
}
