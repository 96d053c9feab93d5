package policies

import "testing"

func TestSynopsisDerived(t *testing.T) {
	p, err := Load("testdata/policies/synopsis.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := p.Datasets["pay"].SynopsisFor("STAFF", "Salary")
	if got == nil {
		t.Fatal("SynopsisFor did not find staff.salary")
	}
	want := Synopsis{Table: "staff", Column: "salary", Mechanism: SynopsisOrderedHierarchical, Fanout: 8, Theta: 1000, Lo: 0, Hi: 99999}
	if *got != want {
		t.Errorf("pay: %+v, want %+v", *got, want)
	}
	got = p.Datasets["losses"].SynopsisFor("adult", "loss")
	want = Synopsis{Table: "adult", Column: "loss", Mechanism: SynopsisOrdered, Fanout: DefaultSynopsisFanout, Theta: 1, Lo: 0, Hi: 4356}
	if got == nil || *got != want {
		t.Errorf("losses: %+v, want %+v", got, want)
	}
	if p.Datasets["pay"].SynopsisFor("staff", "id") != nil {
		t.Error("found a synopsis that is not declared")
	}
}

// TestSynopsisChangesFingerprint: releases are keyed by the dataset
// fingerprint, so a changed synopsis must not reuse an old release.
func TestSynopsisChangesFingerprint(t *testing.T) {
	p, err := Load("testdata/policies/synopsis.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d := p.Datasets["pay"]
	before := d.Fingerprint
	d.Synopses[0].Fanout = 4
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if d.Fingerprint == before {
		t.Error("changing the fan-out kept the fingerprint")
	}
}
