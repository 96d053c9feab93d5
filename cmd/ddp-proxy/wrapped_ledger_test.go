package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/admin"
	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// TestWrappedLedgerReportsEviction: serve hands the release engine the
// bbolt ledger inside two wrappers (closeAlso for the ledger socket, meter
// for the metrics). The engine finds the eviction report by a type
// assertion through the wrappers' Unwrap (release.LedgerAs), so each
// wrapper must let it be found; otherwise a repeat charged
// again after ledger.retention evicted its release is charged without the
// notice saying why.
func TestWrappedLedgerReportsEviction(t *testing.T) {
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	// One byte of releases at most: every stored release is evicted by
	// the commit that stores it.
	led, err := ledger.Open(filepath.Join(t.TempDir(), "l.db"), ledger.Options{
		Now: func() time.Time { return at }, Retention: ledger.Retention{MaxBytes: 1}})
	if err != nil {
		t.Fatal(err)
	}
	served := closeAlso(led, func() {})
	defer served.Close()
	ctx := context.Background()
	r, err := led.Charge(ctx, budget.Charge{User: "u", Dataset: "d", Cost: budget.Budget{Epsilon: 1}, Release: "k"}, budget.Budget{Epsilon: 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit("k", []byte("release")); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := led.Release(ctx, "k"); ok {
		t.Fatal("the release outlived a 1-byte retention bound")
	}
	for name, l := range map[string]release.Ledger{
		"closeAlso":        served,
		"meter(closeAlso)": meter(served, admin.NewMetrics(admin.MetricsOptions{})),
	} {
		er, ok := release.LedgerAs[interface {
			Evicted(context.Context, string) (time.Time, bool, error)
		}](l)
		if !ok {
			t.Errorf("%s hides the ledger's eviction report", name)
			continue
		}
		got, ok, err := er.Evicted(ctx, "k")
		if err != nil || !ok || !got.Equal(at) {
			t.Errorf("%s: evicted at %v, %v, %v; want %v", name, got, ok, err, at)
		}
	}
}
