package planner

import (
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sensitivity"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// ExplainDependence is what explain adds for the ddp model: one
// "dependence" object.
type ExplainDependence struct {
	Dependence *DependenceExplain `json:"dependence,omitempty"`
}

// DependenceExplain describes how the dependent perturbation mechanism
// (liu2016 Eq. 23–25) calibrated this query.
type DependenceExplain struct {
	// Kind is groups, edges or size.
	Kind string `json:"kind"`
	// L is the dependence size (largest group; 1 + largest out-degree; the
	// declared size).
	L int `json:"L"`
	// MaxDependentSensitivity is the largest DS = m·ΔQ over the query's
	// aggregates, in output units (the sensitivity the noise is scaled to).
	MaxDependentSensitivity float64 `json:"max_dependent_sensitivity"`
	// BaselineSensitivity is the largest L·ΔQ (liu2016 Theorem 7, every
	// dependent unit fully dependent), for comparison.
	BaselineSensitivity float64 `json:"baseline_sensitivity"`
	// Multiplier is m: DS = m·ΔQ, with m ≥ f(m) = max_i(1 + Σ_j ρ_ij)
	// checked (FOfMultiplier is f(m)).
	Multiplier    float64 `json:"multiplier"`
	FOfMultiplier float64 `json:"f_of_multiplier"`
	// Fallback is set when m = L was used (no smaller m passed the check).
	Fallback bool `json:"fallback,omitempty"`
	// RhoMethod is how ρ_ij were obtained: declared (rho), column
	// (rho_column), full (size: L, ρ = 1) or the model's method (exact,
	// eq18).
	RhoMethod  string     `json:"rho_method"`
	RhoSummary RhoSummary `json:"rho_summary"`
	// MaxWeightedDegree is max_i Σ_{j≠i} ρ_ij (declared ρ) or the largest
	// out-degree (model ρ).
	MaxWeightedDegree float64 `json:"max_weighted_degree"`
	// DeltaQ says which per-unit sensitivity ΔQ is: a value change of one
	// unit (liu2016 Def. 3), whatever the dataset's neighbors says.
	DeltaQ string `json:"delta_q"`
	// Structure is the summary read from the backend at load.
	Structure  *policies.DependenceStructure `json:"structure"`
	Aggregates []DependenceAgg               `json:"aggregates"`
}

// RhoSummary summarises the coefficients in force: the declared ρ_ij over
// links, or the model's ρ at the noise scale used.
type RhoSummary struct {
	policies.Quantiles
	// Sigma is σ(m) = ΔD·m/ε at which the model's ρ was computed (model
	// only; then every quantile is that ρ).
	Sigma float64 `json:"sigma,omitempty"`
	// Basis says what the model's ρ is: Eq. 14 maximised over every query
	// of the same sensitivity (exact), or the larger of that and Eq. 18
	// (eq18); see dependence.Coefficients.AnyQuery.
	Basis string `json:"basis,omitempty"`
}

// DependenceAgg is one aggregate's dependent calibration.
type DependenceAgg struct {
	Label string `json:"label"`
	// Sensitivity is ΔQ_j of one unit under the dataset's neighbours and
	// contribution bound (the dp sensitivity).
	Sensitivity          float64 `json:"sensitivity"`
	DependentSensitivity float64 `json:"dependent_sensitivity"`
	BaselineSensitivity  float64 `json:"baseline_sensitivity"`
	Epsilon              float64 `json:"epsilon"`
}

// dependentSensitivity returns ΔQ, the per-unit sensitivity of one
// aggregate (the dp calculus with value-change neighbours: ΔQ_j is the same
// for every unit j, since every unit contributes at most k rows), and records the dependence
// multiplier m on the aggregate. The noise is then scaled to DS = m·ΔQ
// (liu2016 Eq. 23–24 with ρ_ii = 1: DS = max_i Σ_j ρ_ij ΔQ_j = ΔQ·max_i(1 +
// Σ_{j≠i} ρ_ij) ≤ ΔQ·m). The dependence graph is over units: an edge (a, b)
// says that unit a's change (all of its ≤ k rows, under the dataset's
// neighbour relation) may come with unit b's; a unit absent from the graph
// depends on nobody.
func (b *builder) dependentSensitivity(ds *policies.Dataset, main *policies.Table, s aggShape) (int64, error) {
	var st *policies.DependenceStructure
	if ds.Dependence != nil {
		st = ds.Dependence.Structure
	}
	if st == nil || st.Solver == nil {
		why := "it has not been read from the backend"
		if ds.Dependence != nil && ds.Dependence.Unavailable != "" {
			why = ds.Dependence.Unavailable
		}
		return 0, sqlerr.New(sqlerr.FeatureNotSupported,
			"dataset %s uses dependent DP and its dependence structure is not available: %s", ds.Name, why).
			WithHint("the structure (groups or edges) is read from the backend at policy load; make the backend reachable, or declare dependence: {size: L}")
	}
	if b.plan.Keys.Mode == KeysThreshold {
		// DESIGN.md: threshold key selection is a dp-only mechanism; its δ
		// assumes one unit's k rows, not a unit and its dependents.
		return 0, sqlerr.New(sqlerr.FeatureNotSupported,
			"GROUP BY needs declared domains under dependent DP (dataset %s): threshold key selection only covers one unit's rows, not its dependents'", ds.Name).
			WithHint("declare the domain of every grouping column in the policy")
	}
	// ΔQ_j is a value change of one unit (liu2016 Def. 3: a dependent
	// tuple's value changes), i.e. the bounded-neighbour sensitivity. It is
	// ≥ the unbounded one for every aggregate, so a dataset declared
	// unbounded is covered too (adding or removing unit i, and any change
	// of its dependents).
	dq, err := sensitivity.DP(sensitivity.Bounded, main.MaxRowsPerUnit, sensitivity.Aggregate{Kind: s.Kind, Lo: s.Lo, Hi: s.Hi})
	if err != nil {
		return 0, err
	}
	a := &b.plan.Aggs[s.Index]
	m, err := st.Solver.Multiplier(a.Epsilon)
	if err != nil {
		return 0, sqlerr.Wrap(sqlerr.InvalidParameterValue, err, "cannot solve the dependence multiplier")
	}
	if !(m.M >= m.F) || !(m.M >= 1) || math.IsInf(m.M, 0) {
		// Never reached by the solvers; checked here because it is the
		// guarantee.
		return 0, sqlerr.New(sqlerr.Internal, "internal error: dependence multiplier %v < f(m) = %v", m.M, m.F)
	}
	a.Multiplier = m.M
	q := s.Quantum
	if q == 0 {
		q = 1
	}
	x := b.plan.Dependence
	if x == nil {
		x = &ExplainDependence{Dependence: &DependenceExplain{
			Kind: st.Kind, L: st.L, Multiplier: m.M, FOfMultiplier: m.F, Fallback: m.Fallback,
			MaxWeightedDegree: st.MaxWeightedDegree, Structure: st,
			DeltaQ:    "value change of one unit's ≤ k rows (bounded neighbours, liu2016 Def. 3); covers adding or removing it",
			RhoMethod: rhoMethod(ds.Dependence), RhoSummary: RhoSummary{Quantiles: st.Rho},
		}}
		if m.Rho != nil {
			r := *m.Rho
			basis := "Eq. 14 maximised over every query with the same sensitivity (any-query)"
			if x.Dependence.RhoMethod == policies.RhoMethodEq18 {
				basis = "max(Eq. 18, any-query Eq. 14)"
			}
			x.Dependence.RhoSummary = RhoSummary{Quantiles: policies.Quantiles{Min: r, P50: r, P90: r, P99: r, Max: r, Mean: r}, Sigma: m.Sigma, Basis: basis}
		}
		b.plan.Dependence = x
		rho := fmt.Sprintf("ρ %s, max Σ_j ρ_ij = %.6g", x.Dependence.RhoMethod, st.MaxWeightedDegree)
		if m.Rho != nil {
			rho = fmt.Sprintf("ρ %s = %.4g at σ = %.4g (any-query bound), max degree %d", x.Dependence.RhoMethod, *m.Rho, m.Sigma, st.L-1)
		}
		b.notes = append(b.notes, fmt.Sprintf("dependent DP (%s; L = %d; %s): noise scaled to DS = m·ΔQ, ΔQ a value change of one unit, m = %.6g ≥ f(m) = %.6g; the baseline L·ΔQ would use m = %d",
			st.Source, st.L, rho, m.M, m.F, st.L))
	}
	d := x.Dependence
	da := DependenceAgg{
		Label: a.Label, Sensitivity: float64(dq) * q, DependentSensitivity: float64(dq) * q * m.M,
		BaselineSensitivity: float64(dq) * q * float64(st.L), Epsilon: a.Epsilon,
	}
	d.Aggregates = append(d.Aggregates, da)
	d.MaxDependentSensitivity = max(d.MaxDependentSensitivity, da.DependentSensitivity)
	d.BaselineSensitivity = max(d.BaselineSensitivity, da.BaselineSensitivity)
	return dq, nil
}

func rhoMethod(d *policies.Dependence) string {
	switch {
	case d.Size != 0:
		return "full"
	case d.Edges != nil && d.Edges.Model != nil:
		return d.Edges.Model.RhoMethod
	case d.Edges != nil && d.Edges.RhoColumn != "":
		return "column"
	}
	return "declared"
}

// scale is the discrete Laplace scale of aggregate a, one of n sharing ε:
// sens·n/ε, times the dependence multiplier under ddp — computed exactly
// (the float64 m is an exact rational), so the noise is never below
// DS/(ε/n).
func (b *builder) scale(a *AggPlan, sens int64, eps float64, n int) (Scale, error) {
	if a.Multiplier == 0 || sens == 0 {
		return scaleFor(sens, eps, n)
	}
	if m := a.Multiplier; m == math.Trunc(m) && m >= 1 && m < 1<<20 && sens < 1<<40 {
		return scaleFor(sens*int64(m), eps, n) // integer m (groups with ρ = 1, size: L)
	}
	// ε as the ledger charges it (see scaleFor).
	e, ok := new(big.Rat).SetString(strconv.FormatFloat(eps, 'g', -1, 64))
	if !ok || e.Sign() <= 0 {
		return Scale{}, fmt.Errorf("invalid ε %g", eps)
	}
	if !(a.Multiplier >= 1) || math.IsInf(a.Multiplier, 0) {
		return Scale{}, fmt.Errorf("invalid dependence multiplier %v", a.Multiplier)
	}
	// m = M·2^(x−53) exactly; t = sens·n·M·den(ε) / (num(ε)·2^(53−x)),
	// normalised once.
	frac, x := math.Frexp(a.Multiplier)
	num := new(big.Int).SetInt64(int64(frac * (1 << 53)))
	num.Mul(num, big.NewInt(sens*int64(n)))
	num.Mul(num, e.Denom())
	den := new(big.Int).Set(e.Num())
	if sh := 53 - x; sh >= 0 {
		den.Lsh(den, uint(sh))
	} else {
		num.Lsh(num, uint(-sh))
	}
	return noise.ScaleOf(new(big.Rat).SetFrac(num, den))
}

// SensitivityValue is the sensitivity the noise of a is scaled to, in
// output units: the dependent sensitivity m·ΔQ under ddp, ΔQ otherwise.
func (a AggPlan) SensitivityValue() float64 {
	s := float64(a.Sensitivity) * a.Quantum
	if a.Multiplier > 0 {
		s *= a.Multiplier
	}
	return s
}
