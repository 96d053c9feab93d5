package main

import (
	"slices"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// TestRestartOnlyBackendSettings: a reload that changes a setting of the
// backend pool, built once at startup, names it as needing a restart
// instead of seeming to apply it.
func TestRestartOnlyBackendSettings(t *testing.T) {
	old := &policies.Policy{Backend: policies.Backend{MaxOpenConns: 10, PreparedStatements: policies.DefaultPreparedStatements}}
	for name, change := range map[string]func(*policies.Policy){
		"backend.max_open_conns":      func(p *policies.Policy) { p.Backend.MaxOpenConns = 20 },
		"backend.prepared_statements": func(p *policies.Policy) { p.Backend.PreparedStatements = 0 },
	} {
		pol := *old
		change(&pol)
		if got := restartOnly(old, &pol); !slices.Equal(got, []string{name}) {
			t.Errorf("changing %s: restartOnly = %v, want [%s]", name, got, name)
		}
	}
	if got := restartOnly(old, old); len(got) != 0 {
		t.Errorf("unchanged policy: restartOnly = %v", got)
	}
}
