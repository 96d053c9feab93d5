package session

import (
	"regexp"
	"sort"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
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
			schema := t.Schema
			if schema == "" {
				schema = "public"
			}
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

// emptyCatalogAnswer answers a query that reads only the PostgreSQL catalog
// when the backend is not PostgreSQL: the catalog there is empty, so the
// answer is no rows (with the query's column names). Drivers probe the
// catalog on connect (psycopg2/SQLAlchemy look up the hstore type) and
// must not fail; the tables themselves are listed by \dt from the policy.
func emptyCatalogAnswer(st *ir.Statement) (Result, bool) {
	if len(st.OutputNames) == 0 || len(st.Relations) == 0 {
		return Result{}, false
	}
	for _, r := range st.Relations {
		if !strings.EqualFold(r.Schema, "pg_catalog") && !(r.Schema == "" && strings.HasPrefix(strings.ToLower(r.Name), "pg_")) {
			return Result{}, false
		}
	}
	r := Result{Tag: "SELECT 0"}
	for _, n := range st.OutputNames {
		r.Columns = append(r.Columns, Column{Name: n, Type: TypeText})
	}
	return r, true
}

// tableNameColumns are catalog result columns that name a relation, with
// the column that names its schema in the same catalog.
var tableNameColumns = map[string]string{
	"relname": "nspname", "table_name": "table_schema", "tablename": "schemaname", "viewname": "schemaname",
}

// systemSchema reports whether a schema belongs to the server itself.
func systemSchema(s string) bool {
	s = strings.ToLower(s)
	return s == "pg_catalog" || s == "information_schema" || strings.HasPrefix(s, "pg_toast") || strings.HasPrefix(s, "pg_temp")
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
		if sc, ok := tableNameColumns[strings.ToLower(c.Name)]; ok && nameCol < 0 {
			nameCol = i
			for j, c2 := range r.Columns {
				if strings.EqualFold(c2.Name, sc) {
					schemaCol = j
				}
			}
		}
	}
	if nameCol < 0 {
		return
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
