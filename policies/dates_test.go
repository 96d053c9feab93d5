package policies

import (
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

func TestDateBoundsResolved(t *testing.T) {
	fixtureEnv(t)
	p, err := Load("testdata/policies/dates.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cols := p.Datasets["d"].Tables["t"].Columns
	mustTime := func(k ir.Kind, s string) ir.Value {
		v, err := ir.ParseTime(k, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for name, want := range map[string][]ir.Value{
		// 2010-01-01 is day 14610 after 1970-01-01 (40 years, 10 leap days).
		"day":  {ir.Date(14610), ir.Date(14975)},
		"day2": {ir.Date(14610), ir.Date(14974)},
		"at":   {ir.Timestamp(14610 * ir.MicrosPerDay), ir.Timestamp(14975*ir.MicrosPerDay - 1)},
		"atz":  {ir.TimestampTZ(14610 * ir.MicrosPerDay), mustTime(ir.KindTimestampTZ, "2011-01-01 00:00:00+00")},
		"open": nil,
	} {
		got := cols[name].TimeBounds
		if len(got) != len(want) || (len(want) == 2 && (got[0] != want[0] || got[1] != want[1])) {
			t.Errorf("%s: time bounds %v, want %v", name, got, want)
		}
		if cols[name].HasBounds() {
			t.Errorf("%s: a date column has numeric bounds %v", name, cols[name].Bounds)
		}
	}
	if d := cols["day2"].Domain.Resolved; len(d) != 2 || d[0] != ir.Date(14610) || d[1] != ir.Date(14611) {
		t.Errorf("date domain %v", d)
	}
	if n := cols["n"]; !n.HasBounds() || n.Lo() != 0 || n.Hi() != 10 {
		t.Errorf("numeric bounds %v", n.Bounds)
	}
}
