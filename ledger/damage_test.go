package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// damageFixture is a closed ledger large enough that its accounts and
// releases live in pages of their own: 60 accounts (a leaf page, not an
// inline bucket), 200 releases of 600 bytes (a branch page over leaves)
// and one release of 3 pages (overflow pages), plus the facts a test
// needs to aim at them.
type damageFixture struct {
	path     string
	data     []byte // the intact file
	pageSize int
	// accountsRoot and releasesRoot are the root pages of those buckets;
	// freelist is the freelist page.
	accountsRoot, releasesRoot, freelist int
	releasesRootType                     string
	// inUse is the size of the pages below the high-water mark (the file
	// is longer: bbolt grows it ahead of use).
	inUse int
}

func newDamageFixture(t *testing.T) *damageFixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := Open(path, Options{Now: func() time.Time { return testClock }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 60 {
		r, err := l.Reserve(ctx, fmt.Sprintf("user%02d", i), "census", eps(0.1), eps(10))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Commit(fmt.Sprintf("key-%d", i), bytes.Repeat([]byte{byte(i)}, 600)); err != nil {
			t.Fatal(err)
		}
	}
	// zed's spent total is the only 7/10 in the file (see the value test).
	r, err := l.Reserve(ctx, "zed", "census", eps(0.7), eps(10))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit("big", bytes.Repeat([]byte("x"), 3*4096)); err != nil {
		t.Fatal(err)
	}
	for i := range 140 {
		r, err := l.Reserve(ctx, "user00", "census", eps(0.01), eps(10))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Commit(fmt.Sprintf("more-%d", i), bytes.Repeat([]byte{byte(i)}, 600)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	f := &damageFixture{path: path}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	f.pageSize = db.Info().PageSize
	err = db.View(func(tx *bolt.Tx) error {
		f.inUse = int(tx.Size())
		f.accountsRoot = int(tx.Bucket(bucketAccounts).Root())
		f.releasesRoot = int(tx.Bucket(bucketReleaseLog).Root())
		info, err := tx.Page(f.releasesRoot)
		if err != nil {
			return err
		}
		f.releasesRootType = info.Type
		for id := 2; ; id++ {
			info, err := tx.Page(id)
			if err != nil || info == nil {
				return fmt.Errorf("no freelist page found: %v", err)
			}
			if info.Type == "freelist" {
				f.freelist = id
				return nil
			}
		}
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if f.accountsRoot == 0 || f.releasesRootType != "branch" {
		t.Fatalf("fixture too small: accounts root %d, releases root a %s page", f.accountsRoot, f.releasesRootType)
	}
	if f.data, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	if f.inUse >= len(f.data) {
		t.Fatalf("fixture: %d bytes in use of %d, want room after the last page in use", f.inUse, len(f.data))
	}
	return f
}

// write replaces the ledger file with b.
func (f *damageFixture) write(t *testing.T, b []byte) {
	t.Helper()
	if err := os.WriteFile(f.path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// patched returns a copy of the intact file with b written at off.
func (f *damageFixture) patched(off int, b []byte) []byte {
	out := bytes.Clone(f.data)
	copy(out[off:], b)
	return out
}

func u64(v uint64) []byte { return binary.NativeEndian.AppendUint64(nil, v) }
func u16(v uint16) []byte { return binary.NativeEndian.AppendUint16(nil, v) }

// TestOpenRefusesDamagedFiles damages a ledger file in the ways a disk, a
// copy or a person does, and requires Open to refuse each with ErrDamaged
// and a message naming the file and the remedy — without a panic or a
// memory fault (which would kill this test binary) and without touching
// the file — while the intact file still opens.
func TestOpenRefusesDamagedFiles(t *testing.T) {
	f := newDamageFixture(t)
	ps := f.pageSize
	page := func(id int) int { return id * ps }
	tests := []struct {
		name    string
		file    func(t *testing.T) []byte
		wantErr string
	}{
		{name: "empty file", file: func(*testing.T) []byte { return nil }, wantErr: "the file is empty (0 bytes)"},
		{name: "a few bytes", file: func(*testing.T) []byte { return f.data[:50] }, wantErr: "shorter than a bbolt meta page"},
		{name: "truncated to 8 KiB", file: func(*testing.T) []byte { return f.data[:8192] }, wantErr: "it was cut short"},
		{name: "truncated mid-page", file: func(*testing.T) []byte { return f.data[:page(3)+ps/2] }, wantErr: "it was cut short"},
		{name: "last page in use missing", file: func(*testing.T) []byte { return f.data[:f.inUse-ps] }, wantErr: "it was cut short"},
		{name: "meta page 0 flipped", file: func(*testing.T) []byte { return f.patched(16+20, []byte{0xff, 0xee}) }, wantErr: "meta page 0 is damaged"},
		{name: "meta page 1 flipped", file: func(*testing.T) []byte { return f.patched(page(1)+16+44, []byte{0x5a}) }, wantErr: "meta page 1 is damaged"},
		{name: "both meta pages flipped", file: func(*testing.T) []byte {
			b := f.patched(16+20, []byte{0xff})
			copy(b[page(1)+16+20:], []byte{0xff})
			return b
		}, wantErr: "both meta pages are damaged"},
		{name: "data page says another id", file: func(*testing.T) []byte { return f.patched(page(f.accountsRoot), u64(9999)) }, wantErr: fmt.Sprintf("page %d (reached from", f.accountsRoot)},
		{name: "data page type", file: func(*testing.T) []byte { return f.patched(page(f.accountsRoot)+8, u16(0x40)) }, wantErr: "where a branch or leaf page belongs"},
		{name: "data page element count", file: func(*testing.T) []byte { return f.patched(page(f.accountsRoot)+10, u16(0xfff0)) }, wantErr: "more than fit in it"},
		{name: "leaf element points outside", file: func(*testing.T) []byte {
			return f.patched(page(f.accountsRoot)+pageHeaderSize+4, []byte{0xff, 0xff, 0xff, 0x7f})
		}, wantErr: "points past the end of the page"},
		{name: "branch child outside the file", file: func(*testing.T) []byte {
			return f.patched(page(f.releasesRoot)+pageHeaderSize+8, u64(1<<40))
		}, wantErr: "outside the pages in use"},
		{name: "branch child reached twice", file: func(*testing.T) []byte {
			child := f.data[page(f.releasesRoot)+pageHeaderSize+8 : page(f.releasesRoot)+pageHeaderSize+16]
			return f.patched(page(f.releasesRoot)+pageHeaderSize+elementSize+8, child)
		}, wantErr: "reached twice"},
		{name: "freelist count", file: func(*testing.T) []byte { return f.patched(page(f.freelist)+10, u16(0xfffe)) }, wantErr: "more than it can hold"},
		{name: "overflow past the end", file: func(*testing.T) []byte { return f.patched(page(f.accountsRoot)+12, []byte{0xff, 0xff, 0, 0}) }, wantErr: "past the pages in use"},
		{name: "a spent total changed", file: func(t *testing.T) []byte {
			// Well-formed bytes, wrong value: the budget invariant
			// (spent = committed + pending) catches it. Freed pages may
			// hold old copies of the record; all are changed.
			// (The record's first fields in the binary codec: spent ε
			// 7/10, spent δ 0, committed ε 7/10; the changed spent ε
			// 1/10 has the same length.)
			ratsOf := func(r ...string) []byte {
				e := &enc{}
				for _, s := range r {
					v, err := parseRat(s)
					if err != nil {
						t.Fatal(err)
					}
					e.rat(v)
				}
				return e.b
			}
			rec := ratsOf("7/10", "0", "7/10")
			if !bytes.Contains(f.data, rec) {
				t.Fatal("zed's account record not found in the file")
			}
			return bytes.ReplaceAll(f.data, rec, ratsOf("1/10", "0", "7/10"))
		}, wantErr: "!= committed + pending"},
		{name: "an account key changed", file: func(t *testing.T) []byte {
			// zed's account, renamed zee (still first in key order, so
			// bbolt's check finds nothing): only the digest notices that
			// zed's spent budget would read as zero.
			key := []byte("\x03zedcensus\x01") // the key, then its record's tag
			if !bytes.Contains(f.data, key) {
				t.Fatal("zed's account key not found in the file")
			}
			return bytes.ReplaceAll(f.data, key, []byte("\x03zeecensus\x01"))
		}, wantErr: "do not match the budget digest"},
		{name: "a record dropped", file: func(t *testing.T) []byte {
			// One fewer element on the first leaf of the accounts: its last
			// account is gone, with no trace in the page structure.
			leaf := f.accountsRoot
			if binary.NativeEndian.Uint16(f.data[page(leaf)+8:]) == flagBranch {
				leaf = int(binary.NativeEndian.Uint64(f.data[page(leaf)+pageHeaderSize+8:]))
			}
			n := binary.NativeEndian.Uint16(f.data[page(leaf)+10:])
			if n < 2 {
				t.Fatalf("leaf %d has %d elements", leaf, n)
			}
			return f.patched(page(leaf)+10, u16(n-1))
		}, wantErr: "do not match the budget digest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.file(t)
			f.write(t, before)
			l, err := Open(f.path, Options{LockTimeout: time.Second})
			if err == nil {
				_ = l.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, ErrDamaged) {
				t.Errorf("error does not match ErrDamaged: %v", err)
			}
			for _, want := range []string{tt.wantErr, f.path, "Restore the file from a backup", "move the file away yourself"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if after, _ := os.ReadFile(f.path); !bytes.Equal(after, before) {
				t.Error("Open changed a file it refused")
			}
		})
	}
	t.Run("intact file", func(t *testing.T) {
		f.write(t, f.data)
		h := harnessAt(t, f.path)
		if spent := h.spentExact("zed", "census"); spent.eps.RatString() != "7/10" {
			t.Errorf("zed spent %s, want 7/10", spent.eps.RatString())
		}
	})
}

// TestOpenSurvivesRandomDamage flips random bytes all over a ledger file:
// whatever Open makes of it, it must not crash the process, and a file it
// accepts must pass Check. (300 files, seeded: the same every run.)
func TestOpenSurvivesRandomDamage(t *testing.T) {
	f := newDamageFixture(t)
	const files = 300
	rng := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for i := range files {
		b := bytes.Clone(f.data)
		// Aim half of the damage at the structure: the meta and the
		// accounts root pages.
		var lo, n int
		switch i % 4 {
		case 0:
			lo, n = 0, 2*f.pageSize
		case 1:
			lo, n = f.accountsRoot*f.pageSize, f.pageSize
		default:
			lo, n = 0, len(b)
		}
		for range 1 + rng.IntN(4) {
			b[lo+rng.IntN(n)] ^= byte(1 + rng.IntN(255))
		}
		if i%10 == 9 {
			b = b[:rng.IntN(len(b))]
		}
		f.write(t, b)
		l, err := Open(f.path, Options{LockTimeout: time.Second})
		if err != nil {
			if !errors.Is(err, ErrDamaged) {
				t.Fatalf("file %d: an error that is not ErrDamaged: %v", i, err)
			}
			continue
		}
		accepted++
		if cerr := l.Check(); cerr != nil {
			t.Errorf("file %d: Open accepted a file that fails Check: %v", i, cerr)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d of %d damaged files accepted (damage in free space, in stored answers or in bytes nothing reads)", accepted, files)
}

// FuzzOpen: no file makes Open crash the process, and a file it accepts
// passes Check.
func FuzzOpen(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("not a ledger"))
	// A fresh ledger as the seed the fuzzer mutates.
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed.db")
	l, err := Open(seed, Options{})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := l.Reserve(context.Background(), "ann", "census", eps(0.5), eps(1)); err != nil {
		f.Fatal(err)
	}
	if err := l.Close(); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "ledger.db")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := Open(path, Options{LockTimeout: time.Second})
		if err != nil {
			return
		}
		defer l.Close()
		if err := l.Check(); err != nil {
			t.Errorf("Open accepted a file that fails Check: %v", err)
		}
	})
}

// TestCreateIsAtomic: a missing file is created as a complete ledger (with
// its marker and creation time), and no temporary file is left behind.
func TestCreateIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.db")
	l, err := Open(path, Options{Now: func() time.Time { return testClock }})
	if err != nil {
		t.Fatal(err)
	}
	var created string
	if err := l.db.View(func(tx *bolt.Tx) error {
		created = string(tx.Bucket(bucketMeta).Get(keyCreated))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if want := testClock.Format(time.RFC3339Nano); created != want {
		t.Errorf("created = %q, want %q", created, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 || entries[0].Name() != "ledger.db" || entries[1].Name() != "ledger.db.log" || entries[2].Name() != "ledger.db.log2" {
		t.Errorf("directory holds %v, want only ledger.db and its log's two segments", entries)
	}
}

// TestOpenRefusesBucketlessBboltFile: a sound bbolt file without any bucket
// (what the ledger of an older ddp-proxy looked like between bbolt's
// initialisation and its first transaction) is not taken as a new ledger.
func TestOpenRefusesBucketlessBboltFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path, Options{})
	if err == nil || !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "without buckets") {
		t.Fatalf("Open = %v, want a refusal of a bbolt file without buckets", err)
	}
}

// TestOpenUpgradesVersion1: a sound version 1 ledger (no budget digest)
// opens, keeps every record, and is upgraded to version 2 with a digest
// that matches; a later change to a record is then detected.
func TestOpenUpgradesVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Reserve(context.Background(), "ann", "census", eps(0.3), eps(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit("k", []byte("release")); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// What version 1 wrote: no digest.
	boltUpdate(t, path, func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		if err := m.Delete(keyDigest); err != nil {
			return err
		}
		return m.Put(keyVersion, []byte("1"))
	})
	h := harnessAt(t, path)
	if spent := h.spentExact("ann", "census"); spent.eps.RatString() != "3/10" {
		t.Errorf("ann spent %s after the upgrade, want 3/10", spent.eps.RatString())
	}
	if err := h.l.db.View(func(tx *bolt.Tx) error {
		if v := string(tx.Bucket(bucketMeta).Get(keyVersion)); v != formatVersion {
			return fmt.Errorf("version %q after the upgrade", v)
		}
		if _, err := storedDigest(tx); err != nil {
			return err
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h.checkAndClose()
	boltUpdate(t, path, func(tx *bolt.Tx) error { return tx.Bucket(bucketAccounts).Delete(accountKey("ann", "census")) })
	if _, err := Open(path, Options{}); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "budget digest") {
		t.Fatalf("Open after an account was deleted behind its back = %v, want a digest mismatch", err)
	}
}
