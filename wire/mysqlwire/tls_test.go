package mysqlwire

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
)

func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestTLS: with a certificate the server offers TLS; over it the
// caching_sha2_password full path works for a user with only a
// mysql_native_password verifier (the cleartext goes through TLS only).
func TestTLS(t *testing.T) {
	cert := selfSigned(t)
	addr, _ := startFake(t, Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert}}, CachingSHA2First: true})
	if err := gomysql.RegisterTLSConfig("ddp-test", &tls.Config{InsecureSkipVerify: true}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user, pw string
		ok       bool
	}{
		{"hashed", "pw-hashed", true},
		{"hashed", "wrong", false},
		{"clear", "pw-clear", true},
	} {
		db := open(t, fmt.Sprintf("%s:%s@tcp(%s)/?tls=ddp-test", tc.user, tc.pw, addr))
		var n int
		err := db.QueryRow("SELECT 1").Scan(&n)
		if tc.ok && (err != nil || n != 1) {
			t.Errorf("%s over TLS: %v", tc.user, err)
		}
		if !tc.ok {
			wantErrno(t, err, 1045, "28000")
		}
	}
	db := open(t, fmt.Sprintf("clear:pw-clear@tcp(%s)/?tls=false", addr))
	if err := db.Ping(); err != nil {
		t.Errorf("plain connection to a TLS-capable server: %v", err)
	}
}
