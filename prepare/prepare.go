// Package prepare readies a policy against its backend before the policy
// serves: at startup and again on every reload, on the new policy before
// it is swapped in. It is the one step the commands (serve, reload, check)
// and the tests call, so the order and the all-or-nothing rule live in
// one place:
//
//   - unique units: a private table whose unit column the schema declares
//     NOT NULL and unique needs no per-unit bounding window (schema only);
//   - constrained domains: a blowfish or induced table with published
//     constraints must hold only its declared domain values, one row per
//     unit (it reads private data, but only the DBA sees the outcome);
//   - dependence: every ddp dataset's structure is read once, never per
//     query.
//
// It sits above backends (which must not import privacy code) and below
// the commands.
package prepare

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/connect"
	"github.com/ddp-proxy/ddp-proxy/dependence"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// Backend derives from be what pol needs before its first query. An error
// means pol must not serve (the caller keeps the policy in force on a
// reload, or does not start).
func Backend(ctx context.Context, pol *policies.Policy, be backends.Backend, log *slog.Logger) error {
	MarkUniqueUnits(ctx, pol, be, log)
	if err := VerifyConstrainedDomains(ctx, pol, be); err != nil {
		return err
	}
	if err := dependence.Load(ctx, pol, be, log); err != nil {
		return fmt.Errorf("reading the dependence structure: %w", err)
	}
	return nil
}

// Open connects to pol's backend and prepares pol against it; on failure
// nothing stays open.
func Open(ctx context.Context, pol *policies.Policy, log *slog.Logger) (backends.Backend, error) {
	blog := log
	if blog != nil {
		blog = log.With("component", "backend")
	}
	be, err := connect.Open(ctx, pol.Backend, blog)
	if err != nil {
		return nil, err // connect.OpenError: the driver, the target and why
	}
	if err := Backend(ctx, pol, be, log); err != nil {
		be.Close()
		return nil, err
	}
	return be, nil
}
