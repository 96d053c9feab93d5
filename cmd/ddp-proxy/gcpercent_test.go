package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// The GC target: serve sets it unless the operator set GOGC and not the
// flag; an explicit flag wins over GOGC.
func TestGCSet(t *testing.T) {
	for _, c := range []struct {
		args []string
		gogc string
		want bool
	}{
		{nil, "", true},
		{nil, "200", false},
		{nil, "off", false},
		{[]string{"--gc-percent", "150"}, "", true},
		{[]string{"--gc-percent", "150"}, "200", true},
		{[]string{"--gc-percent", "400"}, "off", true},
	} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.Int("gc-percent", defaultGCPercent, "")
		fs.String("policy", "", "")
		if err := fs.Parse(append([]string{"--policy", "p.yaml"}, c.args...)); err != nil {
			t.Fatal(err)
		}
		if got := gcSet(fs, c.gogc); got != c.want {
			t.Errorf("gcSet(%v, GOGC=%q) = %v, want %v", c.args, c.gogc, got, c.want)
		}
	}
}

// A negative --gc-percent (which would turn collection off, the heap then
// growing without bound) is refused before anything starts.
func TestServeRefusesNegativeGCPercent(t *testing.T) {
	var stderr bytes.Buffer
	err := cmdServe(context.Background(), []string{"--policy", "does-not-matter.yaml", "--gc-percent", "-1"}, io.Discard, &stderr, slog.New(slog.DiscardHandler))
	if e, ok := err.(exitError); !ok || e != (exitError{2}) {
		t.Fatalf("err = %#v, want exit status 2", err)
	}
	if !strings.Contains(stderr.String(), "--gc-percent -1") {
		t.Errorf("stderr = %q, want it to name the flag", stderr.String())
	}
}
