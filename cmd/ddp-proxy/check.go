package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/connect"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/prepare"
)

func cmdCheck(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connectFlag := fs.Bool("connect", false, "also connect to the backend and check that every declared table and column exists, with a type that fits the declared one")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitError{2}
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: ddp-proxy check [--connect] FILE")
		return exitError{2}
	}
	file := pos[0]
	pol, err := policies.LoadWith(file, policies.LoadOptions{Offline: true})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError{1}
	}
	probs := checkDomainQueries(pol)
	if *connectFlag {
		if missing := pol.MissingEnvOf("backend.dsn"); len(missing) > 0 {
			fmt.Fprintf(stderr, "--connect needs the environment variables backend.dsn refers to, which are not set here (%s)\n", strings.Join(missing, ", "))
			return exitError{1}
		}
		more, err := checkAgainstBackend(context.Background(), pol, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "%s: cannot check against the backend: %v\n", file, err)
			return exitError{1}
		}
		probs = append(probs, more...)
	}
	if len(probs) > 0 {
		for _, p := range probs {
			fmt.Fprintln(stderr, p)
		}
		return exitError{1}
	}
	private, public := 0, 0
	for _, ds := range pol.Datasets {
		for _, t := range ds.Tables {
			if t.Public {
				public++
			} else {
				private++
			}
		}
	}
	for _, r := range pol.MissingEnv {
		fmt.Fprintf(stdout, "note: environment variable %s (%s) is not set here; ddp-proxy serve will need it\n", r.Name, r.Setting)
	}
	for _, n := range unboundedNotes(pol) {
		fmt.Fprintln(stdout, n)
	}
	fmt.Fprintf(stdout, "%s: ok (%d datasets, %d private and %d public tables, %d users)\n",
		file, len(pol.Datasets), private, public, len(pol.Users))
	for _, dn := range pol.DatasetNames {
		if an := pol.Datasets[dn].Analysis; an != nil { // blowfish/induced: the load-time bound
			fmt.Fprintf(stdout, "  %s (model %s): %s\n", dn, pol.Datasets[dn].Model, an)
		}
	}
	return nil
}

// checkDomainQueries parses every domain query and checks that it reads
// only public tables of the policy: a domain is released as group keys
// without noise, so it must not come from private data.
func checkDomainQueries(pol *policies.Policy) []string {
	d := parser.Postgres
	if pol.Backend.Driver == "mysql" {
		d = parser.MySQL
	}
	var probs []string
	for _, dsName := range pol.DatasetNames {
		ds := pol.Datasets[dsName]
		for _, tName := range ds.TableNames {
			t := ds.Tables[tName]
			for _, cName := range t.ColumnNames {
				c := t.Columns[cName]
				if c.Domain == nil || c.Domain.Query == "" {
					continue
				}
				path := "datasets." + dsName + ".tables." + tName + ".columns." + cName + ".domain.query"
				if msg := domainQueryProblem(pol, d, c.Domain.Query); msg != "" {
					probs = append(probs, pol.Position(path)+": "+path+": "+msg)
				}
			}
		}
	}
	return probs
}

func domainQueryProblem(pol *policies.Policy, d parser.Dialect, sql string) string {
	stmts, err := parser.Parse(d, sql)
	if err != nil {
		return "the domain query does not parse: " + err.Error()
	}
	if len(stmts) != 1 || stmts[0].Kind != ir.StmtSelect {
		return "the domain query must be exactly one SELECT"
	}
	if len(stmts[0].Relations) == 0 {
		return "the domain query must read a public table"
	}
	var bad []string
	for _, r := range stmts[0].Relations {
		if _, t := pol.LookupTable(r.Schema, r.Name); t == nil || !t.Public {
			bad = append(bad, r.Name)
		}
	}
	if len(bad) > 0 {
		return "the domain query reads " + strings.Join(bad, ", ") +
			", which is not a public table of the policy: domains are released exactly, so they must come from public data (declare the table with public: true)"
	}
	return ""
}

// columnLister is implemented by every backend (for check --connect).
type columnLister interface {
	Columns(ctx context.Context, schema, table string) ([]backends.ColumnInfo, error)
}

// checkAgainstBackend verifies that every declared table exists and has
// the declared columns, unit and key. It reads the schema only.
func checkAgainstBackend(ctx context.Context, pol *policies.Policy, noteOut io.Writer) ([]string, error) {
	be, err := connect.Open(ctx, pol.Backend, nil)
	if err != nil {
		return nil, err
	}
	defer be.Close()
	cl, ok := be.(columnLister)
	if !ok {
		return nil, fmt.Errorf("the %s backend cannot list columns", pol.Backend.Driver)
	}
	probs := checkSchema(ctx, pol, cl)
	if len(probs) == 0 { // the tables exist: constrained columns must hold only their domains
		if err := prepare.VerifyConstrainedDomains(ctx, pol, be); err != nil {
			probs = append(probs, err.Error())
		}
	}
	more, notes := checkDependence(ctx, pol, be)
	for _, n := range notes {
		fmt.Fprintln(noteOut, n)
	}
	return append(probs, more...), nil
}

// checkSchema compares the policy's tables with the backend's: every
// declared table, column, unit and key exists, with a type that fits the
// declared one. It reads the schema only. check --connect reports its
// problems; serve logs them as warnings (a mismatch makes the queries that
// touch it fail, refunded where the backend refuses them unprepared).
func checkSchema(ctx context.Context, pol *policies.Policy, cl columnLister) []string {
	var probs []string
	add := func(path, format string, args ...any) {
		probs = append(probs, pol.Position(path)+": "+path+": "+fmt.Sprintf(format, args...))
	}
	for _, dn := range pol.DatasetNames {
		ds := pol.Datasets[dn]
		for _, tn := range ds.TableNames {
			t := ds.Tables[strings.ToLower(tn)]
			if t == nil {
				continue
			}
			tpath := "datasets." + dn + ".tables." + t.Name
			cols, err := cl.Columns(ctx, t.Schema, t.Name)
			if err != nil {
				add(tpath, "table %s was not found in the backend (or the backend user cannot read it)", t.Name)
				continue
			}
			have := map[string]bool{}
			types := map[string]string{}
			for _, c := range cols {
				have[strings.ToLower(c.Name)] = true
				types[strings.ToLower(c.Name)] = c.Type
			}
			for _, cn := range t.ColumnNames {
				if !have[strings.ToLower(cn)] {
					add(tpath+".columns."+strings.ToLower(cn), "column %s does not exist in backend table %s", cn, t.Name)
					continue
				}
				decl := t.Columns[strings.ToLower(cn)]
				if ok, want := backendTypeFits(pol.Backend.Driver, decl.Type, types[strings.ToLower(cn)]); !ok {
					add(tpath+".columns."+strings.ToLower(cn)+".type", "column %s is declared %s but is %s in backend table %s; declare the type that matches it, or use a column of type %s",
						cn, decl.Type, types[strings.ToLower(cn)], t.Name, want)
				}
			}
			if t.Unit != "" && !have[strings.ToLower(t.Unit)] {
				add(tpath+".unit", "unit column %s does not exist in backend table %s", t.Unit, t.Name)
			}
			if t.Key != "" && !have[strings.ToLower(t.Key)] {
				add(tpath+".key", "key column %s does not exist in backend table %s", t.Key, t.Name)
			}
		}
	}
	return probs
}
