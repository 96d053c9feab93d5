package planner

import (
	"strconv"
	"testing"
)

// TestPartKeys: keys are found at the index they were added with, below
// and past the size where the map is built, and a missing key is not.
func TestPartKeys(t *testing.T) {
	for _, n := range []int{0, 1, maxLinear, maxLinear + 1, 3 * maxLinear} {
		var k partKeys
		for i := range n {
			k.add("0/t0.c" + strconv.Itoa(i))
		}
		for i := range n {
			if j, ok := k.find("0/t0.c" + strconv.Itoa(i)); !ok || j != i {
				t.Fatalf("%d keys: key %d found at %d, %v", n, i, j, ok)
			}
		}
		if _, ok := k.find("0/t0.c" + strconv.Itoa(n)); ok {
			t.Fatalf("%d keys: a missing key was found", n)
		}
	}
}
