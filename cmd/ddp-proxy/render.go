package main

import (
	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// renderer renders backend queries in the dialect of the policy's backend,
// for explain output (nil when the dialect has no renderer yet).
func renderer(pol *policies.Policy) func(*ir.BackendQuery) (string, error) {
	if d := sqlrender.ByName(pol.Backend.Driver); d != nil {
		return d.Preview
	}
	return nil
}
