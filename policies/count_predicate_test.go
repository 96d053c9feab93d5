package policies

import (
	"reflect"
	"strings"
	"testing"
)

// The SQL form of a count constraint means exactly what the mapping form
// does: same conditions, same fingerprint, same load-time bound.
func TestCountPredicateSQLForm(t *testing.T) {
	pairs := []struct{ sql, mapping string }{
		{`"age IN (0, 1)"`, `{age: [0, 1]}`},
		{`"sex = 'F' AND age BETWEEN 2 AND 5"`, `{sex: F, age: {range: [2, 5]}}`},
		{`"age >= 2 AND region IN ('n', 'e') AND age <= 5"`, `{region: [n, e], age: {range: [2, 5]}}`},
		{`"3 <= age AND age <= 4"`, `{age: {range: [3, 4]}}`},
	}
	for _, p := range pairs {
		load := func(count string) *Dataset {
			t.Helper()
			pol, err := LoadBytes("t.yaml", []byte(analysisHead+"    model: induced\n    constraints: [{count: "+count+"}, {count: {age: [1, 2]}}]\n"+analysisTable))
			if err != nil {
				t.Fatalf("%s: %v", count, err)
			}
			return pol.Datasets["d"]
		}
		a, b := load(p.sql), load(p.mapping)
		ca, cb := a.Constraints[0].Count, b.Constraints[0].Count
		if len(ca) != len(cb) {
			t.Fatalf("%s: %d conditions, want %d", p.sql, len(ca), len(cb))
		}
		byCol := func(cs []Condition) map[string]Condition {
			m := map[string]Condition{}
			for _, c := range cs {
				c.Line = 0
				m[c.Column] = c
			}
			return m
		}
		if !reflect.DeepEqual(byCol(ca), byCol(cb)) {
			t.Errorf("%s: conditions %+v, want %+v", p.sql, ca, cb)
		}
		if a.Analysis == nil || b.Analysis == nil || a.Analysis.String() != b.Analysis.String() {
			t.Errorf("%s: analysis differs from the mapping form", p.sql)
		}
	}
}

// Predicates the constraint analysis cannot represent are refused at the
// constraint's line, never approximated.
func TestCountPredicateRefusals(t *testing.T) {
	for _, c := range []struct{ count, want string }{
		{`"age = 1 OR age = 3"`, "AND of"},
		{`"age < 3"`, "inclusive ranges"},
		{`"age >= 3"`, "needs both a >= and a <= bound"},
		{`"region <> 'n'"`, "inclusive ranges"},
		{`"region LIKE 'n%'"`, "AND of"},
		{`"age NOT IN (1, 2)"`, "column IN"},
		{`"age >= 1 AND age >= 2 AND age <= 4"`, "two >= bounds"},
		{`"age = age"`, "column with a literal"},
		{`"age IN ("`, "not a SQL predicate"},
	} {
		_, err := LoadBytes("t.yaml", []byte(analysisHead+"    model: induced\n    constraints:\n      - count: "+c.count+"\n"+analysisTable))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "t.yaml:7") {
			t.Errorf("count: %s: error %v, want one at t.yaml:7 containing %q", c.count, err, c.want)
		}
	}
}

// buckets: w is the list of width-w buckets over the range domain.
func TestBucketWidth(t *testing.T) {
	load := func(buckets string) (*Dataset, error) {
		pol, err := LoadBytes("t.yaml", []byte(analysisHead+"    model: blowfish\n    secrets: {partition: {column: age, buckets: "+buckets+"}}\n"+analysisTable))
		if err != nil {
			return nil, err
		}
		return pol.Datasets["d"], nil
	}
	a, err := load("4")
	if err != nil {
		t.Fatal(err)
	}
	b, err := load("[[0, 3], [4, 7], [8, 9]]")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Secrets.Buckets, b.Secrets.Buckets) {
		t.Errorf("buckets: 4 over [0, 9] = %v, want %v", a.Secrets.Buckets, b.Secrets.Buckets)
	}
	if a.Analysis.String() != b.Analysis.String() {
		t.Errorf("analysis %q, want %q", a.Analysis.String(), b.Analysis.String())
	}
	for _, bad := range []string{"0", "-2", "x"} {
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), "width") {
			t.Errorf("buckets: %s: error %v, want a width problem", bad, err)
		}
	}
	pol := analysisHead + "    model: blowfish\n    secrets: {partition: {column: region, buckets: 2}}\n" + analysisTable
	if _, err := LoadBytes("t.yaml", []byte(pol)); err == nil || !strings.Contains(err.Error(), "needs an integer column") {
		t.Errorf("width buckets on a text column: %v", err)
	}
}
