package session

import (
	"context"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/ddp-proxy/ddp-proxy/catalog"
	"github.com/ddp-proxy/ddp-proxy/catalog/emulated"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// psql's \dt and \d (without a table name) list relations with one query
// over pg_class (the parser recognises it: ir.Statement.PsqlList). A
// backend that is not PostgreSQL has no pg_class, so the proxy answers
// that query from the policy: every declared table, private or public,
// and nothing else.

// psqlListRelations answers psql's "List of relations" query, or returns
// ok false when st is not that query.
func (s *Session) psqlListRelations(st *ir.Statement) (Result, bool) {
	l := st.PsqlList
	if l == nil {
		return Result{}, false
	}
	if !slices.Contains(l.Relkinds, "r") {
		// Only views, sequences or indexes were asked for: there are none.
		return listResult(nil), true
	}
	var nameRE *regexp.Regexp
	if l.HasPattern {
		// psql's pattern is a POSIX regular expression over names.
		re, err := regexp.Compile(l.Pattern)
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
	r := Result{Columns: []Column{{Name: "Schema", Type: TypeName}, {Name: "Name", Type: TypeName}, {Name: "Type", Type: TypeText}, {Name: "Owner", Type: TypeName}}, Rows: rows}
	r.Tag = "SELECT " + itoa(len(rows))
	return r
}

func columnNames(cols []Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// emulatedPG holds the proxy's emulated PostgreSQL catalog for a backend of
// another dialect, built from the policy and the backend's schema on the
// first catalog query (a failed build is retried on the next one).
type emulatedPG struct {
	mu  sync.Mutex
	cat *emulated.Catalog
}

func (p *generation) emulatedCatalog(ctx context.Context) (*emulated.Catalog, error) {
	p.catalog.mu.Lock()
	defer p.catalog.mu.Unlock()
	if p.catalog.cat != nil {
		return p.catalog.cat, nil
	}
	lister, _ := p.backend.(emulated.ColumnLister)
	tables, err := emulated.Describe(ctx, p.pol, policies.Names{Dialect: "postgres"}, emulated.AllTables(p.pol), lister)
	if err != nil {
		return nil, err
	}
	cat, err := emulated.New(p.pol.Backend.Driver, emulated.PGTables(tables))
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.Internal, err, "internal error: the emulated catalog could not be built")
	}
	p.catalog.cat = cat
	// A policy reload makes a new generation with its own catalog; this
	// one's in-memory database is closed once no session uses p.
	runtime.AddCleanup(p, func(c *emulated.Catalog) { c.Close() }, cat)
	return cat, nil
}

// readsOnlyCatalog reports whether every relation st reads is a
// PostgreSQL catalog relation (catalog.IsCatalogRelation).
func readsOnlyCatalog(st *ir.Statement) bool {
	for _, r := range st.Relations {
		if !catalog.IsCatalogRelation("postgres", r.Schema, r.Name) {
			return false
		}
	}
	return len(st.Relations) > 0
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
	return Result{Columns: res.Columns, Rows: res.Rows, Tag: "SELECT " + itoa(len(res.Rows))}, true, nil
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
