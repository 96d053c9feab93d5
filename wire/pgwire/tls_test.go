package pgwire

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// selfSigned returns a server TLS config for 127.0.0.1 and the path of
// its certificate in PEM (for sslrootcert).
func selfSigned(t *testing.T) (*tls.Config, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "pgwire test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		MinVersion:   tls.VersionTLS12,
	}, path
}

func TestTLS(t *testing.T) {
	cfg, caPath := selfSigned(t)
	withTLS := startServer(t, Config{TLS: cfg})
	without := startServer(t, Config{})
	tests := []struct {
		name    string
		ts      *testServer
		sslmode string
		wantTLS bool
		wantErr bool
	}{
		{"require", withTLS, "sslmode=require", true, false},
		{"verify-full", withTLS, "sslmode=verify-full&sslrootcert=" + caPath, true, false},
		{"disable on a TLS server", withTLS, "sslmode=disable", false, false},
		{"require without TLS", without, "sslmode=require", false, true},
		{"prefer without TLS", without, "sslmode=prefer", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			host, port, _ := net.SplitHostPort(tc.ts.addr)
			url := "postgres://alice:" + alicePassword + "@" + host + ":" + port + "/db?" + tc.sslmode
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			conn, err := pgx.Connect(ctx, url)
			if tc.wantErr {
				if err == nil {
					conn.Close(ctx)
					t.Fatal("connected, want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			_, isTLS := conn.PgConn().Conn().(*tls.Conn)
			if isTLS != tc.wantTLS {
				t.Errorf("TLS = %v, want %v", isTLS, tc.wantTLS)
			}
			if got := queryFakeRows(t, conn, "rows 2"); len(got) != 2 {
				t.Errorf("%d rows", len(got))
			}
		})
	}
}
