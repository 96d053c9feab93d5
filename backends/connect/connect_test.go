package connect

import (
	"context"
	"errors"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/internal/pgtest"
	"github.com/ddp-proxy/ddp-proxy/internal/testaddr"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestOpenErrorTellsTheOperator: a backend that cannot be opened is
// reported with where the connection went and the driver's reason, never
// the DSN's password, and still carries the backend's code for callers
// that decide by it.
func TestOpenErrorTellsTheOperator(t *testing.T) {
	addr := testaddr.Free(t)
	host, port, _ := net.SplitHostPort(addr)
	tests := []struct {
		name string
		cfg  policies.Backend
		want []string
	}{
		{"postgres, closed port", policies.Backend{Driver: "postgres",
			DSN: "postgres://ann:s3cret-pw@" + addr + "/sales?sslmode=disable&connect_timeout=2"},
			[]string{"postgres backend", "host " + host + ", port " + port + ", database sales, user ann", "connection refused"}},
		{"postgres key=value form", policies.Backend{Driver: "postgres",
			DSN: "host=" + host + " port=" + port + " dbname=sales user=ann password=s3cret-pw sslmode=disable connect_timeout=2"},
			[]string{"host " + host + ", port " + port + ", database sales, user ann", "connection refused"}},
		{"mysql, closed port", policies.Backend{Driver: "mysql", DSN: "ann:s3cret-pw@tcp(" + addr + ")/sales?timeout=2s"},
			[]string{"mysql backend", "tcp " + addr + ", database sales, user ann", "connection refused"}},
		{"sqlite, missing file", policies.Backend{Driver: "sqlite", DSN: filepath.Join(t.TempDir(), "nope", "census.db")},
			[]string{"sqlite backend", "file ", "census.db"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			be, err := Open(ctx, tt.cfg, nil)
			if err == nil {
				be.Close()
				t.Fatal("opened")
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, "s3cret-pw") {
				t.Errorf("error %q shows the password", msg)
			}
			var oe *OpenError
			if !errors.As(err, &oe) || sqlerr.As(err).Code == sqlerr.Internal {
				t.Errorf("error %T %v: want an *OpenError wrapping the backend's code", err, err)
			}
		})
	}
}

// TestOpenErrorNamesMissingDatabase: against the real PostgreSQL, a
// database that does not exist is named with the server's own reason.
func TestOpenErrorNamesMissingDatabase(t *testing.T) {
	dsn := pgtest.DSN(t, "the missing-database open error test")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/ddp_no_such_database"
	_, err = Open(context.Background(), policies.Backend{Driver: "postgres", DSN: u.String()}, nil)
	if err == nil || !strings.Contains(err.Error(), "database ddp_no_such_database") ||
		!strings.Contains(err.Error(), `database "ddp_no_such_database" does not exist`) {
		t.Errorf("error %v: want the database named, with the server's reason", err)
	}
}
