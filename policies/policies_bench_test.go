package policies

import (
	"os"
	"testing"
)

func BenchmarkLookupTable(b *testing.B) {
	b.Setenv("DDP_PASSWORD_ALICE", "x")
	p, err := Load("examples/census.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, t := p.LookupTable("", "People"); t == nil || t.Column("Age") == nil {
			b.Fatal("not found")
		}
	}
}

func BenchmarkLoadCensus(b *testing.B) {
	b.Setenv("DDP_PASSWORD_ALICE", "x")
	data, err := os.ReadFile("examples/census.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LoadBytes("examples/census.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}
