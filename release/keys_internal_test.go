package release

import (
	"math"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// TestUniqueKeys: values that read as one key are released once.
func TestUniqueKeys(t *testing.T) {
	negZero := ir.Float(math.Copysign(0, -1))
	d := []ir.Value{ir.Float(1), negZero, ir.Float(0), ir.Float(1), ir.Float(2)}
	got := uniqueKeys(d)
	if len(got) != 3 || got[0].Float != 1 || got[1].Float != 0 || got[2].Float != 2 {
		t.Errorf("uniqueKeys = %v, want 1, -0, 2", got)
	}
	if !math.Signbit(d[1].Float) || len(d) != 5 {
		t.Errorf("the input was modified: %v", d)
	}
	plain := []ir.Value{ir.String("a"), ir.String("b")}
	if got := uniqueKeys(plain); len(got) != 2 || &got[0] != &plain[0] {
		t.Errorf("a domain without repeats is returned as is: %v", got)
	}
}
