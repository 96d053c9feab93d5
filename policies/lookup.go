package policies

import (
	"strconv"
	"strings"
)

// User returns the user with the given login name (case-insensitive), or
// nil.
func (p *Policy) User(name string) *User {
	for _, u := range p.Users {
		if u != nil && strings.EqualFold(u.Name, name) {
			return u
		}
	}
	return nil
}

// Dataset returns the dataset with the given name, or nil. Dataset names
// are case-sensitive, like the budgets that refer to them.
func (p *Policy) Dataset(name string) *Dataset { return p.Datasets[name] }

// Budget returns the user's total budget on a dataset; ok is false when the
// user may not query it.
func (u *User) Budget(dataset string) (b Budget, ok bool) {
	b, ok = u.Budgets[dataset]
	return b, ok
}

// DefaultSchema is the schema a table with Schema "" lives in: "public" for
// PostgreSQL, "main" for SQLite, the DSN's database for MySQL ("" when the
// DSN names none, meaning any schema matches).
func (p *Policy) DefaultSchema() string {
	switch p.Backend.Driver {
	case "postgres":
		return "public"
	case "sqlite":
		return "main"
	case "mysql":
		return mysqlDatabase(p.Backend.DSN)
	}
	return ""
}

// mysqlDatabase extracts dbname from a go-sql-driver/mysql DSN
// ([user[:pass]@][proto[(addr)]]/dbname[?params]). The password may contain
// '/', so the database is after the last '/' that follows the last '@'
// (or ')').
func mysqlDatabase(dsn string) string {
	s, _, _ := strings.Cut(dsn, "?")
	if i := strings.LastIndexAny(s, "@)"); i >= 0 {
		s = s[i+1:]
	}
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return ""
	}
	return s[i+1:]
}

// LookupTable finds a table by the names the backend itself uses, case-
// insensitively: Schema "" in the query matches a table declared without a
// schema or with the backend's default schema; a query schema matches a
// table declared with that schema, or declared without one when it is the
// default schema. With MySQL and a DSN without a database, schemas are not
// compared at all. Table names are unique across datasets (Validate
// enforces it), so at most one table matches. A name that resolves here
// means the same relation to the backend, which is what a statement passed
// through as text needs; clients' own names go through Resolve.
func (p *Policy) LookupTable(schema, name string) (*Dataset, *Table) {
	return p.lookup(schema, name, nil)
}

// Names is how one client names the place tables live: the schema a
// PostgreSQL catalog shows, the database a MySQL catalog shows.
type Names struct {
	// Dialect is the client's SQL dialect, "postgres" or "mysql"; any
	// other value (a command-line tool) knows only the backend's names.
	Dialect string
	// Database is a MySQL session's current database ("" when the client
	// chose none).
	Database string
	// ExactTableNames: a MySQL client's table and database names compare
	// case-sensitively, as on a backend with lower_case_table_names = 0.
	// Otherwise (1 or 2, the embedded SQLite, which compares names
	// case-insensitively, and a backend that does not say) they compare
	// case-insensitively. PostgreSQL clients always compare exactly.
	ExactTableNames bool
}

// exact reports whether names compare exactly (case-sensitively): always
// for PostgreSQL, whose parser folds unquoted names to lower case and keeps
// quoted ones as written, so that "PEOPLE" is not the table people; for
// MySQL with ExactTableNames.
func (n Names) exact() bool {
	return n.Dialect == "postgres" || n.Dialect == "mysql" && n.ExactTableNames
}

// ExactColumns reports whether column names compare exactly: PostgreSQL
// only (MySQL's column names are case-insensitive whatever the platform).
func (n Names) ExactColumns() bool { return n.Dialect == "postgres" }

// PostgresSchema is the schema the PostgreSQL catalog emulation shows a
// table declared without a schema in, whatever the backend calls it.
const PostgresSchema = "public"

// MySQLDatabase is the database a MySQL session's catalog (SHOW DATABASES,
// SHOW TABLES, DATABASE(), the emulated information_schema) shows the
// tables declared without a schema in: the session's current database,
// else the backend's default schema (DefaultSchema), else "ddp".
func (p *Policy) MySQLDatabase(session string) string {
	if session != "" {
		return session
	}
	if d := p.DefaultSchema(); d != "" {
		return d
	}
	return "ddp"
}

// CatalogSchema is the schema (PostgreSQL) or database (MySQL) the proxy's
// catalog shows t in for a client with these names: the declared schema
// when there is one; otherwise "public" to PostgreSQL clients and the
// session's database to MySQL clients; otherwise the backend's default.
func (p *Policy) CatalogSchema(n Names, t *Table) string {
	switch {
	case t.Schema != "":
		return strings.ToLower(t.Schema)
	case n.Dialect == "postgres":
		return PostgresSchema
	case n.Dialect == "mysql":
		return p.MySQLDatabase(n.Database)
	}
	return p.DefaultSchema()
}

// Resolve finds the table a client names schema.name. This is the one rule
// for client names: a schema resolves a table when LookupTable accepts it
// (the backend's own names, so unqualified names resolve as they always
// did) or when it is the name the client's catalog shows the table under
// (CatalogSchema), so every name psql's \dt or MySQL's SHOW DATABASES
// offers works in a query. Policy names are lower case (unique whatever
// their case), as the backend's are. A PostgreSQL client's names compare
// exactly: its parser folded unquoted names, so only a quoted name with a
// capital ("PEOPLE") differs, and it names another relation, as in
// PostgreSQL. A MySQL client's compare case-insensitively, as with
// lower_case_table_names = 1 (the default on Windows and macOS, and what
// most hosted servers use), unless n.ExactTableNames. The backend is
// always sent the declared name, never the client's.
func (p *Policy) Resolve(n Names, schema, name string) (*Dataset, *Table) {
	return p.lookup(schema, name, &n)
}

func (p *Policy) lookup(schema, name string, n *Names) (*Dataset, *Table) {
	if n != nil && n.exact() && (name != strings.ToLower(name) || schema != strings.ToLower(schema)) {
		return nil, nil // a capital: not a policy (so not a backend) name
	}
	name = strings.ToLower(name)
	def := p.DefaultSchema()
	for _, dn := range p.DatasetNames {
		d := p.Datasets[dn]
		t := d.Tables[name]
		if t == nil {
			continue
		}
		if schemaMatches(schema, t.Schema, def, p.Backend.Driver) {
			return d, t
		}
		if n != nil && schema != "" && strings.EqualFold(schema, p.CatalogSchema(*n, t)) {
			return d, t
		}
	}
	return nil, nil
}

// Column returns the column with the given name (case-insensitive), or nil.
func (t *Table) Column(name string) *Column {
	if c, ok := t.Columns[name]; ok {
		return c
	}
	return t.Columns[strings.ToLower(name)]
}

// ClampCountsAtZero reports whether noisy counts are clamped at 0 (the
// default).
func (d *Dataset) ClampCountsAtZero() bool { return d.ClampCounts == nil || *d.ClampCounts }

// SharesReleases reports whether a release is served to every user who
// asks the identical query (the default), rather than made per user.
func (d *Dataset) SharesReleases() bool { return d.ShareReleases == nil || *d.ShareReleases }

// HasBounds reports whether the column declares [lo, hi] bounds (SUM and
// AVG clamp to them, or else to a static domain's extent).
func (c *Column) HasBounds() bool { return len(c.Bounds) == 2 }

// Lo is the lower bound (0 without bounds; check HasBounds first).
func (c *Column) Lo() float64 {
	if !c.HasBounds() {
		return 0
	}
	return c.Bounds[0]
}

// Hi is the upper bound (0 without bounds; check HasBounds first).
func (c *Column) Hi() float64 {
	if !c.HasBounds() {
		return 0
	}
	return c.Bounds[1]
}

// Line returns the line of the key at path, or 0 when the file did not
// write it. See doc.go for the path scheme.
func (p *Policy) Line(path string) int { return p.lines[path] }

// nearestLine is the line of path or, for a key the file left out, of its
// nearest written ancestor (a missing domain points at its column).
func (p *Policy) nearestLine(path string) int {
	for path != "" {
		if l, ok := p.lines[path]; ok {
			return l
		}
		i := strings.LastIndexByte(path, '.')
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

// Position returns "file:line" for path, for messages such as "GROUP BY zip
// needs a declared domain: datasets.census.tables.people.columns.zip.domain
// (census.yaml:14)". A key the file left out is placed at its nearest
// written ancestor; when nothing is known it returns path itself.
func (p *Policy) Position(path string) string {
	l := p.nearestLine(path)
	switch {
	case l == 0:
		return path
	case p.Source == "":
		return "line " + strconv.Itoa(l)
	}
	return p.Source + ":" + strconv.Itoa(l)
}

func schemaMatches(query, declared, def, driver string) bool {
	if driver == "mysql" && def == "" {
		return true
	}
	norm := func(s string) string {
		if s == "" {
			return strings.ToLower(def)
		}
		return strings.ToLower(s)
	}
	return norm(query) == norm(declared)
}

// Suggest names the table or column a misspelt name probably meant: the
// same name ignoring case, else the closest within two edits (closest),
// "" when nothing is close. candidates are policy names (lower case).
func Suggest(name string, candidates []string) string {
	for _, c := range candidates {
		if strings.EqualFold(c, name) {
			return c
		}
	}
	return closest(name, candidates)
}

// TableNames lists the policy's table names, sorted by dataset order.
func (p *Policy) TableNames() []string {
	var out []string
	for _, dn := range p.DatasetNames {
		out = append(out, p.Datasets[dn].TableNames...)
	}
	return out
}
