package sqlrender

import (
	"strconv"
	"testing"
)

// TestMeasureCounts: the lengths the measuring renderer adds up are those
// of the text rendering writes (names with embedded quotes, numbers
// across powers of ten).
func TestMeasureCounts(t *testing.T) {
	for _, d := range []*Dialect{Postgres(), MySQL(), SQLite()} {
		for _, name := range []string{"", "a", `x"y`, "x`y", `""`, "``", "ddp_g"} {
			if got, want := d.identLen(name), len(d.QuoteIdent(name)); got != want {
				t.Errorf("%s: identLen(%q) = %d, want %d", d.Name, name, got, want)
			}
		}
	}
	for _, n := range []int{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 65535, 1 << 40} {
		if got, want := digits(n), len(strconv.Itoa(n)); got != want {
			t.Errorf("digits(%d) = %d, want %d", n, got, want)
		}
	}
}
