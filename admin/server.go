package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ReadyTimeout bounds each readiness check: /readyz answers within it even
// when the backend hangs.
const ReadyTimeout = 2 * time.Second

// Check is one readiness check (backend, ledger): nil when reachable.
type Check func(ctx context.Context) error

// Config is what an admin Server serves.
type Config struct {
	Metrics *Metrics
	// Ready names the checks /readyz runs (concurrently).
	Ready map[string]Check
	// Budget, when set, serves the budget page at /budget.
	Budget http.Handler
	// Ledger, when set, serves everything under /ledger/ (the ledger's
	// read-only views: accounts, pending reservations, audit history).
	Ledger http.Handler
	Logger *slog.Logger
}

// indexPage links the listener's pages, for a DBA who opens its address.
const indexPage = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ddp-proxy admin</title></head>
<body><h1>ddp-proxy</h1><ul>
<li><a href="/budget">budget page</a></li>
<li><a href="/metrics">metrics</a> (Prometheus)</li>
<li><a href="/healthz">healthz</a>, <a href="/readyz">readyz</a></li>
</ul></body></html>
`

// Server is the admin HTTP listener.
type Server struct {
	cfg  Config
	log  *slog.Logger
	http *http.Server
}

// NewServer returns a server for cfg.
func NewServer(cfg Config) *Server {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: log}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(cfg.Metrics.Registry(), promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, indexPage)
	})
	if cfg.Budget != nil {
		mux.Handle("GET /budget", addressedByIP(cfg.Budget))
	}
	if cfg.Ledger != nil {
		mux.Handle("/ledger/", addressedByIP(cfg.Ledger))
	}
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return s
}

// Serve serves on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	err := s.http.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops the listener, letting requests in flight finish until ctx
// ends.
func (s *Server) Shutdown(ctx context.Context) error { return s.http.Shutdown(ctx) }

// readyz runs every check with ReadyTimeout and answers 200 when all
// pass, else 503 naming those that failed (their errors go to the log
// only: they may name hosts).
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), ReadyTimeout)
	defer cancel()
	var (
		mu     sync.Mutex
		failed []string
		wg     sync.WaitGroup
	)
	for name, check := range s.cfg.Ready {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := runCheck(ctx, check)
			if err == nil {
				return
			}
			s.log.Warn("readiness check failed", "check", name, "err", err)
			mu.Lock()
			failed = append(failed, name)
			mu.Unlock()
		}()
	}
	wg.Wait()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if len(failed) > 0 {
		sort.Strings(failed)
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready: %s unreachable\n", strings.Join(failed, ", "))
		return
	}
	fmt.Fprintln(w, "ready")
}

// runCheck runs check but returns when ctx ends even if check ignores it
// (a backend driver stuck in a dial).
func runCheck(ctx context.Context, check Check) error {
	done := make(chan error, 1)
	go func() { done <- check(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// addressedByIP serves h only to requests whose Host is an IP address or
// localhost. The budget page and the ledger views (audit texts included)
// have no authentication: their protection is that the listener is
// private. DNS rebinding defeats that from the DBA's browser — a web page
// whose name is made to resolve to the listener's address reads these
// pages as its own origin — and is told by the Host header, which then
// names the attacker's domain.
func addressedByIP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if hp, _, err := net.SplitHostPort(host); err == nil {
			host = hp
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		if net.ParseIP(host) == nil && !strings.EqualFold(host, "localhost") {
			http.Error(w, "this page answers only requests addressed to the admin listener's IP address or localhost "+
				"(a host name could be DNS rebinding); a reverse proxy in front must send the listener's address as Host",
				http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}
