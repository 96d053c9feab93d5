package pgwire

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"
	"github.com/xdg-go/scram"

	"github.com/ddp-proxy/ddp-proxy/internal/testlog"
)

// TestVerifierMatchesPassword checks the test verifier independently of
// the server: recompute StoredKey and ServerKey from "secret" and the
// verifier's salt and iterations with the SCRAM client library.
func TestVerifierMatchesPassword(t *testing.T) {
	parts := strings.Split(testVerifier, "$")
	salt, err := base64.StdEncoding.DecodeString(strings.Split(parts[1], ":")[1])
	if err != nil {
		t.Fatal(err)
	}
	client, err := scram.SHA256.NewClient("", "secret", "")
	if err != nil {
		t.Fatal(err)
	}
	want := client.GetStoredCredentials(scram.KeyFactors{Salt: string(salt), Iters: 4096})
	got, err := ParseSCRAMVerifier(testVerifier)
	if err != nil {
		t.Fatal(err)
	}
	if got.Iters != 4096 || got.Salt != string(salt) ||
		!bytes.Equal(got.StoredKey, want.StoredKey) || !bytes.Equal(got.ServerKey, want.ServerKey) {
		t.Errorf("verifier does not match the password \"secret\"")
	}
}

func TestParseSCRAMVerifier(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(make([]byte, 32))
	short := base64.StdEncoding.EncodeToString(make([]byte, 31))
	tests := []struct {
		name, v string
		wantErr bool
	}{
		{"good", testVerifier, false},
		{"md5 hash", "md5" + strings.Repeat("0", 32), true},
		{"wrong mechanism", "SCRAM-SHA-1$4096:c2FsdA==$" + key + ":" + key, true},
		{"zero iterations", "SCRAM-SHA-256$0:c2FsdA==$" + key + ":" + key, true},
		{"iterations not a number", "SCRAM-SHA-256$x:c2FsdA==$" + key + ":" + key, true},
		{"salt not base64", "SCRAM-SHA-256$4096:!!$" + key + ":" + key, true},
		{"empty salt", "SCRAM-SHA-256$4096:$" + key + ":" + key, true},
		{"short key", "SCRAM-SHA-256$4096:c2FsdA==$" + short + ":" + key, true},
		{"missing server key", "SCRAM-SHA-256$4096:c2FsdA==$" + key, true},
		{"extra section", testVerifier + "$x", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSCRAMVerifier(tc.v)
			if (err != nil) != tc.wantErr {
				t.Errorf("err = %v, wantErr %v", err, tc.wantErr)
			}
		})
	}
}

// TestPQAuth logs in through lib/pq (database/sql), which speaks
// SCRAM-SHA-256 on its own implementation.
func TestPQAuth(t *testing.T) {
	var logs testlog.Sink
	ts := startServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	host, port, _ := strings.Cut(ts.addr, ":")
	tests := []struct {
		name, user, password string
		wantCode             string // "" = success
		reason               string // the server log's reason for a failure
	}{
		{"cleartext-derived credentials", "alice", alicePassword, "", ""},
		{"verifier", "verif", "secret", "", ""},
		{"trust ignores password", "trusty", "whatever", "", ""},
		{"wrong password", "alice", "nope", "28P01", "wrong password"},
		{"wrong password, verifier", "verif", "Secret", "28P01", "wrong password"},
		{"unknown user", "mallory", "nope", "28P01", "no such user"},
		{"user without credentials", "nopass", "", "28P01", "no password a PostgreSQL client can use"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dsn := fmt.Sprintf("host=%s port=%s user=%s password='%s' dbname=db sslmode=disable",
				host, port, tc.user, tc.password)
			db, err := sql.Open("postgres", dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var n int64
			var label string
			err = db.QueryRowContext(context.Background(), "rows 1").Scan(&n, &label, new(float64), new(bool), new(int32), new(string), new(uint32))
			if tc.wantCode == "" {
				if err != nil {
					t.Fatalf("login: %v", err)
				}
				if n != 1 || label != "row 1" {
					t.Errorf("got %d %q", n, label)
				}
				return
			}
			var pe *pq.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T), want *pq.Error", err, err)
			}
			wantMsg := fmt.Sprintf("password authentication failed for user %q", tc.user)
			if string(pe.Code) != tc.wantCode || pe.Message != wantMsg || pe.Severity != "FATAL" {
				t.Errorf("got %s %s %q, want FATAL %s %q", pe.Severity, pe.Code, pe.Message, tc.wantCode, wantMsg)
			}
			// The operator's log says why; the client's message does not.
			deadline := time.Now().Add(5 * time.Second)
			for !logs.HasLine("user="+tc.user, "authentication failed", tc.reason) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if !logs.HasLine("user="+tc.user, "authentication failed", tc.reason) {
				t.Errorf("no log line for %s's failed login with reason %q:\n%s", tc.user, tc.reason, logs.String())
			}
		})
	}
}

// TestPQExtended runs a parameterised query through lib/pq, which binds
// text-format parameters with unspecified types.
func TestPQExtended(t *testing.T) {
	ts := startServer(t, Config{})
	host, port, _ := strings.Cut(ts.addr, ":")
	db, err := sql.Open("postgres", fmt.Sprintf("host=%s port=%s user=alice password=%s dbname=db sslmode=disable", host, port, alicePassword))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var i int64
	var s string
	var b bool
	if err := db.QueryRow("echo int8 text bool", 41, "x'y", true).Scan(&i, &s, &b); err != nil {
		t.Fatal(err)
	}
	if i != 41 || s != "x'y" || !b {
		t.Errorf("got %d %q %v", i, s, b)
	}
	_, err = db.Exec("failprepare 42501", 1)
	var pe *pq.Error
	if !errors.As(err, &pe) || pe.Code != "42501" {
		t.Errorf("got %v, want 42501", err)
	}
}

// TestUnknownUserSaltStable: an unknown user is offered the same salt on
// every attempt, as a real user would be, so probing does not tell them
// apart.
func TestUnknownUserSaltStable(t *testing.T) {
	s := NewServer(Config{Handler: newFakeHandler()})
	a, _ := s.credentials("mallory", UserAuth{}, false)
	b, _ := s.credentials("mallory", UserAuth{}, false)
	c, _ := s.credentials("eve", UserAuth{}, false)
	if a.Salt != b.Salt || a.Iters != scramIterations {
		t.Error("fake salt changes between attempts")
	}
	if a.Salt == c.Salt {
		t.Error("two unknown users share a salt")
	}
	other := NewServer(Config{Handler: newFakeHandler()})
	if d, _ := other.credentials("mallory", UserAuth{}, false); d.Salt == a.Salt {
		t.Error("two servers share a salt: it is not random per server")
	}
}
