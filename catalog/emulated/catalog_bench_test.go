package emulated

import (
	"context"
	"slices"
	"testing"
)

// BenchmarkNew: building the catalog (once per proxy generation).
func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		c, err := New("sqlite", slices.Clone(fixtureTables))
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

// BenchmarkPsqlDescribe: the nine queries of psql's \d people.
func BenchmarkPsqlDescribe(b *testing.B) {
	c, err := New("sqlite", slices.Clone(fixtureTables))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	r, err := c.Query(context.Background(), texts(nil, "psql15_d.sql", "")[0], nil, env)
	if err != nil {
		b.Fatal(err)
	}
	qs := texts(nil, "psql15_d.sql", r.Rows[0][0].Text())
	for b.Loop() {
		for _, q := range qs {
			if _, err := c.Query(context.Background(), q, nil, env); err != nil {
				b.Fatal(err)
			}
		}
	}
}
