package parser

import (
	"strings"
	"testing"
)

// TestFingerprint: statements that differ only in literals share a
// fingerprint, statements of another shape do not, and no literal is
// readable in it.
func TestFingerprint(t *testing.T) {
	for _, d := range []Dialect{Postgres, MySQL} {
		a := Fingerprint(d, "SELECT COUNT(*) FROM people WHERE name = 'Zebulon' AND age > 41")
		b := Fingerprint(d, "SELECT COUNT(*) FROM people WHERE name = 'Agatha' AND age > 7")
		c := Fingerprint(d, "SELECT SUM(age) FROM people WHERE name = 'Zebulon'")
		if a == "" || a != b {
			t.Errorf("%s: literals changed the fingerprint: %q vs %q", d, a, b)
		}
		if a == c {
			t.Errorf("%s: two shapes share fingerprint %q", d, a)
		}
		for _, lit := range []string{"Zebulon", "people"} {
			if strings.Contains(strings.ToLower(a), strings.ToLower(lit)) {
				t.Errorf("%s: fingerprint %q contains %q", d, a, lit)
			}
		}
	}
	if got := Fingerprint(Postgres, "SELEC nonsense ("); got != "" {
		t.Errorf("unparsable text: %q", got)
	}
}
