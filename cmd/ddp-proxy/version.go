package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// versionText is what --version prints: the module version (set when the
// binary is built from a tagged module, "(devel)" from a checkout), the
// VCS revision and time stamped by the go tool when it built from a
// repository (absent with -buildvcs=false), and the Go version.
func versionText(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "ddp-proxy (no build information)\n"
	}
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ddp-proxy %s\n", version)
	rev := settings["vcs.revision"]
	if rev == "" {
		rev = "unknown (built without VCS information)"
	} else if settings["vcs.modified"] == "true" {
		rev += " (modified)"
	}
	fmt.Fprintf(&b, "revision: %s\n", rev)
	if t := settings["vcs.time"]; t != "" {
		fmt.Fprintf(&b, "commit time: %s\n", t)
	}
	fmt.Fprintf(&b, "go: %s\n", bi.GoVersion)
	return b.String()
}

func cmdVersion(stdout io.Writer) error {
	bi, ok := debug.ReadBuildInfo()
	fmt.Fprint(stdout, versionText(bi, ok))
	return nil
}
