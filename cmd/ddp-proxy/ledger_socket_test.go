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

// TestLedgerHandlerRemaining: /ledger/remaining answers what the ledger's
// Remaining computes for the limit asked (exact: δ 1e-6 − 3.3e-7 is
// 6.7e-07), and refuses a limit that is missing, negative or not a
// number with 400.
func TestLedgerHandlerRemaining(t *testing.T) {
	led, err := ledger.Open(filepath.Join(t.TempDir(), "l.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	r, err := led.Charge(context.Background(), budget.Charge{User: "u", Dataset: "d", Cost: budget.Budget{Epsilon: 0.5, Delta: 3.3e-7}},
		budget.Budget{Epsilon: 1, Delta: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit("", nil); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ledgerHandler(led))
	defer srv.Close()
	for _, tt := range []struct {
		name, query string
		code        int
		body        string
	}{
		{"exact", "user=u&dataset=d&epsilon=1&delta=1e-6", http.StatusOK, `{"epsilon":0.5,"delta":6.7e-7}`},
		{"never negative", "user=u&dataset=d&epsilon=0.25&delta=0", http.StatusOK, `{"epsilon":0,"delta":0}`},
		{"never charged", "user=v&dataset=d&epsilon=2&delta=1e-5", http.StatusOK, `{"epsilon":2,"delta":0.00001}`},
		{"no delta", "user=u&dataset=d&epsilon=1", http.StatusBadRequest, "delta must be"},
		{"negative", "user=u&dataset=d&epsilon=-1&delta=0", http.StatusBadRequest, "epsilon must be"},
		{"NaN", "user=u&dataset=d&epsilon=NaN&delta=0", http.StatusBadRequest, "epsilon must be"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Get(srv.URL + "/ledger/remaining?" + tt.query)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.code || !strings.Contains(string(b), tt.body) {
				t.Errorf("%s: %d %s, want %d with %s", tt.query, resp.StatusCode, b, tt.code, tt.body)
			}
		})
	}
}
