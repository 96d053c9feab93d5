package policies

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// want is one expected problem: the line of a "# want: substring" comment
// and the substring its message must contain.
type want struct {
	line int
	sub  string
}

// readWants collects the "# want:" comments of a fixture. A comment on a
// line says that a problem is reported at that line; several may share one
// line.
func readWants(t *testing.T, path string) []want {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ws []want
	for i, line := range strings.Split(string(data), "\n") {
		parts := strings.Split(line, "# want: ")
		for _, p := range parts[1:] {
			ws = append(ws, want{line: i + 1, sub: strings.TrimSpace(p)})
		}
	}
	return ws
}

// fixtureEnv sets the environment the fixtures refer to and makes sure the
// variables they expect to be missing are.
func fixtureEnv(t *testing.T) {
	t.Helper()
	t.Setenv("DDP_TEST_PASSWORD", "pw")
	t.Setenv("DDP_TEST_DB_HOST", "db.example")
	t.Setenv("DDP_TEST_EMPTY_PASSWORD", "")
	for _, v := range []string{"DDP_TEST_UNSET_USER", "DDP_TEST_UNSET_DB", "DDP_TEST_UNSET_PASSWORD"} {
		t.Setenv(v, "")
		os.Unsetenv(v) // t.Setenv restores the original value afterwards
	}
}

func TestGoodFixtures(t *testing.T) {
	fixtureEnv(t)
	files, _ := filepath.Glob("testdata/policies/*.good.yaml")
	if len(files) < 3 {
		t.Fatalf("found %d good fixtures, want at least 3", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			p, err := Load(f)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if ws := readWants(t, f); len(ws) > 0 {
				t.Fatalf("a good fixture must not carry want comments (line %d)", ws[0].line)
			}
			if err := p.Validate(); err != nil {
				t.Errorf("Validate of a loaded policy: %v", err)
			}
		})
	}
}

var problemPrefixRE = regexp.MustCompile(`^(.*):(\d+): `)

func TestBadFixtures(t *testing.T) {
	fixtureEnv(t)
	files, _ := filepath.Glob("testdata/policies/*.bad.yaml")
	if len(files) < 10 {
		t.Fatalf("found %d bad fixtures, want at least 10", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			ws := readWants(t, f)
			if len(ws) == 0 {
				t.Fatal("a bad fixture needs at least one # want: comment")
			}
			p, err := Load(f)
			if err == nil {
				t.Fatalf("Load succeeded, want %d problems", len(ws))
			}
			if p != nil {
				t.Error("Load returned a policy along with an error")
			}
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("error is %T, want Problems: %v", err, err)
			}
			used := make([]bool, len(ps))
			for _, w := range ws {
				found := false
				for i, pr := range ps {
					if !used[i] && pr.Line == w.line && strings.Contains(pr.Message, w.sub) {
						used[i], found = true, true
						break
					}
				}
				if !found {
					t.Errorf("missing problem at line %d containing %q", w.line, w.sub)
				}
			}
			for i, pr := range ps {
				if !used[i] {
					t.Errorf("unexpected problem: %v", pr)
				}
			}
			// Every printed line is "file:line: path: message".
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(ps) {
				t.Fatalf("Error() has %d lines for %d problems", len(lines), len(ps))
			}
			for i, l := range lines {
				m := problemPrefixRE.FindStringSubmatch(l)
				if m == nil || m[1] != f || m[2] != strconv.Itoa(ps[i].Line) {
					t.Errorf("line %q does not start with %s:%d: ", l, f, ps[i].Line)
				}
				if ps[i].Path != "" && !strings.Contains(l, ps[i].Path+": ") {
					t.Errorf("line %q does not name the path %s", l, ps[i].Path)
				}
			}
			for i := 1; i < len(ps); i++ {
				if ps[i].Line < ps[i-1].Line {
					t.Errorf("problems not sorted by line: %d after %d", ps[i].Line, ps[i-1].Line)
				}
			}
		})
	}
}
