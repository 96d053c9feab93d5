package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionText(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/ddp-proxy/ddp-proxy", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-11-27T10:00:00Z"}}}
	got := versionText(bi, true)
	for _, want := range []string{"ddp-proxy v1.2.3\n", "revision: 0123abcd (modified)\n", "commit time: 2026-11-27T10:00:00Z\n", "go: go1.26.8\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("version text %q lacks %q", got, want)
		}
	}
	got = versionText(&debug.BuildInfo{GoVersion: "go1.26.8"}, true)
	if !strings.Contains(got, "ddp-proxy (devel)") || !strings.Contains(got, "revision: unknown") {
		t.Errorf("without a version or VCS stamp: %q", got)
	}
	if got := versionText(nil, false); !strings.Contains(got, "no build information") {
		t.Errorf("without build info: %q", got)
	}
}

// TestVersionFlag builds the binary from this repository with VCS
// stamping on and checks that --version prints the checkout's revision.
func TestVersionFlag(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--version"}, &out, io.Discard, nil); err != nil || !strings.HasPrefix(out.String(), "ddp-proxy ") {
		t.Fatalf("run --version: %v %q", err, out.String())
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || !fi.IsDir() {
		// A linked worktree (.git is a file): the go tool does not stamp
		// VCS information there.
		t.Skip("the checkout is a git worktree; the go tool stamps no revision")
	}
	bin := filepath.Join(t.TempDir(), "ddp-proxy")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOFLAGS=")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	b, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "revision: " + strings.TrimSpace(string(head)); !strings.Contains(string(b), want) {
		t.Errorf("--version printed %q, want a line %q", b, want)
	}
}
