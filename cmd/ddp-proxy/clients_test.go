package main

import (
	"os"
	"os/exec"
	"testing"
)

// clientBinary finds a real client program (psql, mariadb, ...). Without
// it the test skips on a newcomer's laptop but fails under CI, where
// .ci/run installs every client the tests drive.
func clientBinary(t *testing.T, pkg string, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("none of %v is installed under CI (.ci/run installs %s)", names, pkg)
	}
	t.Skipf("none of %v is installed (apt-get install %s)", names, pkg)
	return ""
}
