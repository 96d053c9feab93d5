// Package testlog is a log sink for tests: the code under test writes to
// it from its own goroutines while the test reads what was written.
package testlog

import (
	"strings"
	"sync"
)

// Sink collects what is written to it; safe for concurrent use.
type Sink struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *Sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *Sink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// HasLine reports whether one line written so far holds every part.
func (s *Sink) HasLine(parts ...string) bool {
	for _, line := range strings.Split(s.String(), "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}
