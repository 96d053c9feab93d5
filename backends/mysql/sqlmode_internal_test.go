package mysql

import "testing"

// TestLexingMode: the modes that change how the server splits text into
// tokens are dropped from the session's sql_mode, the others kept.
func TestLexingMode(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		changed  bool
	}{
		{"STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION", "STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION", false},
		{"NO_BACKSLASH_ESCAPES", "", true},
		{"REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ONLY_FULL_GROUP_BY,ANSI", "REAL_AS_FLOAT,PIPES_AS_CONCAT,IGNORE_SPACE,ONLY_FULL_GROUP_BY", true},
		{"PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ORACLE,NO_KEY_OPTIONS", "PIPES_AS_CONCAT,IGNORE_SPACE,NO_KEY_OPTIONS", true},
		{"", "", false},
		{"X' OR '1", "", true},
	} {
		got, changed := lexingMode(tc.in)
		if got != tc.want || changed != tc.changed {
			t.Errorf("lexingMode(%q) = %q, %v; want %q, %v", tc.in, got, changed, tc.want, tc.changed)
		}
	}
}
