package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteAllocProfile: --memprofile writes a pprof allocation profile
// (gzipped protobuf whose sample types name the allocation counts), and a
// path it cannot create is an error, not a silent nothing.
func TestWriteAllocProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mem.pprof")
	if err := writeAllocProfile(path); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("not a gzipped profile: %v", err)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"alloc_objects", "alloc_space", "inuse_space"} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("profile has no %q sample type", want)
		}
	}
	if err := writeAllocProfile(filepath.Join(t.TempDir(), "missing", "mem.pprof")); err == nil {
		t.Error("an uncreatable path gave no error")
	}
}
