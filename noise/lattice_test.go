package noise

import (
	"math"
	"math/big"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

func TestLatticeFor(t *testing.T) {
	tests := []struct {
		name    string
		p       LatticeParams
		wantExp int
		// fine: γ ≤ (Δ/ε)/1024 expected (the lattice is small against the
		// noise); false where the range constraint must win instead.
		fine     bool
		wantCode *sqlerr.Code
	}{
		// 100 ∈ (2^6, 2^7]: γ = 2^(7−30) is the smallest with 100/γ ≤ 2^30.
		{name: "sum dp", p: LatticeParams{Sensitivity: big.NewRat(100, 1), ChangedRows: 1, Epsilon: 0.1, MaxAbs: 100}, wantExp: -23, fine: true},
		// 1024/2^-20 = 2^30 exactly: allowed; 2^-21 would give 2^31.
		{name: "power of two bound", p: LatticeParams{Sensitivity: big.NewRat(5*1024, 1), ChangedRows: 5, Epsilon: 1, MaxAbs: 1024}, wantExp: -20, fine: true},
		{name: "fractional bound", p: LatticeParams{Sensitivity: big.NewRat(3, 4), ChangedRows: 3, Epsilon: 2, MaxAbs: 0.25}, wantExp: -32, fine: true},
		// Δ/ε = 1e-3 is tiny against the values (|x| ≤ 1e6 ∈ (2^19, 2^20]):
		// the range constraint wins, γ = 2^-10 > (Δ/ε)/1024.
		{name: "range wins", p: LatticeParams{Sensitivity: big.NewRat(1, 1000), ChangedRows: 1, Epsilon: 1, MaxAbs: 1e6}, wantExp: -10},
		// γ = 2^-30 would need scale (1+2^-30)·2^30·1e10 > 2^53: raised to
		// the first e with (1+2^e)/(1e-10·2^e) ≤ 2^53, i.e. 2^-e ≤ about
		// 9.007e5, e = −19.
		{name: "scale raises gamma", p: LatticeParams{Sensitivity: big.NewRat(1, 1), ChangedRows: 1, Epsilon: 1e-10, MaxAbs: 1}, wantExp: -19, fine: true},
		// No range constraint; (1+2^e)/2^e ≤ 2^53 first holds at e = −52.
		{name: "zero bound", p: LatticeParams{Sensitivity: big.NewRat(1, 1), ChangedRows: 1, Epsilon: 1, MaxAbs: 0}, wantExp: -52, fine: true},
		{name: "zero sensitivity", p: LatticeParams{Sensitivity: new(big.Rat), ChangedRows: 2, Epsilon: 1, MaxAbs: 3}, wantExp: 2 - 30},
		{name: "huge bound", p: LatticeParams{Sensitivity: big.NewRat(1, 1), ChangedRows: 1, Epsilon: 1, MaxAbs: math.MaxFloat64}, wantExp: 1024 - 30},
		{name: "impossible eps", p: LatticeParams{Sensitivity: big.NewRat(1, 1), ChangedRows: 1, Epsilon: 1e-17, MaxAbs: 1}, wantCode: &sqlerr.InvalidParameterValue},
		{name: "eps 0", p: LatticeParams{Sensitivity: big.NewRat(1, 1), ChangedRows: 1, Epsilon: 0, MaxAbs: 1}, wantCode: &sqlerr.InvalidParameterValue},
		{name: "NaN bound", p: LatticeParams{Sensitivity: big.NewRat(1, 1), ChangedRows: 1, Epsilon: 1, MaxAbs: math.NaN()}, wantCode: &sqlerr.Internal},
		{name: "negative bound", p: LatticeParams{Sensitivity: big.NewRat(1, 1), ChangedRows: 1, Epsilon: 1, MaxAbs: -1}, wantCode: &sqlerr.Internal},
		{name: "no rows", p: LatticeParams{Sensitivity: big.NewRat(1, 1), ChangedRows: 0, Epsilon: 1, MaxAbs: 1}, wantCode: &sqlerr.Internal},
		{name: "nil sensitivity", p: LatticeParams{ChangedRows: 1, Epsilon: 1, MaxAbs: 1}, wantCode: &sqlerr.Internal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := LatticeFor(tt.p)
			if tt.wantCode != nil {
				if !sqlerr.HasCode(err, *tt.wantCode) {
					t.Fatalf("err = %v, want code %s", err, tt.wantCode.Name)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.Exp != tt.wantExp {
				t.Errorf("Exp = %d, want %d", l.Exp, tt.wantExp)
			}
			if g, want := l.Gamma(), math.Ldexp(1, l.Exp); g != want {
				t.Errorf("Gamma() = %v, want %v", g, want)
			}
			if f, _ := l.GammaRat().Float64(); f != l.Gamma() {
				t.Errorf("GammaRat() = %v, Gamma() = %v", f, l.Gamma())
			}
			// Range constraint: MaxAbs/γ ≤ 2^30.
			maxAbs := new(big.Rat).SetFloat64(tt.p.MaxAbs)
			if new(big.Rat).Quo(maxAbs, l.GammaRat()).Cmp(pow2Rat(LatticeRowBits)) > 0 {
				t.Errorf("MaxAbs/γ = %v/2^%d exceeds 2^%d", tt.p.MaxAbs, l.Exp, LatticeRowBits)
			}
			sens := tt.p.Sensitivity
			eps := new(big.Rat).SetFloat64(tt.p.Epsilon)
			if tt.fine {
				noiseScale := new(big.Rat).Quo(sens, eps)
				if l.GammaRat().Cmp(new(big.Rat).Quo(noiseScale, big.NewRat(1024, 1))) > 0 {
					t.Errorf("γ = 2^%d is not ≤ (Δ/ε)/1024 = %v", l.Exp, noiseScale.FloatString(12))
				}
			}
			if sens.Sign() == 0 {
				if !l.Scale.IsZero() {
					t.Errorf("zero sensitivity gave scale %v", l.Scale)
				}
				return
			}
			// Scale: (Δ + rows·γ)/(ε·γ), rounded up by the Scale rule, ≤ 2^53.
			exact := latticeScale(sens, tt.p.ChangedRows, eps, l.Exp)
			checkRoundedUp(t, exact, l.Scale)
			// Minimality: one step finer breaks the range or the scale limit.
			finer := l.Exp - 1
			rangeOK := new(big.Rat).Quo(maxAbs, pow2Rat(finer)).Cmp(pow2Rat(LatticeRowBits)) <= 0
			scaleOK := latticeScale(sens, tt.p.ChangedRows, eps, finer).Cmp(pow2Rat(MaxScaleLog2)) <= 0
			if finer >= minLatticeExp && rangeOK && scaleOK {
				t.Errorf("γ = 2^%d also satisfies both constraints", finer)
			}
		})
	}
}

// latticeScale is (Δ + rows·2^e)/(ε·2^e), the noise scale in lattice units.
func latticeScale(sens *big.Rat, rows int, eps *big.Rat, e int) *big.Rat {
	g := pow2Rat(e)
	num := new(big.Rat).Add(sens, new(big.Rat).Mul(g, big.NewRat(int64(rows), 1)))
	return num.Quo(num, new(big.Rat).Mul(eps, g))
}

// TestLatticeSumFitsInt64 checks the overflow argument on the extreme
// values: 2^32 rows of ±MaxAbs on the lattice plus the largest noise stay
// inside int64.
func TestLatticeSumFitsInt64(t *testing.T) {
	l, err := LatticeFor(LatticeParams{Sensitivity: big.NewRat(1000, 1), ChangedRows: 1, Epsilon: 1, MaxAbs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	perRow := math.Round(1000 / l.Gamma())
	total := new(big.Int).Mul(big.NewInt(int64(perRow)), new(big.Int).Lsh(big.NewInt(1), 32))
	total.Add(total, big.NewInt(maxNoise))
	if total.Cmp(big.NewInt(math.MaxInt64)) > 0 {
		t.Errorf("2^32 rows of %v lattice units plus max noise = %v overflows int64", perRow, total)
	}
}
