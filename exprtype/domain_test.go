package exprtype_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// The brute-force oracle of the domain analysis: random expressions over
// columns with tiny bounds or declared domains; every assignment of
// stored values (in and out of the bounds for a bounded integer column,
// every declared value for a column with a domain) is evaluated as
// PostgreSQL evaluates the lowered expression (eval, oracle_test.go), and
// the value must be in the inferred domain whenever one is inferred.
// Columns are taken to hold no NULL (a declared domain's rule: a row
// outside it is not released), so NULL is not among the stored values.

type domainEnv struct {
	x, y       [2]int64
	xDom, rDom []ir.Value // declared domains (nil: none)
	r          [2]float64
}

func (env *domainEnv) draw(rng *rand.Rand) {
	for _, b := range []*[2]int64{&env.x, &env.y} {
		b[0] = int64(rng.IntN(9) - 5)
		b[1] = b[0] + int64(rng.IntN(6))
	}
	env.xDom = nil
	if rng.IntN(3) == 0 {
		// A sparse declared domain with wide bounds: the clamp's range
		// is too large to enumerate, so the declared values are used.
		env.xDom = []ir.Value{ir.Int(-7), ir.Int(0), ir.Int(3), ir.Int(1 << 40)}
		env.x = [2]int64{-7, 1 << 40}
	}
	env.rDom = []ir.Value{ir.Float(-2.5), ir.Float(-1), ir.Float(0), ir.Float(0.5), ir.Float(0.75), ir.Float(3)}
	env.r = [2]float64{-2.5, 3}
	if rng.IntN(2) == 0 {
		// No declared domain: floor and ceil of r derive theirs from
		// its range (Func.RangeImage).
		env.rDom = nil
		env.r = [][2]float64{{-2.5, 3}, {0, 7.75}, {-0.5, 0.5}, {1e-77, 2}}[rng.IntN(4)]
	}
}

func (env *domainEnv) columns(c ir.ColumnRef) (exprtype.Column, error) {
	ref := ir.ColumnRef{Qualifier: "t", Name: c.Name}
	switch c.Name {
	case "x":
		return exprtype.Column{Ref: ref, Type: exprtype.Integer, HasBounds: true, Lo: ir.Int(env.x[0]), Hi: ir.Int(env.x[1]), Domain: env.xDom}, nil
	case "y":
		return exprtype.Column{Ref: ref, Type: exprtype.Integer, HasBounds: true, Lo: ir.Int(env.y[0]), Hi: ir.Int(env.y[1])}, nil
	case "r":
		return exprtype.Column{Ref: ref, Type: exprtype.Real, HasBounds: true, Lo: ir.Float(env.r[0]), Hi: ir.Float(env.r[1]), Domain: env.rDom}, nil
	}
	return exprtype.Column{}, errNoColumn
}

var errNoColumn = errBackend

// stored values: every integer of the bounds and a few beyond (clamped),
// or the declared values.
func (env *domainEnv) stored(name string) []ir.Value {
	switch {
	case name == "x" && env.xDom != nil:
		return env.xDom
	case name == "r" && env.rDom != nil:
		return env.rDom
	case name == "r":
		lo, hi := env.r[0], env.r[1]
		out := []ir.Value{}
		for _, f := range []float64{lo, hi, (lo + hi) / 2, lo - 1, hi + 3, 0, 0.3, -0.7, 2.9999999, 5e-324, 1e-77, math.Nextafter(hi, 0), math.Nextafter(lo, 1)} {
			out = append(out, ir.Float(f))
		}
		return out
	}
	b := env.y
	if name == "x" {
		b = env.x
	}
	var out []ir.Value
	for v := b[0] - 2; v <= b[1]+2; v++ {
		out = append(out, ir.Int(v))
	}
	return append(out, ir.Int(math.MinInt64), ir.Int(math.MaxInt64))
}

func toValue(v val) ir.Value {
	switch {
	case v.null:
		return ir.Null()
	case v.real:
		return ir.Float(v.f)
	}
	return ir.Int(v.i.Int64())
}

func inDomain(v ir.Value, dom []ir.Value) bool {
	return slices.ContainsFunc(dom, func(d ir.Value) bool {
		if v.IsNull() || d.IsNull() {
			return v.IsNull() && d.IsNull()
		}
		return ir.CompareValues(v, d) == 0
	})
}

func TestDomainOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	total, derived, checked := 0, 0, 0
	for trial := range 6000 {
		var env domainEnv
		env.draw(rng)
		e := genNumber(rng, 3)
		lowered, info, err := exprtype.GroupKey(e, env.columns)
		if err != nil || (info.Type != exprtype.Integer && info.Type != exprtype.Real) {
			continue
		}
		total++
		if info.Domain == nil {
			continue
		}
		derived++
		if len(info.Domain) > exprtype.MaxDomain {
			t.Fatalf("%s: a domain of %d values, above MaxDomain", ir.FormatExpr(e), len(info.Domain))
		}
		for _, x := range env.stored("x") {
			for _, y := range env.stored("y") {
				for _, r := range env.stored("r") {
					row := map[string]ir.Value{"x": x, "y": y, "r": r}
					v, err := eval(lowered, row)
					if err != nil {
						t.Fatalf("trial %d: %s (lowered %s): x=%v y=%v r=%v: %v", trial, ir.FormatExpr(e), ir.FormatExpr(lowered), x, y, r, err)
					}
					if !inDomain(toValue(v), info.Domain) {
						t.Fatalf("trial %d: %s (lowered %s, env %+v): x=%v y=%v r=%v gives %v, not in the domain %v",
							trial, ir.FormatExpr(e), ir.FormatExpr(lowered), env, x, y, r, toValue(v), info.Domain)
					}
					checked++
				}
			}
		}
	}
	t.Logf("%d numeric expressions, %d with a derived domain, %d evaluations checked", total, derived, checked)
	if derived < total/4 {
		t.Fatalf("only %d of %d expressions got a domain: the analysis derives too little to be tested", derived, total)
	}
}

// TestDomainExact: for the shapes BI tools send, the derived domain is
// the exact image, computed here by brute force over the column's values.
func TestDomainExact(t *testing.T) {
	age := func(c ir.ColumnRef) (exprtype.Column, error) {
		ref := ir.ColumnRef{Qualifier: "t0", Name: c.Name}
		switch c.Name {
		case "age":
			return exprtype.Column{Ref: ref, Type: exprtype.Integer, HasBounds: true, Lo: ir.Int(17), Hi: ir.Int(90)}, nil
		case "sex":
			return exprtype.Column{Ref: ref, Type: exprtype.Text, Domain: []ir.Value{ir.String("Female"), ir.String("Male")}}, nil
		case "income":
			return exprtype.Column{Ref: ref, Type: exprtype.Real, HasBounds: true, Lo: ir.Float(0), Hi: ir.Float(39999.5)}, nil
		case "city":
			return exprtype.Column{Ref: ref, Type: exprtype.Text, Domain: []ir.Value{ir.String("Oslo"), ir.String("oslo"), ir.String("Bergen")}, Nullable: true}, nil
		}
		return exprtype.Column{}, errNoColumn
	}
	col := func(n string) ir.Expr { return ir.ColumnRef{Name: n} }
	i := func(v int64) ir.Expr { return ir.Literal{Value: ir.Int(v)} }
	s := func(v string) ir.Expr { return ir.Literal{Value: ir.String(v)} }
	image := func(f func(a int64) ir.Value) []ir.Value {
		var out []ir.Value
		for a := int64(17); a <= 90; a++ {
			if v := f(a); !slices.ContainsFunc(out, func(w ir.Value) bool { return w == v }) {
				out = append(out, v)
			}
		}
		return out
	}
	tests := []struct {
		name string
		e    ir.Expr
		want []ir.Value
	}{
		{"decade bins (PostgreSQL integer /)",
			ir.Arith{Op: ir.OpMul, L: ir.Func{Name: "floor", Args: []ir.Expr{ir.Arith{Op: ir.OpDiv, L: col("age"), R: i(10)}}}, R: i(10)},
			image(func(a int64) ir.Value { return ir.Int(a / 10 * 10) })},
		{"decade bins (MySQL real /)",
			ir.Arith{Op: ir.OpMul, L: ir.Func{Name: "floor", Args: []ir.Expr{ir.Arith{Op: ir.OpRealDiv, L: col("age"), R: i(10)}}}, R: i(10)},
			image(func(a int64) ir.Value { return ir.Float(math.Floor(float64(a)/10) * 10) })},
		{"width_bucket", ir.Func{Name: "width_bucket", Args: []ir.Expr{col("age"), i(0), i(100), i(10)}},
			image(func(a int64) ir.Value { return ir.Int(a*10/100 + 1) })},
		{"width_bucket beyond the bounds", ir.Func{Name: "width_bucket", Args: []ir.Expr{col("age"), i(20), i(80), i(3)}},
			image(func(a int64) ir.Value {
				switch {
				case a < 20:
					return ir.Int(0)
				case a >= 80:
					return ir.Int(4)
				}
				return ir.Int((a-20)*3/60 + 1)
			})},
		{"age groups without ELSE", ir.Case{Whens: []ir.When{
			{Cond: ir.Compare{Op: ir.OpLt, L: col("age"), R: i(30)}, Then: s("young")},
			{Cond: ir.Compare{Op: ir.OpLt, L: col("age"), R: i(60)}, Then: s("middle")},
		}}, []ir.Value{ir.String("young"), ir.String("middle"), ir.Null()}},
		{"mod", ir.Arith{Op: ir.OpMod, L: col("age"), R: i(7)}, image(func(a int64) ir.Value { return ir.Int(a % 7) })},
		{"greatest", ir.Func{Name: "greatest", Args: []ir.Expr{col("age"), i(65)}}, image(func(a int64) ir.Value { return ir.Int(max(a, 65)) })},
		{"declared text domain", col("sex"), []ir.Value{ir.String("Female"), ir.String("Male")}},
		{"upper of a text domain", ir.Func{Name: "upper", Args: []ir.Expr{col("sex")}}, []ir.Value{ir.String("FEMALE"), ir.String("MALE")}},
		{"left of a text domain", ir.Func{Name: "left", Args: []ir.Expr{col("sex"), i(1)}}, []ir.Value{ir.String("F"), ir.String("M")}},
		{"floor of a bounded real (its range)", ir.Func{Name: "floor", Args: []ir.Expr{ir.Arith{Op: ir.OpRealDiv, L: col("income"), R: i(10000)}}},
			[]ir.Value{ir.Float(0), ir.Float(1), ir.Float(2), ir.Float(3)}},
		{"nullable column of a LEFT join", ir.Func{Name: "coalesce", Args: []ir.Expr{col("city"), s("none")}},
			[]ir.Value{ir.String("Oslo"), ir.String("oslo"), ir.String("Bergen"), ir.String("none")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, info, err := exprtype.GroupKey(tt.e, age)
			if err != nil {
				t.Fatal(err)
			}
			if len(info.Domain) != len(tt.want) {
				t.Fatalf("domain %v, want %v", info.Domain, tt.want)
			}
			for _, w := range tt.want {
				if !slices.Contains(info.Domain, w) {
					t.Fatalf("domain %v lacks %v (want %v)", info.Domain, w, tt.want)
				}
			}
		})
	}
	// Where no backend-independent image exists, none is claimed.
	unknown := []ir.Expr{
		ir.Func{Name: "nullif", Args: []ir.Expr{col("city"), s("OSLO")}}, // MySQL's collation: 'Oslo' = 'OSLO'
		ir.Func{Name: "greatest", Args: []ir.Expr{col("sex"), s("G")}},   // text order is the collation's
		ir.Func{Name: "lower", Args: []ir.Expr{ir.Func{Name: "concat", Args: []ir.Expr{col("sex"), s("É")}}}},
	}
	for _, e := range unknown {
		if _, info, err := exprtype.GroupKey(e, age); err == nil && info.Domain != nil {
			t.Errorf("%s: domain %v, want none", ir.FormatExpr(e), info.Domain)
		}
	}
}

// TestFold: constant predicates are decided as every backend decides them,
// and left undecided where backends could disagree.
func TestFold(t *testing.T) {
	i := func(v int64) ir.Expr { return ir.Literal{Value: ir.Int(v)} }
	f := func(v float64) ir.Expr { return ir.Literal{Value: ir.Float(v)} }
	s := func(v string) ir.Expr { return ir.Literal{Value: ir.String(v)} }
	null := ir.Literal{Value: ir.Null()}
	tru, fal := ir.Bool(true), ir.Bool(false)
	tests := []struct {
		e    ir.Expr
		want ir.Value
		ok   bool
	}{
		{ir.Between{X: i(31), Lo: i(30), Hi: i(33)}, tru, true},
		{ir.Between{X: i(34), Lo: i(30), Hi: i(33)}, fal, true},
		{ir.Between{X: i(34), Lo: i(30), Hi: i(33), Not: true}, tru, true},
		{ir.In{X: i(3), List: []ir.Expr{i(1), null}}, ir.Null(), true}, // 3 = NULL is unknown
		{ir.In{X: i(3), List: []ir.Expr{i(1), null}, Not: true}, ir.Null(), true},
		{ir.In{X: i(1), List: []ir.Expr{i(1), null}}, tru, true},
		{ir.Compare{Op: ir.OpEq, L: null, R: i(1)}, ir.Null(), true},
		{ir.IsNull{X: null}, tru, true},
		{ir.Compare{Op: ir.OpLt, L: i(2), R: f(2.5)}, tru, true},
		{ir.Compare{Op: ir.OpEq, L: i(1 << 60), R: f(1 << 60)}, ir.Value{}, false}, // beyond 2^53
		{ir.Compare{Op: ir.OpEq, L: s("Female"), R: s("Male")}, fal, true},
		{ir.Compare{Op: ir.OpEq, L: s("Female"), R: s("female")}, ir.Value{}, false}, // MySQL: equal
		{ir.Compare{Op: ir.OpEq, L: s("a"), R: s("a ")}, ir.Value{}, false},          // MySQL PAD SPACE
		{ir.Compare{Op: ir.OpLt, L: s("a"), R: s("B")}, ir.Value{}, false},           // collation order
		{ir.And{L: ir.Compare{Op: ir.OpLt, L: s("a"), R: s("B")}, R: ir.Literal{Value: fal}}, fal, true},
		{ir.Or{L: ir.Compare{Op: ir.OpLt, L: s("a"), R: s("B")}, R: ir.Literal{Value: tru}}, tru, true},
		{ir.And{L: null, R: ir.Literal{Value: tru}}, ir.Null(), true},
		{ir.Not{X: null}, ir.Null(), true},
		{ir.Compare{Op: ir.OpEq, L: ir.Arith{Op: ir.OpMul, L: ir.Arith{Op: ir.OpDiv, L: i(37), R: i(10)}, R: i(10)}, R: i(30)}, tru, true},
		{ir.Compare{Op: ir.OpEq, L: ir.Arith{Op: ir.OpDiv, L: i(1), R: i(0)}, R: i(0)}, ir.Null(), true},
		{ir.Compare{Op: ir.OpGt, L: ir.Clamp{X: i(500), Lo: ir.Int(0), Hi: ir.Int(120)}, R: i(100)}, tru, true},
		{ir.Compare{Op: ir.OpGt, L: ir.ColumnRef{Name: "age"}, R: i(100)}, ir.Value{}, false},
		{ir.Like{X: s("abc"), Pattern: s("a%")}, ir.Value{}, false},
	}
	for _, tt := range tests {
		v, ok := exprtype.Fold(tt.e)
		if ok != tt.ok || ok && (v.Kind != tt.want.Kind || v != tt.want) {
			t.Errorf("Fold(%s) = %v, %v; want %v, %v", ir.FormatExpr(tt.e), v, ok, tt.want, tt.ok)
		}
	}
}
