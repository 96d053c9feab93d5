package policies

import (
	"errors"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

const fpBase = `version: 1
backend: {driver: sqlite, dsn: x.db}
users:
  - {name: ann, password_env: DDP_TEST_PASSWORD, budgets: {census: {epsilon: 1}}}
datasets:
  census:
    tables:
      people:
        unit: pid
        columns:
          age: {type: integer, bounds: [0, 100]}
          sex: {type: text, domain: {values: [F, M]}}
          kids: {type: integer, domain: {range: [0, 3]}}
      regions:
        public: true
        key: code
`

func fingerprintOf(t *testing.T, src string) string {
	t.Helper()
	return mustLoad(t, "fp.yaml", src).Datasets["census"].Fingerprint
}

func TestFingerprint(t *testing.T) {
	fixtureEnv(t)
	base := fingerprintOf(t, fpBase)
	if len(base) != 64 || strings.Trim(base, "0123456789abcdef") != "" {
		t.Fatalf("fingerprint %q is not hex SHA-256", base)
	}
	same := []struct{ name, src string }{
		{"keys reordered", `datasets:
  census:
    tables:
      regions: {key: code, public: true}
      people:
        columns:
          kids: {domain: {range: [0, 3]}, type: integer}
          sex: {domain: {values: [F, M]}, type: text}
          age: {bounds: [0, 100], type: integer}
        unit: pid
users:
  - {budgets: {census: {epsilon: 1}}, name: ann, password_env: DDP_TEST_PASSWORD}
backend: {dsn: x.db, driver: sqlite}
version: 1
`},
		{"defaults written out", strings.Replace(fpBase, "  census:\n", "  census:\n    model: dp\n    neighbors: unbounded\n    clamp_counts: true\n", 1)},
		{"k written out", strings.Replace(fpBase, "unit: pid", "unit: pid\n        max_rows_per_unit: 1", 1)},
		{"domain order", strings.Replace(fpBase, "[F, M]", "[M, F]", 1)},
		{"range as values", strings.Replace(fpBase, "{range: [0, 3]}", "{values: [3, 2, 1, 0]}", 1)},
		{"case of names", strings.Replace(strings.Replace(fpBase, "people:", "People:", 1), "age:", "AGE:", 1)},
		{"budget changed", strings.Replace(fpBase, "epsilon: 1", "epsilon: 5", 1)},
		{"backend changed", strings.Replace(fpBase, "x.db", "y.db", 1)},
	}
	for _, tc := range same {
		if tc.src == fpBase {
			t.Fatalf("%s: replacement did not apply", tc.name)
		}
		if got := fingerprintOf(t, tc.src); got != base {
			t.Errorf("%s changed the fingerprint", tc.name)
		}
	}
	differ := []struct{ name, old, new string }{
		{"bound", "[0, 100]", "[0, 120]"},
		{"k", "unit: pid", "unit: pid\n        max_rows_per_unit: 2"},
		{"unit", "unit: pid", "unit: hid"},
		{"neighbors", "  census:\n", "  census:\n    neighbors: bounded\n"},
		{"clamp", "  census:\n", "  census:\n    clamp_counts: false\n"},
		{"domain value", "[F, M]", "[F, M, X]"},
		{"range", "[0, 3]", "[0, 4]"},
		{"type", "age: {type: integer", "age: {type: real"},
		{"column added", "      regions:", "          zip: {type: text}\n      regions:"},
		{"column dropped", "          sex: {type: text, domain: {values: [F, M]}}\n", ""},
		{"public key", "key: code", "key: other"},
		{"schema", "        unit: pid", "        schema: other\n        unit: pid"},
	}
	seen := map[string]string{base: "base"}
	for _, tc := range differ {
		src := strings.Replace(fpBase, tc.old, tc.new, 1)
		if src == fpBase {
			t.Fatalf("%s: replacement did not apply", tc.name)
		}
		got := fingerprintOf(t, src)
		if prev, dup := seen[got]; dup {
			t.Errorf("%s: fingerprint equals that of %s", tc.name, prev)
		}
		seen[got] = tc.name
	}
}

func TestDomainResolution(t *testing.T) {
	src := `version: 1
backend: {driver: sqlite, dsn: x.db}
datasets:
  d:
    tables:
      t:
        unit: id
        columns:
          i: {type: integer, domain: {values: [3, -1, 9007199254740993]}}
          r: {type: real, domain: {values: [1, 2.5, -0.0]}}
          s: {type: text, domain: {values: ["<=50K", "7", "", yes]}}
          b: {type: boolean, domain: {values: [false, true]}}
          g: {type: integer, domain: {range: [-2, 2]}}
          one: {type: integer, domain: {range: [5, 5]}}
          big: {type: integer, domain: {range: [1, 100000]}}
          q: {type: text, domain: {query: SELECT c FROM pub}}
`
	p := mustLoad(t, "d.yaml", src)
	tb := p.Datasets["d"].Tables["t"]
	want := map[string][]ir.Value{
		"i":   {ir.Int(3), ir.Int(-1), ir.Int(9007199254740993)},
		"r":   {ir.Float(1), ir.Float(2.5), ir.Float(0)},
		"s":   {ir.String("<=50K"), ir.String("7"), ir.String(""), ir.String("yes")},
		"b":   {ir.Bool(false), ir.Bool(true)},
		"g":   {ir.Int(-2), ir.Int(-1), ir.Int(0), ir.Int(1), ir.Int(2)},
		"one": {ir.Int(5)},
		"q":   nil,
	}
	for col, w := range want {
		got := tb.Column(col).Domain.Resolved
		if len(got) != len(w) {
			t.Errorf("%s: %d values, want %d", col, len(got), len(w))
			continue
		}
		for i := range w {
			if got[i].Kind != w[i].Kind || ir.CompareValues(got[i], w[i]) != 0 {
				t.Errorf("%s[%d] = %+v, want %+v", col, i, got[i], w[i])
			}
		}
	}
	big := tb.Column("big").Domain.Resolved
	if len(big) != MaxRangeValues || big[0].Int != 1 || big[len(big)-1].Int != 100000 {
		t.Errorf("big range: %d values from %v to %v", len(big), big[0], big[len(big)-1])
	}
	if tb.Column("q").Domain.Query != "SELECT c FROM pub" {
		t.Errorf("query = %q", tb.Column("q").Domain.Query)
	}
}

func TestMultipleProblemsAcrossSections(t *testing.T) {
	// One file, problems in every section: all are reported in one error,
	// in line order.
	src := `version: 3
backend: {driver: db2, dsn: x}
users:
  - {name: a, budgets: {nope: {epsilon: 1}}}
datasets:
  d:
    model: ddp
    tables:
      t:
        columns:
          c: {type: text, bounds: [1, 2]}
`
	ps := problemsOf(t, src)
	wants := []struct {
		line int
		sub  string
	}{
		{1, "version must be 1"},
		{2, `unknown driver "db2"`},
		{4, "none is set"},
		{4, `unknown dataset "nope"`},
		{7, "model ddp needs dependence"},
		{9, "needs unit"},
		{11, "bounds only apply"},
	}
	if len(ps) != len(wants) {
		t.Fatalf("got %d problems, want %d:\n%v", len(ps), len(wants), ps)
	}
	for i, w := range wants {
		if ps[i].Line != w.line || !strings.Contains(ps[i].Message, w.sub) {
			t.Errorf("problem %d = %v, want line %d with %q", i, ps[i], w.line, w.sub)
		}
	}
}

func TestValidateBuiltInGo(t *testing.T) {
	clampOff := false
	p := &Policy{
		Version: 1,
		Backend: Backend{Driver: "postgres", DSN: "postgres://h/db"},
		Users:   []*User{{Name: "u", PasswordEnv: "X", Budgets: map[string]Budget{"d": {Epsilon: 1}}}},
		Datasets: map[string]*Dataset{"d": {
			ClampCounts: &clampOff,
			Tables: map[string]*Table{
				"Zeta":  {Unit: "id", Columns: map[string]*Column{"B": {Type: TypeInteger}, "a": {Type: TypeText}}},
				"alpha": {Public: true},
			},
		}},
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	d := p.Datasets["d"]
	if got := strings.Join(d.TableNames, ","); got != "alpha,zeta" {
		t.Errorf("TableNames = %s, want sorted lower-case alpha,zeta", got)
	}
	if got := strings.Join(d.Tables["zeta"].ColumnNames, ","); got != "a,b" {
		t.Errorf("ColumnNames = %s", got)
	}
	if d.Tables["zeta"].MaxRowsPerUnit != 1 || p.Users[0].DefaultEpsilon != 0.1 || d.Model != ModelDP {
		t.Error("defaults not applied")
	}
	if d.ClampCountsAtZero() || d.Fingerprint == "" {
		t.Errorf("clamp %v fingerprint %q", d.ClampCountsAtZero(), d.Fingerprint)
	}
	fp := d.Fingerprint
	if err := p.Validate(); err != nil || d.Fingerprint != fp {
		t.Errorf("second Validate: %v, fingerprint changed %v", err, d.Fingerprint != fp)
	}
	// A change made in Go is seen by the next Validate.
	d.Tables["zeta"].Columns["b"].Bounds = []float64{3, 1}
	err := p.Validate()
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 1 || ps[0].Path != "datasets.d.tables.zeta.columns.b.bounds" || ps[0].Line != 0 {
		t.Fatalf("err = %#v", err)
	}
	if got := ps[0].Error(); got != "datasets.d.tables.zeta.columns.b.bounds: bounds are reversed; write [1, 3]" {
		t.Errorf("Error() = %q", got)
	}
	// Keys that differ only by case collide.
	d.Tables["ZETA"] = &Table{Unit: "id"}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), `two entries are named "zeta"`) {
		t.Errorf("collision: %v", err)
	}
}

func TestProblemFormat(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{File: "a.yaml", Line: 3, Message: "m"}, "a.yaml:3: m"},
		{Problem{File: "a.yaml", Message: "m"}, "a.yaml: m"},
		{Problem{Line: 3, Message: "m"}, "line 3: m"},
		{Problem{Message: "m"}, "m"},
	}
	for _, tc := range tests {
		if got := tc.p.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.p, got, tc.want)
		}
	}
	ps := Problems{tests[0].p, tests[1].p}
	if got := ps.Error(); got != "a.yaml:3: m\na.yaml: m" {
		t.Errorf("Problems.Error() = %q", got)
	}
	if Problems(nil).err() != nil {
		t.Error("empty Problems must be a nil error")
	}
}
