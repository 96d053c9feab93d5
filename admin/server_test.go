package admin

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestPrivatePagesRefuseHostNames: the budget page and the ledger views
// (audit texts) answer a request addressed by IP or localhost, and refuse
// one whose Host is a name, which is what a DNS-rebinding page in the
// DBA's browser sends. Metrics and health checks answer any Host
// (Prometheus scrapes by name).
func TestPrivatePagesRefuseHostNames(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("secret")) })
	s := NewServer(Config{Metrics: NewMetrics(MetricsOptions{}), Budget: ok, Ledger: ok})
	for _, c := range []struct {
		path, host string
		want       int
	}{
		{"/budget", "127.0.0.1:9187", http.StatusOK},
		{"/budget", "[::1]:9187", http.StatusOK},
		{"/budget", "localhost:9187", http.StatusOK},
		{"/budget", "10.0.0.7", http.StatusOK},
		{"/budget", "rebind.attacker.example:9187", http.StatusMisdirectedRequest},
		{"/ledger/audit", "rebind.attacker.example:9187", http.StatusMisdirectedRequest},
		{"/ledger/audit", "127.0.0.1:9187", http.StatusOK},
		{"/metrics", "prometheus-target.internal:9187", http.StatusOK},
		{"/healthz", "proxy.internal:9187", http.StatusOK},
	} {
		req := httptest.NewRequest(http.MethodGet, "http://"+c.host+c.path, nil)
		rec := httptest.NewRecorder()
		s.http.Handler.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("GET %s with Host %s: %d, want %d", c.path, c.host, rec.Code, c.want)
		}
		if c.want != http.StatusOK && rec.Body.String() == "secret" {
			t.Errorf("GET %s with Host %s served the page", c.path, c.host)
		}
	}
}
