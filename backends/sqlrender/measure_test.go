package sqlrender_test

import (
	"errors"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestMeasureIsRender: Measure (the measuring renderer) reports the shape,
// the text length and the error of a full rendering, for every backend
// query the planner makes from the SQL texts of the planner, release and
// session tests, in every dialect, and with MaxSQLBytes set at and around
// each statement's length so that the size error strikes at every point
// of the text.
func TestMeasureIsRender(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	texts := corpusTexts(t, "../../planner", "../../release", "../../session")
	if len(texts) < 500 {
		t.Fatalf("only %d SQL texts in the test corpus", len(texts))
	}
	dialects := []*sqlrender.Dialect{sqlrender.Postgres(), sqlrender.MySQL(), sqlrender.SQLite()}
	var queries []*ir.BackendQuery
	for _, file := range []string{"planner.yaml", "ddp.yaml", "blowfish.yaml", "synopsis.yaml"} {
		pol, err := policies.Load(filepath.Join("../../planner/testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dialects {
			p := planner.NewWith(pol, planner.Options{Limits: planner.Limits{Dialect: d.Name, MaxParams: d.MaxParams, MaxDepth: d.MaxDepth,
				Measure: func(q *ir.BackendQuery) (planner.Shape, error) {
					queries = append(queries, q)
					s, err := d.Measure(q)
					return planner.Shape{Params: s.Params, Depth: s.Depth}, err
				}}})
			for _, text := range texts {
				for _, pd := range []parser.Dialect{parser.Postgres, parser.MySQL} {
					stmts, err := parser.Parse(pd, text)
					if err != nil || len(stmts) != 1 {
						continue
					}
					for _, u := range pol.Users {
						_, _ = p.Plan(planner.Request{User: u, Dialect: pd.String(), Statement: &stmts[0]})
					}
				}
			}
		}
	}
	if len(queries) < 1000 {
		t.Fatalf("only %d backend queries measured", len(queries))
	}
	checked, failed := 0, 0
	distinct := map[string]bool{}
	for _, q := range queries {
		if k := q.Canonical(); distinct[k] {
			continue
		} else {
			distinct[k] = true
		}
		for _, d := range dialects {
			_, n, err := d.RenderShape(q)
			limits := []int{0, d.MaxSQLBytes}
			if err == nil {
				for _, l := range []int{1, 7, n / 3, n / 2, n - 40, n - 2, n - 1, n, n + 1} {
					if l > 0 {
						limits = append(limits, l)
					}
				}
			}
			for _, l := range limits {
				dl := *d
				dl.MaxSQLBytes = l
				want, wantN, wantErr := dl.RenderShape(q)
				got, gotN, gotErr := dl.MeasureBytes(q)
				checked++
				if wantErr != nil {
					failed++
				}
				if got != want || gotN != wantN || !sameError(gotErr, wantErr) {
					t.Fatalf("%s, MaxSQLBytes %d, %s:\nmeasured %+v, %d bytes, %v\nrendered %+v, %d bytes, %v",
						d.Name, l, q.Canonical(), got, gotN, gotErr, want, wantN, wantErr)
				}
				if s, err := dl.Measure(q); s != got || !sameError(err, gotErr) {
					t.Fatalf("Measure %+v, %v; MeasureBytes %+v, %v", s, err, got, gotErr)
				}
			}
		}
	}
	if failed == 0 || failed == checked {
		t.Fatalf("%d of %d renderings failed: the size limits do not exercise both outcomes", failed, checked)
	}
	t.Logf("%d texts, %d distinct backend queries, %d renderings compared (%d errors)", len(texts), len(distinct), checked, failed)
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var ea, eb *sqlerr.Error
	if !errors.As(a, &ea) || !errors.As(b, &eb) {
		return a.Error() == b.Error()
	}
	return ea.Code == eb.Code && a.Error() == b.Error() && ea.Hint == eb.Hint
}

// corpusTexts returns the string constants of the _test.go files in dirs
// that read as SQL queries.
func corpusTexts(t *testing.T, dirs ...string) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	fset := token.NewFileSet()
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			af, err := goparser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(af, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil || seen[s] || !strings.Contains(strings.ToUpper(s), "SELECT") {
					return true
				}
				seen[s] = true
				out = append(out, s)
				return true
			})
		}
	}
	return out
}
