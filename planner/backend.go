package planner

import "github.com/ddp-proxy/ddp-proxy/backends"

// Backend is the database holding the real data (backends.Backend, where
// its contract and error codes are written).
type Backend = backends.Backend
