package dependence_test

import (
	"context"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/dependence"
)

// BenchmarkLoad50kEdges reads and summarises a 50,000-row friendship table
// from SQLite (the work done at policy load and on every reload).
func BenchmarkLoad50kEdges(b *testing.B) {
	be, _, _ := social50k(b, 50000)
	defer be.Close()
	ds := socialDataset()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := dependence.Read(context.Background(), ds, be); err != nil {
			b.Fatal(err)
		}
	}
}
