package release_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// sharing rewrites a policy's dataset to say share_releases: share.
func sharing(t *testing.T, name, policy, dataset string, share bool) *policies.Policy {
	t.Helper()
	head := "\n  " + dataset + ":\n"
	if !strings.Contains(policy, head) {
		t.Fatalf("dataset %s not found in the policy", dataset)
	}
	policy = strings.Replace(policy, head, fmt.Sprintf("%s    share_releases: %v\n", head, share), 1)
	pol, err := policies.LoadBytes(name, []byte(policy))
	if err != nil {
		t.Fatalf("policy: %v", err)
	}
	return pol
}

// TestShareReleases: two users ask the identical query. Shared (the
// default), the second is answered from the first's release, free, with
// the same values — and so learns that someone asked it. Per user, the
// second is charged and gets an independent draw; each user's repeat is
// still free and identical to that user's own first answer.
func TestShareReleases(t *testing.T) {
	// 101 age groups: two independent draws agree on every group with
	// negligible probability (each group's noise has scale 4).
	const q = "SELECT age, COUNT(*) FROM people GROUP BY age"
	const eps = 0.25
	for _, share := range []bool{true, false} {
		t.Run(fmt.Sprintf("share_releases=%v", share), func(t *testing.T) {
			dir := t.TempDir()
			f := newFixture(t, dir)
			f.pol = sharing(t, filepath.Join(dir, "policy.yaml"),
				fmt.Sprintf(policyTemplate, "sqlite", filepath.Join(dir, "census.db"), filepath.Join(dir, "ledger.db"), ""), "census", share)
			f.p = planner.New(f.pol)
			e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(3)})

			alice, err := f.run(t, e, "alice", q, eps)
			if err != nil {
				t.Fatal(err)
			}
			bob, err := f.run(t, e, "bob", q, eps)
			if err != nil {
				t.Fatal(err)
			}
			bobSpent, _ := f.ledger.Spent("bob", "census")
			if alice.Cached || alice.Charged.Epsilon != eps {
				t.Errorf("alice: cached %v, charged %+v; want a fresh answer charged ε %g", alice.Cached, alice.Charged, eps)
			}
			if share {
				if !bob.Cached || bob.Charged.Epsilon != 0 || bobSpent.Epsilon != 0 {
					t.Errorf("bob: cached %v, charged %+v, spent %+v; want alice's release, free", bob.Cached, bob.Charged, bobSpent)
				}
				if !reflect.DeepEqual(alice.Rows, bob.Rows) {
					t.Error("bob's answer differs from alice's release")
				}
			} else {
				if bob.Cached || bob.Charged.Epsilon != eps || bobSpent.Epsilon != eps {
					t.Errorf("bob: cached %v, charged %+v, spent %+v; want a fresh answer charged ε %g", bob.Cached, bob.Charged, bobSpent, eps)
				}
				if reflect.DeepEqual(alice.Rows, bob.Rows) {
					t.Error("bob got alice's values: not an independent draw")
				}
				// explain says so.
				if _, pl := f.plan(t, "bob", q, eps); !strings.Contains(strings.Join(pl.Notes, "\n"), "releases are per user") {
					t.Errorf("plan notes do not mention per-user releases: %q", pl.Notes)
				}
			}
			// Each user's repeat is free and identical to what that user
			// saw, in both settings.
			for _, r := range []struct {
				user  string
				first *release.Result
			}{{"alice", alice}, {"bob", bob}} {
				again, err := f.run(t, e, r.user, q, eps)
				if err != nil {
					t.Fatal(err)
				}
				if !again.Cached || again.Charged.Epsilon != 0 || !reflect.DeepEqual(again.Rows, r.first.Rows) {
					t.Errorf("%s's repeat: cached %v, charged %+v, same rows %v", r.user, again.Cached, again.Charged, reflect.DeepEqual(again.Rows, r.first.Rows))
				}
			}
			if spent, _ := f.ledger.Spent("bob", "census"); spent != bobSpent {
				t.Errorf("bob's repeat changed his spent budget from %+v to %+v", bobSpent, spent)
			}
		})
	}
}

// TestShareReleasesSynopsis: a range synopsis is a release too; per user,
// each user's first range count pays for a synopsis of their own.
func TestShareReleasesSynopsis(t *testing.T) {
	const q = "SELECT COUNT(*) FROM staff WHERE salary BETWEEN 20 AND 80"
	for _, share := range []bool{true, false} {
		t.Run(fmt.Sprintf("share_releases=%v", share), func(t *testing.T) {
			dir := t.TempDir()
			f := newSynFixture(t, dir, 10)
			f.pol = sharing(t, filepath.Join(dir, "policy.yaml"),
				fmt.Sprintf(synPolicy, f.db, filepath.Join(dir, "ledger.db"), 10), "pay", share)
			f.p = planner.New(f.pol)
			e := release.New(f.be, f.led, release.Options{Source: noise.SeededSource(5)})
			alice := f.run(t, e, "alice", q, 1)
			bob := f.run(t, e, "bob", q, 1)
			if alice.Cached || alice.Charged.Epsilon != 1 {
				t.Errorf("alice: cached %v, charged %+v; want the synopsis charged", alice.Cached, alice.Charged)
			}
			switch {
			case share && bob.Charged.Epsilon != 0:
				t.Errorf("bob charged %+v, want nothing: the synopsis is shared", bob.Charged)
			case !share && bob.Charged.Epsilon != 1:
				t.Errorf("bob charged %+v, want ε 1 for a synopsis of his own", bob.Charged)
			}
		})
	}
}
