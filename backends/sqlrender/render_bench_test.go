package sqlrender

import "testing"

func BenchmarkRender(b *testing.B) {
	for _, d := range []*Dialect{Postgres(), SQLite()} {
		b.Run(d.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.Render(boundedJoin); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.Name+"/measure", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.Measure(boundedJoin); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
