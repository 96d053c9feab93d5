package parser

import (
	"strings"
	"testing"
)

func TestFingerprint(t *testing.T) {
	tests := []struct {
		name   string
		d      Dialect
		a, b   string
		same   bool
		secret string // a literal that must not appear in the fingerprint
	}{
		{"pg literals", Postgres, "SELECT COUNT(*) FROM t WHERE name = 'alice'", "select count(*) from t where name = 'bob'", true, "alice"},
		{"pg params", Postgres, "SELECT COUNT(*) FROM t WHERE age > 42", "SELECT COUNT(*) FROM t WHERE age > $1", true, "42"},
		{"pg shape", Postgres, "SELECT COUNT(*) FROM t WHERE age > 42", "SELECT SUM(age) FROM t WHERE age > 42", false, "42"},
		{"mysql literals", MySQL, "SELECT COUNT(*) FROM t WHERE name = 'alice'", "SELECT  count(*) FROM t WHERE name = 'bob'", true, "alice"},
		{"mysql shape", MySQL, "SELECT COUNT(*) FROM t WHERE a = 1", "SELECT COUNT(*) FROM u WHERE a = 1", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fa, fb := Fingerprint(tt.d, tt.a), Fingerprint(tt.d, tt.b)
			if len(fa) != 16 || len(fb) != 16 {
				t.Fatalf("fingerprints %q, %q: want 16 hex digits", fa, fb)
			}
			if (fa == fb) != tt.same {
				t.Errorf("Fingerprint(%q) = %s, Fingerprint(%q) = %s; want equal %v", tt.a, fa, tt.b, fb, tt.same)
			}
			if tt.secret != "" && strings.Contains(fa, tt.secret) {
				t.Errorf("fingerprint %s holds literal %s", fa, tt.secret)
			}
		})
	}
}
