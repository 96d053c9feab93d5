package parser

import (
	"slices"
	"strconv"
	"testing"
)

// TestRefsDeduplicate: functions (and relations, the same code) are
// listed once each in first-seen order, below and above the length at
// which the list gets a set, repeats landing on both sides of it.
func TestRefsDeduplicate(t *testing.T) {
	r := newRefs()
	var want []string
	for i := range 3 * smallRefs {
		name := "f" + strconv.Itoa(i%(smallRefs+5))
		r.addFunc(name)
		r.addFunc(name) // a repeat at once: while the list is scanned, too
		if !slices.Contains(want, name) {
			want = append(want, name)
		}
		r.addRel("", name)
	}
	if !slices.Equal(r.funcs, want) {
		t.Fatalf("funcs %v, want %v", r.funcs, want)
	}
	if len(r.rels) != len(want) || r.seenRel == nil || r.seenFn == nil {
		t.Fatalf("%d relations for %d names (set built: %v)", len(r.rels), len(want), r.seenRel != nil)
	}
	for i, rel := range r.rels {
		if rel.Name != want[i] {
			t.Fatalf("relation %d is %v, want %s", i, rel, want[i])
		}
	}
}
