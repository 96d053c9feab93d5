package planner

import "testing"

// BenchmarkScaleDP and BenchmarkScaleDDP compare the noise-scale
// arithmetic of one aggregate under dp and under ddp (fractional m).
func BenchmarkScaleDP(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		scaleFor(2, 1, 2)
	}
}

func BenchmarkScaleDDP(b *testing.B) {
	bb := &builder{}
	a := &AggPlan{Multiplier: 1.75}
	b.ReportAllocs()
	for b.Loop() {
		bb.scale(a, 2, 1, 2)
	}
}
