package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/connect"
	"github.com/ddp-proxy/ddp-proxy/dependence"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// needsBackendForDependence reports whether a ddp dataset keeps its
// dependence in the backend (groups or edges).
func needsBackendForDependence(pol *policies.Policy) bool {
	for _, ds := range pol.Datasets {
		if ds.Model == policies.ModelDDP && ds.Dependence != nil {
			if k := ds.Dependence.Kind(); k == policies.DependenceGroupsKind || k == policies.DependenceEdgesKind {
				return true
			}
		}
	}
	return false
}

// explainDependence prepares the ddp datasets of an offline-loaded policy
// for explain: the structure is read when the backend is reachable; when it
// is not, the dataset's queries are refused with the reason (printed once
// on stderr), never planned with a guessed structure.
func explainDependence(ctx context.Context, pol *policies.Policy, stderr io.Writer) {
	var q dependence.Querier
	if needsBackendForDependence(pol) {
		why := ""
		if missing := pol.MissingEnvOf("backend.dsn"); len(missing) > 0 {
			why = "environment variables backend.dsn refers to are not set (" + strings.Join(missing, ", ") + ")"
		} else {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			be, err := connect.Open(cctx, pol.Backend, nil)
			if err != nil {
				why = err.Error()
			} else {
				defer be.Close()
				q = be
			}
		}
		if why != "" {
			fmt.Fprintf(stderr, "note: cannot read the dependence structure from the backend (%s); queries on ddp datasets with groups or edges are refused\n", why)
		}
	}
	for _, dn := range pol.DatasetNames {
		ds := pol.Datasets[dn]
		if ds.Model != policies.ModelDDP || ds.Dependence == nil {
			continue
		}
		s, err := dependence.Read(ctx, ds, q)
		if err != nil {
			ds.Dependence.Unavailable = err.Error()
			continue
		}
		ds.Dependence.Structure = s
	}
}

// checkDependence reads every ddp structure (check --connect) and returns
// a problem per dataset that cannot be read and a summary line per dataset
// that can.
func checkDependence(ctx context.Context, pol *policies.Policy, be backends.Backend) (probs, notes []string) {
	for _, dn := range pol.DatasetNames {
		ds := pol.Datasets[dn]
		if ds.Model != policies.ModelDDP || ds.Dependence == nil {
			continue
		}
		path := "datasets." + dn + ".dependence"
		start := time.Now()
		s, err := dependence.Read(ctx, ds, be)
		if err != nil {
			probs = append(probs, pol.Position(path)+": "+path+": "+err.Error())
			continue
		}
		notes = append(notes, fmt.Sprintf("dataset %s: dependence %s, L = %d, %d units with dependents, %d links, max weighted degree %.4g (%s, read in %s)",
			dn, s.Kind, s.L, s.Units, s.Links, s.MaxWeightedDegree, s.Source, time.Since(start).Round(time.Millisecond)))
	}
	return probs, notes
}
