package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/ledger"
)

// TestLedgerHandlerAuditSince: /ledger/audit?since= takes the forms
// `ddp-proxy audit --since` takes (an RFC 3339 time, a date, a duration
// back from now), and refuses anything else with 400 naming them.
func TestLedgerHandlerAuditSince(t *testing.T) {
	charged := time.Now().Add(-2 * time.Hour).UTC()
	led, err := ledger.Open(filepath.Join(t.TempDir(), "l.db"), ledger.Options{Now: func() time.Time { return charged }})
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	r, err := led.Charge(context.Background(), budget.Charge{User: "u", Dataset: "d", Cost: budget.Budget{Epsilon: 0.5}}, budget.Budget{Epsilon: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit("", nil); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ledgerHandler(led))
	defer srv.Close()
	get := func(since string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + "/ledger/audit?since=" + url.QueryEscape(since))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tt := range []struct {
		since   string
		entries int
	}{
		{"3h", 1},
		{"1h", 0},
		{charged.Format(time.DateOnly), 1}, // midnight UTC of the charge's day
		{charged.Add(-time.Minute).Format(time.RFC3339), 1},
		{charged.Add(time.Minute).Format(time.RFC3339Nano), 0},
	} {
		code, body := get(tt.since)
		if code != http.StatusOK {
			t.Errorf("since=%s: %d %s", tt.since, code, body)
			continue
		}
		if got := strings.Count(body, `"reservation"`); got != tt.entries {
			t.Errorf("since=%s: %d entries, want %d:\n%s", tt.since, got, tt.entries, body)
		}
	}
	code, body := get("yesterday")
	if code != http.StatusBadRequest || !strings.Contains(body, "RFC 3339") || !strings.Contains(body, "date") || !strings.Contains(body, "duration") {
		t.Errorf("since=yesterday: %d %q, want 400 naming the accepted forms", code, body)
	}
}
