package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// While serve runs, it holds the bbolt ledger's file lock, so `ddp-proxy
// budget` and `audit` cannot open the file. serve therefore answers them
// on a Unix socket next to the ledger (ledger path + ".sock", mode 0600:
// the same people who may read the file may ask; the audit history holds
// query text). The commands open the file when it is free and use the
// socket when it is locked. The same handler (ledgerHandler) can be
// mounted on the admin listener under /ledger/.

// ledgerSocketPath is where serve answers ledger reads.
func ledgerSocketPath(ledgerPath string) string { return ledgerPath + ".sock" }

// ledgerHandler serves the ledger's read-only views as JSON:
//
//	GET /ledger/accounts                          []budget.Account
//	GET /ledger/pending                           []budget.Pending
//	GET /ledger/audit?user=U&dataset=D&since=T    budget.AuditEntry per line (T: budget.ParseSince)
//	GET /ledger/remaining?user=U&dataset=D&epsilon=E&delta=F
//	                                              budget.Budget: what is left of the limit (E, F)
//
// The limit is the caller's: the ledger keeps no limits (they are the
// policy's, which the caller has read), only what was spent.
func ledgerHandler(l ledgerView) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ledger/accounts", func(w http.ResponseWriter, r *http.Request) {
		accts, err := l.Accounts(r.Context())
		writeJSON(w, accts, err)
	})
	mux.HandleFunc("GET /ledger/pending", func(w http.ResponseWriter, r *http.Request) {
		pend, err := l.Reservations(r.Context())
		writeJSON(w, pend, err)
	})
	mux.HandleFunc("GET /ledger/remaining", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		limit, err := limitParam(q)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		left, err := l.Remaining(r.Context(), q.Get("user"), q.Get("dataset"), limit)
		writeJSON(w, left, err)
	})
	mux.HandleFunc("GET /ledger/audit", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f := budget.AuditFilter{User: q.Get("user"), Dataset: q.Get("dataset")}
		if s := q.Get("since"); s != "" {
			t, err := budget.ParseSince(s, time.Now())
			if err != nil {
				http.Error(w, "since "+err.Error(), http.StatusBadRequest)
				return
			}
			f.Since = t
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		err := l.Audit(r.Context(), f, func(e budget.AuditEntry) error { return enc.Encode(e) })
		if err != nil {
			// Mid-stream: the client sees a line that is not an entry.
			_ = enc.Encode(map[string]string{"error": err.Error()})
		}
	})
	return mux
}

// limitParam reads the limit of /ledger/remaining: epsilon and delta, each
// a finite non-negative number as strconv.FormatFloat writes it (the
// shortest form that reads back as the same float64, so the ledger sees
// the policy's limit exactly).
func limitParam(q url.Values) (budget.Budget, error) {
	var out budget.Budget
	for _, p := range []struct {
		name string
		dst  *float64
	}{{"epsilon", &out.Epsilon}, {"delta", &out.Delta}} {
		v, err := strconv.ParseFloat(q.Get(p.name), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return budget.Budget{}, fmt.Errorf("%s must be a finite number >= 0, not %q", p.name, q.Get(p.name))
		}
		*p.dst = v
	}
	return out, nil
}

func writeJSON(w http.ResponseWriter, v any, err error) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// serveLedgerSocket answers ledger reads on the socket next to the ledger
// until the returned stop is called. A failure only costs the commands
// their view while serving: it is logged, never fatal.
func serveLedgerSocket(ledgerPath string, l ledgerView, log *slog.Logger) (stop func()) {
	path := ledgerSocketPath(ledgerPath)
	// The ledger's lock is ours, so a socket file there was left by a
	// serve that died: replace it.
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		log.Warn("cannot remove the old ledger socket; budget and audit cannot read the ledger while serving", "path", path, "err", err)
		return func() {}
	}
	old := umask(0o177)
	ln, err := net.Listen("unix", path)
	umask(old)
	if err != nil {
		log.Warn("cannot listen on the ledger socket; budget and audit cannot read the ledger while serving", "path", path, "err", err)
		return func() {}
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		log.Warn("cannot restrict the ledger socket; not serving it", "path", path, "err", err)
		return func() {}
	}
	srv := &http.Server{Handler: ledgerHandler(l), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("ledger socket", "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
		_ = os.Remove(path)
	}
}

// closeAlso returns l with stop run before it is closed.
func closeAlso(l servedLedger, stop func()) servedLedger { return stoppingLedger{l, stop} }

type stoppingLedger struct {
	servedLedger
	stop func()
}

// Unwrap lets the release step see the served ledger's optional
// interfaces through this wrapper (see meteredLedger.Unwrap).
func (s stoppingLedger) Unwrap() release.Ledger { return s.servedLedger }

func (s stoppingLedger) Close() error {
	s.stop()
	return s.servedLedger.Close()
}

// socketLedger reads a served ledger through its socket: the commands'
// ledgerView while serve holds the file.
type socketLedger struct {
	client *http.Client
	path   string
}

var _ ledgerView = (*socketLedger)(nil)

func dialLedgerSocket(ledgerPath string) *socketLedger {
	path := ledgerSocketPath(ledgerPath)
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}
	return &socketLedger{client: &http.Client{Transport: tr, Timeout: time.Minute}, path: path}
}

func (s *socketLedger) get(ctx context.Context, route string, q url.Values) (*http.Response, error) {
	u := "http://ledger" + route
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the ledger from the running ddp-proxy through %s: %w", s.path, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, fmt.Errorf("reading the ledger from the running ddp-proxy: %s: %s", resp.Status, msg)
	}
	return resp, nil
}

// getJSON decodes route's answer into v. Its callers return v after the
// call, not in the same return statement: Go does not specify whether
// `return out, s.getJSON(ctx, r, q, &out)` reads out before or after the
// call fills it.
func (s *socketLedger) getJSON(ctx context.Context, route string, q url.Values, v any) error {
	resp, err := s.get(ctx, route, q)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("reading the ledger from the running ddp-proxy: %w", err)
	}
	return nil
}

func (s *socketLedger) Accounts(ctx context.Context) ([]budget.Account, error) {
	var out []budget.Account
	if err := s.getJSON(ctx, "/ledger/accounts", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *socketLedger) Reservations(ctx context.Context) ([]budget.Pending, error) {
	var out []budget.Pending
	if err := s.getJSON(ctx, "/ledger/pending", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Remaining asks the serving ledger what is left of limit: the ledger
// computes it (exactly, from its exact total), not this reader from the
// rounded totals Accounts returns.
func (s *socketLedger) Remaining(ctx context.Context, user, dataset string, limit budget.Budget) (budget.Budget, error) {
	q := url.Values{}
	q.Set("user", user)
	q.Set("dataset", dataset)
	q.Set("epsilon", strconv.FormatFloat(limit.Epsilon, 'g', -1, 64))
	q.Set("delta", strconv.FormatFloat(limit.Delta, 'g', -1, 64))
	var out budget.Budget
	if err := s.getJSON(ctx, "/ledger/remaining", q, &out); err != nil {
		return budget.Budget{}, err
	}
	return out, nil
}

func (s *socketLedger) Audit(ctx context.Context, f budget.AuditFilter, fn func(budget.AuditEntry) error) error {
	q := url.Values{}
	if f.User != "" {
		q.Set("user", f.User)
	}
	if f.Dataset != "" {
		q.Set("dataset", f.Dataset)
	}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.Format(time.RFC3339Nano))
	}
	resp, err := s.get(ctx, "/ledger/audit", q)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var line struct {
			budget.AuditEntry
			Error string `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return fmt.Errorf("reading the audit history from the running ddp-proxy: %w", err)
		}
		if line.Error != "" {
			return fmt.Errorf("the running ddp-proxy failed reading the audit history: %s", line.Error)
		}
		if err := fn(line.AuditEntry); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading the audit history from the running ddp-proxy: %w", err)
	}
	return nil
}
