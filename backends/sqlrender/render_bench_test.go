package sqlrender

import (
	"testing"

	"github.com/ddp-proxy/ddp-proxy/internal/cpubench"
)

func BenchmarkRender(b *testing.B) {
	for _, d := range []*Dialect{Postgres(), SQLite()} {
		b.Run(d.Name, func(b *testing.B) {
			b.ReportAllocs()
			defer cpubench.Report(b)()
			for b.Loop() {
				if _, err := d.Render(boundedJoin); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.Name+"/measure", func(b *testing.B) {
			b.ReportAllocs()
			defer cpubench.Report(b)()
			for b.Loop() {
				if _, err := d.Measure(boundedJoin); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
