package session

import (
	"context"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/catalog/emulated"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// psql's \dt and \d (without a table name) list relations with one query
// over pg_class. A backend that is not PostgreSQL has no pg_class, so the
// proxy answers that query from the policy: every declared table, private
// or public, and nothing else.
var (
	psqlListRelkinds = regexp.MustCompile(`(?i)c\.relkind\s+IN\s*\(([^)]*)\)`)
	psqlListPattern  = regexp.MustCompile(`(?i)c\.relname\s+OPERATOR\(pg_catalog\.~\)\s+'([^']*)'`)
)

// psqlListRelations answers psql's "List of relations" query, or returns
// ok false when text is not that query.
func (s *Session) psqlListRelations(st *ir.Statement) (Result, bool) {
	text := st.Text
	for _, r := range st.Relations {
		if !strings.EqualFold(r.Schema, "pg_catalog") {
			return Result{}, false
		}
		switch strings.ToLower(r.Name) {
		case "pg_class", "pg_namespace", "pg_am":
		default:
			return Result{}, false
		}
	}
	for _, alias := range []string{`as "Schema"`, `as "Name"`, `as "Type"`, `as "Owner"`} {
		if !strings.Contains(text, alias) {
			return Result{}, false
		}
	}
	if strings.Contains(text, `as "Size"`) || strings.Contains(text, `as "Description"`) {
		return Result{}, false // \dt+ wants sizes: not answered (they would leak row counts anyway)
	}
	m := psqlListRelkinds.FindStringSubmatch(text)
	if m == nil {
		return Result{}, false
	}
	if !strings.Contains(m[1], "'r'") {
		// Only views, sequences or indexes were asked for: there are none.
		return listResult(nil), true
	}
	var nameRE *regexp.Regexp
	if pm := psqlListPattern.FindStringSubmatch(text); pm != nil {
		re, err := regexp.Compile(pm[1])
		if err != nil {
			return Result{}, false
		}
		nameRE = re
	}
	var rows [][]ir.Value
	for _, dn := range s.p.pol.DatasetNames {
		for _, t := range s.p.pol.Datasets[dn].Tables {
			if nameRE != nil && !nameRE.MatchString(t.Name) {
				continue
			}
			schema := s.p.pol.CatalogSchema(s.names(), t)
			rows = append(rows, []ir.Value{ir.String(schema), ir.String(t.Name), ir.String("table"), ir.String("ddp")})
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i][0].Str != rows[j][0].Str {
			return rows[i][0].Str < rows[j][0].Str
		}
		return rows[i][1].Str < rows[j][1].Str
	})
	return listResult(rows), true
}

func listResult(rows [][]ir.Value) Result {
	r := Result{Columns: []Column{{"Schema", TypeName}, {"Name", TypeName}, {"Type", TypeText}, {"Owner", TypeName}}, Rows: rows}
	r.Tag = "SELECT " + itoa(len(rows))
	return r
}

// tableNameColumns are catalog result columns that name a relation, with
// the column that names its schema in the same catalog.
var tableNameColumns = map[string][]string{
	"relname": {"nspname"}, "table_name": {"table_schema", "table_schem"}, "tablename": {"schemaname"}, "viewname": {"schemaname"},
}

// systemSchema reports whether a schema belongs to the server itself.
func systemSchema(s string) bool {
	s = strings.ToLower(s)
	return s == "pg_catalog" || s == "information_schema" || strings.HasPrefix(s, "pg_toast") || strings.HasPrefix(s, "pg_temp")
}

// declaresTableNamed reports whether the policy declares a table of this
// name in any schema.
func (s *Session) declaresTableNamed(name string) bool {
	for _, dn := range s.p.pol.DatasetNames {
		if _, ok := s.p.pol.Datasets[dn].Tables[strings.ToLower(name)]; ok {
			return true
		}
	}
	return false
}

// hideUnexposed drops the rows of a catalog result that name a relation
// the policy does not declare (outside the system schemas), so table
// listings (information_schema.tables, pg_class, pg_tables, SQLAlchemy's
// inspector) show only what analysts may query. Relations whose schema is
// not in the result are judged by name alone: unknown names are hidden
// unless they look like system relations (pg_ prefix).
func (s *Session) hideUnexposed(r *Result) {
	nameCol, schemaCol := -1, -1
	for i, c := range r.Columns {
		if scs, ok := tableNameColumns[strings.ToLower(c.Name)]; ok && nameCol < 0 {
			nameCol = i
			for j, c2 := range r.Columns {
				for _, sc := range scs {
					if strings.EqualFold(c2.Name, sc) {
						schemaCol = j
					}
				}
			}
		}
	}
	if nameCol < 0 {
		// psql's listings (\dt+, \d+, \dv...) alias the columns "Schema"
		// and "Name"; a lone "name" column elsewhere (pg_settings) is not
		// a relation name.
		for i, c := range r.Columns {
			switch c.Name {
			case "Name":
				nameCol = i
			case "Schema":
				schemaCol = i
			}
		}
		if nameCol < 0 || schemaCol < 0 {
			return
		}
	}
	kept := r.Rows[:0]
	for _, row := range r.Rows {
		name := row[nameCol].Text()
		schema := ""
		if schemaCol >= 0 {
			schema = row[schemaCol].Text()
		}
		switch {
		case schemaCol >= 0 && systemSchema(schema):
		case schemaCol < 0 && strings.HasPrefix(strings.ToLower(name), "pg_"):
		case schemaCol < 0:
			// No schema in the result (SQLAlchemy's table list filters
			// by schema in WHERE): a table of that name in any schema.
			if !s.declaresTableNamed(name) && !s.p.exposedIndex(name) {
				continue
			}
		default:
			if _, t := s.p.pol.LookupTable(schema, name); t == nil {
				continue
			}
		}
		kept = append(kept, row)
	}
	r.Rows = kept
	r.Tag = "SELECT " + itoa(len(kept))
}

// emulatedPG holds the proxy's emulated PostgreSQL catalog for a backend of
// another dialect, built from the policy and the backend's schema on the
// first catalog query (a failed build is retried on the next one).
type emulatedPG struct {
	mu  sync.Mutex
	cat *emulated.Catalog
}

// columnLister is implemented by backends that can describe a table.
type columnLister interface {
	Columns(ctx context.Context, schema, table string) ([]backends.ColumnInfo, error)
}

func (p *Proxy) emulatedCatalog(ctx context.Context) (*emulated.Catalog, error) {
	p.catalog.mu.Lock()
	defer p.catalog.mu.Unlock()
	if p.catalog.cat != nil {
		return p.catalog.cat, nil
	}
	var tables []emulated.Table
	for _, dn := range p.pol.DatasetNames {
		for _, t := range p.pol.Datasets[dn].Tables {
			pt := emulated.Table{Schema: t.Schema, Name: t.Name}
			for _, cn := range t.ColumnNames {
				pt.Columns = append(pt.Columns, emulated.Column{Name: cn, TypeOID: policyTypeOID(t.Columns[cn].Type)})
			}
			if len(t.ColumnNames) == 0 && t.Public {
				// A public table without declared columns exposes all of
				// the backend's.
				cl, ok := p.backend.(columnLister)
				if !ok {
					return nil, sqlerr.New(sqlerr.FeatureNotSupported, "the %s backend cannot describe table %s for the emulated catalog", p.pol.Backend.Driver, t.Name)
				}
				cols, err := cl.Columns(ctx, t.Schema, t.Name)
				if err != nil {
					return nil, err
				}
				for _, c := range cols {
					pt.Columns = append(pt.Columns, emulated.Column{Name: strings.ToLower(c.Name), TypeOID: emulated.TypeForBackend(c.Type)})
				}
			}
			tables = append(tables, pt)
		}
	}
	cat, err := emulated.New(p.pol.Backend.Driver, tables)
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.Internal, err, "internal error: the emulated catalog could not be built")
	}
	p.catalog.cat = cat
	// A policy reload makes a new generation with its own catalog; this
	// one's in-memory database is closed once no session uses p.
	runtime.AddCleanup(p, func(c *emulated.Catalog) { c.Close() }, cat)
	return cat, nil
}

// policyTypeOID is the PostgreSQL type a declared column is presented as:
// the type the proxy sends its values in (see policyType).
func policyTypeOID(t string) int64 {
	switch t {
	case policies.TypeInteger:
		return emulated.OIDInt8
	case policies.TypeReal:
		return emulated.OIDFloat8
	case policies.TypeBoolean:
		return emulated.OIDBool
	case policies.TypeDate:
		return 1082
	case policies.TypeTimestamp:
		return 1114
	case policies.TypeTimestampTZ:
		return 1184
	}
	return emulated.OIDText
}

// readsOnlyCatalog reports whether every relation st reads is a
// PostgreSQL catalog relation (pg_catalog, information_schema, or an
// unqualified pg_ name).
func readsOnlyCatalog(st *ir.Statement) bool {
	if len(st.Relations) == 0 {
		return false
	}
	for _, r := range st.Relations {
		s := strings.ToLower(r.Schema)
		if s != "pg_catalog" && s != "information_schema" && !(s == "" && strings.HasPrefix(strings.ToLower(r.Name), "pg_")) {
			return false
		}
	}
	return true
}

// catalogAnswer answers a catalog query from the emulated catalog (a
// backend of another dialect). ok is false when st is not one.
func (s *Session) catalogAnswer(ctx context.Context, st *ir.Statement, args []ir.Value) (Result, bool, error) {
	if s.dialect != parser.Postgres {
		// The emulation is of PostgreSQL's catalog, for PostgreSQL clients.
		return Result{}, false, nil
	}
	if !readsOnlyCatalog(st) && len(st.Relations) > 0 {
		return Result{}, false, nil
	}
	cat, err := s.p.emulatedCatalog(ctx)
	if err != nil {
		return Result{}, true, err
	}
	res, err := cat.Query(ctx, st.Text, args, emulated.Env{
		Database: s.settings["database"], User: s.user.Name,
		Setting: func(name string) (string, bool) { v, ok := s.settings[name]; return v, ok },
		Set:     func(name, value string) error { return s.set(name, value, false) },
	})
	if err != nil {
		return Result{}, true, err
	}
	r := Result{Rows: res.Rows, Tag: "SELECT " + itoa(len(res.Rows))}
	for _, c := range res.Columns {
		r.Columns = append(r.Columns, Column{Name: c.Name, Type: catalogType(c.Type)})
	}
	return r, true, nil
}

// setConfig answers a SELECT of set_config(...) that reads no relation
// (psql, pg_dump and Metabase set the search path with it) from the
// emulated catalog on every backend: like SET, it changes the proxy's
// session, never the backend's.
func (s *Session) setConfig(ctx context.Context, st *ir.Statement, args []ir.Value) (Result, bool, error) {
	if s.dialect != parser.Postgres || st.Kind != ir.StmtSelect || len(st.Relations) > 0 {
		return Result{}, false, nil
	}
	for _, f := range st.Functions {
		if f == "set_config" || f == "pg_catalog.set_config" {
			return s.catalogAnswer(ctx, st, args)
		}
	}
	return Result{}, false, nil
}

func catalogType(t string) ColType {
	switch t {
	case "bool":
		return TypeBool
	case "int2", "int4":
		return TypeInt4
	case "int8":
		return TypeInt8
	case "oid":
		return TypeOID
	case "name":
		return TypeName
	case "float8":
		return TypeFloat8
	case "timestamptz":
		return TypeTimestampTZ
	case "timestamp":
		return TypeTimestamp
	case "date":
		return TypeDate
	}
	return TypeText
}
