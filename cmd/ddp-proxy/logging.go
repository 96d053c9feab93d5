package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

const serveUsage = "usage: ddp-proxy serve --policy FILE [--pid-file F] [--log-format text|json] [--log-level debug|info|warn|error] [--cpuprofile F] [--memprofile F] [--gc-percent N]"

// newLogger builds the process's log handler (only main builds one): text
// or JSON lines on w, from level up. At info every private query is
// logged once, by its fingerprint, never its text (session/observe.go).
// When w is main's logBuffer, warnings and errors are flushed at once.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(withFlush(slog.NewTextHandler(w, opts), w)), nil
	case "json":
		return slog.New(withFlush(slog.NewJSONHandler(w, opts), w)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}
