package oracle

import "testing"

// Hand values: a histogram over two groups, k = 1, value changes. Alone a
// unit moves one row between groups (2); with one fully dependent unit 4;
// under presence changes of i and any change of the dependent 1 + 2 = 3.
func TestFullDependenceByHand(t *testing.T) {
	u, err := NewUniverse(Space{Domain: 2, RowsPerUnit: 1})
	if err != nil {
		t.Fatal(err)
	}
	q := Aggregate{GroupOf: []int{0, 1}, Groups: 2}.Query()
	for _, tc := range []struct {
		deps      [][]int
		self, dep Change
		want      int64
		wantUnit1 int64
		name      string
	}{
		{[][]int{nil, nil}, ValueChange, ValueChange, 2, 2, "independent"},
		{[][]int{{1}, nil}, ValueChange, ValueChange, 4, 2, "one dependent"},
		{[][]int{{1}, nil}, PresenceChange, AnyChange, 3, 1, "presence + any"},
	} {
		w, err := u.FullDependence(2, tc.deps, tc.self, tc.dep, q)
		if err != nil {
			t.Fatal(err)
		}
		if w.L1 != tc.want {
			t.Errorf("%s: %d, want %d (witness %v → %v)", tc.name, w.L1, tc.want, w.D1, w.D2)
		}
		if got := u.UnitSensitivity(2, 1, tc.self, q); got != tc.wantUnit1 {
			t.Errorf("%s: ΔQ_1 = %d, want %d", tc.name, got, tc.wantUnit1)
		}
	}
}
