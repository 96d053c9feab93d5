package demo_test

import (
	"context"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/demo"
)

// BenchmarkBuild measures a whole demo build (the demo command's start-up
// cost; the target is well under 2 s).
func BenchmarkBuild(b *testing.B) {
	b.ReportAllocs()
	dir := b.TempDir()
	for b.Loop() {
		if _, err := demo.Build(context.Background(), dir); err != nil {
			b.Fatal(err)
		}
	}
}
