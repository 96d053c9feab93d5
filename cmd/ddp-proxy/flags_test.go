package main

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestParseInterspersed: flags are read wherever they stand among the
// positional arguments, and "--" ends them.
func TestParseInterspersed(t *testing.T) {
	for _, c := range []struct {
		args    []string
		connect bool
		pos     []string
	}{
		{[]string{"--connect", "p.yaml"}, true, []string{"p.yaml"}},
		{[]string{"p.yaml", "--connect"}, true, []string{"p.yaml"}},
		{[]string{"p.yaml"}, false, []string{"p.yaml"}},
		{[]string{"a", "--connect", "b"}, true, []string{"a", "b"}},
		{[]string{"--", "--connect"}, false, []string{"--connect"}},
		{[]string{"a", "--", "b", "--connect"}, false, []string{"a", "b", "--connect"}},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		connect := fs.Bool("connect", false, "")
		pos, err := parseInterspersed(fs, c.args)
		if err != nil || *connect != c.connect || !slices.Equal(pos, c.pos) {
			t.Errorf("%q: connect %v, positional %q, err %v; want %v, %q", c.args, *connect, pos, err, c.connect, c.pos)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := parseInterspersed(fs, []string{"p.yaml", "--nope"}); err == nil {
		t.Error("an unknown flag after the file was accepted")
	}
}

// TestCheckFlagAfterFile: `check FILE --connect` is `check --connect
// FILE` (it used to print usage): the backend check runs, and fails here
// because the example's database does not exist.
func TestCheckFlagAfterFile(t *testing.T) {
	pol := copyExample(t, "census.yaml")
	_, errOut, code := runCmd(t, "check", pol, "--connect")
	if code != 1 || strings.Contains(errOut, "usage:") || !strings.Contains(errOut, "cannot check against the backend") {
		t.Fatalf("check FILE --connect: exit %d\n%s", code, errOut)
	}
}
