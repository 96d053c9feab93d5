package session

import (
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// infoSchemaAllowed are the information_schema tables a MySQL client may
// read through the proxy on a MySQL backend. It is an allow list (fail
// closed): COLUMN_STATISTICS (histograms), INNODB_* and the MariaDB
// userstat tables (row counts, sizes), PROCESSLIST (other sessions'
// statements) and anything new are refused. Rows naming tables the policy
// does not declare are dropped by hideUnexposed.
var infoSchemaAllowed = map[string]bool{
	"schemata": true, "tables": true, "columns": true, "statistics": true, "views": true,
	"key_column_usage": true, "table_constraints": true, "referential_constraints": true, "check_constraints": true,
	"routines": true, "parameters": true, "triggers": true, "events": true,
	"character_sets": true, "collations": true, "collation_character_set_applicability": true,
	"engines": true, "keywords": true, "column_privileges": true, "table_privileges": true, "schema_privileges": true,
}

// mysqlStatisticsColumns extend planner.StatisticsColumns with MySQL
// catalog columns that reveal counts about private data: AUTO_INCREMENT
// (rows ever inserted), index CARDINALITY (distinct values), CHECKSUM,
// UPDATE_TIME / CHECK_TIME (when data changed), InnoDB NUM_ROWS. They are
// refused when named and blanked when selected with *.
var mysqlStatisticsColumns = map[string]bool{
	"auto_increment": true, "cardinality": true, "checksum": true, "update_time": true, "check_time": true,
	"num_rows": true, "max_data_length": true, "clust_index_size": true, "other_index_size": true, "modified_counter": true,
}

// checkCatalog enforces the MySQL catalog rules before a statement reaches
// the shared session: information_schema passes through only to a MySQL
// backend, only the allowed tables, and never naming a statistics column.
func (ms *mySession) checkCatalog(st *ir.Statement) error {
	info := false
	for _, r := range st.Relations {
		if !strings.EqualFold(r.Schema, "information_schema") {
			continue
		}
		info = true
		if ms.p.pol.Backend.Driver != "mysql" {
			return sqlerr.New(sqlerr.FeatureNotSupported,
				"information_schema is only forwarded to a MySQL backend; this proxy's backend is %s", ms.p.pol.Backend.Driver).
				WithHint("SHOW TABLES, SHOW COLUMNS FROM t and DESCRIBE t list what the policy exposes")
		}
		if !infoSchemaAllowed[strings.ToLower(r.Name)] {
			return sqlerr.New(sqlerr.InsufficientPrivilege,
				"information_schema.%s holds statistics about private data or server state and is not readable through the privacy proxy", strings.ToUpper(r.Name))
		}
	}
	if !info {
		return nil
	}
	lower := strings.ToLower(st.Text)
	for c := range mysqlStatisticsColumns {
		if containsIdent(lower, c) {
			return sqlerr.New(sqlerr.InsufficientPrivilege,
				"catalog column %s describes private data (row counts, sizes or value statistics) and is not readable through the privacy proxy", strings.ToUpper(c))
		}
	}
	return nil
}

// containsIdent reports whether word occurs in s as a whole identifier.
func containsIdent(s, word string) bool {
	isIdent := func(b byte) bool { return b == '_' || b == '$' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' }
	for i := 0; ; {
		j := strings.Index(s[i:], word)
		if j < 0 {
			return false
		}
		k := i + j
		if (k == 0 || !isIdent(s[k-1])) && (k+len(word) >= len(s) || !isIdent(s[k+len(word)])) {
			return true
		}
		i = k + 1
	}
}

// blankMySQLStatistics nulls the MySQL statistics columns of a
// pass-through result (SELECT * FROM information_schema.TABLES); the
// shared session has blanked TABLE_ROWS, DATA_LENGTH and the like already.
func (ms *mySession) blankMySQLStatistics(r *Result) {
	for i, c := range r.Columns {
		if mysqlStatisticsColumns[strings.ToLower(c.Name)] {
			for _, row := range r.Rows {
				row[i] = ir.Null()
			}
		}
	}
}
