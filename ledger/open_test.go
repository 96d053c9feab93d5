package ledger

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestOpenRefusesForeignFiles(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
		wantErr string
	}{
		{
			name: "not a bbolt file",
			prepare: func(t *testing.T, path string) {
				writeFile(t, path, []byte(strings.Repeat("users:\n  - name: ann\n", 1000)))
			},
			wantErr: "not a ddp-proxy ledger (not a readable bbolt file: no bbolt meta page)",
		},
		{
			name: "another application's bbolt file",
			prepare: func(t *testing.T, path string) {
				boltUpdate(t, path, func(tx *bolt.Tx) error {
					_, err := tx.CreateBucket([]byte("sessions"))
					return err
				})
			},
			wantErr: `it has bucket "sessions" but no format marker`,
		},
		{
			name: "another format marker",
			prepare: func(t *testing.T, path string) {
				boltUpdate(t, path, func(tx *bolt.Tx) error {
					b, err := tx.CreateBucket(bucketMeta)
					if err != nil {
						return err
					}
					return b.Put(keyFormat, []byte("something else"))
				})
			},
			wantErr: `format marker is "something else"`,
		},
		{
			name: "a newer format version",
			prepare: func(t *testing.T, path string) {
				newLedgerFile(t, path)
				boltUpdate(t, path, func(tx *bolt.Tx) error {
					return tx.Bucket(bucketMeta).Put(keyVersion, []byte("8"))
				})
			},
			wantErr: `ledger format version "8" is not supported`,
		},
		{
			name: "a missing bucket",
			prepare: func(t *testing.T, path string) {
				newLedgerFile(t, path)
				boltUpdate(t, path, func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketPending) })
			},
			wantErr: `bucket "pending" is missing`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ledger.db")
			tt.prepare(t, path)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			l, err := Open(path, Options{LockTimeout: time.Second})
			if err == nil {
				_ = l.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
			// Refusing must not have modified the file.
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Error("Open changed a file it refused")
			}
		})
	}
}

func TestOpenLockedFile(t *testing.T) {
	h := newHarness(t)
	start := time.Now()
	l, err := Open(h.path, Options{LockTimeout: 100 * time.Millisecond})
	if err == nil {
		_ = l.Close()
		t.Fatal("second Open of a locked file succeeded")
	}
	if !strings.Contains(err.Error(), "locked by another process") {
		t.Errorf("error %q does not say the file is locked", err)
	}
	// bbolt polls the lock every 50ms and gives up one poll early, so only
	// the upper side is ours: the timeout is honoured, not the default.
	if d := time.Since(start); d >= DefaultLockTimeout {
		t.Errorf("gave up after %v, want about the 100ms timeout", d)
	}
}

// TestCheckDetectsViolations damages a consistent ledger in each way Check
// claims to detect and requires Check to report it.
func TestCheckDetectsViolations(t *testing.T) {
	acct := accountKey("ann", "census")
	putAcct := func(spent, committed string) func(tx *bolt.Tx) error {
		return func(tx *bolt.Tx) error {
			a := newAccount()
			a.spent.eps = rat(t, spent)
			a.committed.eps = rat(t, committed)
			a.queries = 1
			return newMemo().putAccount(tx, acct, a)
		}
	}
	tests := []struct {
		name    string
		damage  func(tx *bolt.Tx) error
		wantErr string
	}{
		{name: "spent lost a pending charge", damage: putAcct("1/10", "1/10"), wantErr: "!= committed + pending"},
		{name: "spent above committed + pending", damage: putAcct("1", "1/10"), wantErr: "!= committed + pending"},
		{name: "negative spent", damage: putAcct("-1/10", "-3/10"), wantErr: "negative spent"},
		{
			name:    "undecodable account",
			damage:  func(tx *bolt.Tx) error { return tx.Bucket(bucketAccounts).Put(acct, []byte("{")) },
			wantErr: "decode account",
		},
		{
			name: "bad rational",
			damage: func(tx *bolt.Tx) error {
				return tx.Bucket(bucketAccounts).Put(acct, []byte(`{"spent_epsilon":"0.1.2","spent_delta":"0","committed_epsilon":"0","committed_delta":"0"}`))
			},
			wantErr: "bad rational",
		},
		{
			name:    "pending without account",
			damage:  func(tx *bolt.Tx) error { return tx.Bucket(bucketAccounts).Delete(acct) },
			wantErr: "missing account",
		},
		{
			name:    "undecodable reservation",
			damage:  func(tx *bolt.Tx) error { return tx.Bucket(bucketPending).Put(idKey(99), []byte("x")) },
			wantErr: "reservation 99",
		},
		{
			name:    "format marker gone",
			damage:  func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketMeta) },
			wantErr: "no format marker",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ledger.db")
			l, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			// A consistent start: 0.1 committed, 0.2 pending.
			r, err := l.Reserve(context.Background(), "ann", "census", eps(0.1), eps(1))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Commit("q", []byte("rows")); err != nil {
				t.Fatal(err)
			}
			if _, err := l.Reserve(context.Background(), "ann", "census", eps(0.2), eps(1)); err != nil {
				t.Fatal(err)
			}
			if err := l.Check(); err != nil {
				t.Fatalf("Check before damage: %v", err)
			}
			if err := l.db.Update(tt.damage); err != nil {
				t.Fatal(err)
			}
			err = l.Check()
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Check = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func boltUpdate(t *testing.T, path string, fn func(*bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

func newLedgerFile(t *testing.T, path string) {
	t.Helper()
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}
