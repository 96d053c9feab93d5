package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// CompactResult reports what Compact did.
type CompactResult struct {
	BytesBefore, BytesAfter int64
	// Evicted counts releases the retention bounds removed first.
	Evicted int
}

// Compact rewrites the ledger at path into a new file holding only live
// pages (bbolt never shrinks a file: pages freed by evicted releases are
// reused, not returned), then replaces the file. It is offline: it holds
// the file lock throughout, so it fails (ErrLocked) while serve runs.
// With opts.Retention set, the bounds are applied first.
//
// The copy is verified before it replaces the original — opened as a
// ledger (every check Open makes), Check, and the same accounts, pending
// reservations, audit entries and releases as the original — and is
// linked into place by rename, so a crash leaves either file whole. A
// proxy that was waiting for the lock on the old file notices the file
// was replaced and opens the new one (openBolt).
func Compact(path string, opts Options) (CompactResult, error) {
	var res CompactResult
	// Open without the bounds (Open would apply them unseen), then apply
	// them here to report what they removed.
	ropts := opts
	ropts.Retention = Retention{}
	src, err := Open(path, ropts)
	if err != nil {
		return res, err
	}
	defer src.Close()
	src.retention = opts.Retention
	if res.Evicted, err = src.Evict(context.Background()); err != nil {
		return res, err
	}
	// Everything into the bbolt file, which is what is copied.
	if err := src.checkpoint(); err != nil {
		return res, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return res, fmt.Errorf("compact ledger: %w", err)
	}
	res.BytesBefore = fi.Size()

	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".compact-*")
	if err != nil {
		return res, fmt.Errorf("compact ledger: %w", err)
	}
	name := tmp.Name()
	_ = tmp.Close()
	_ = os.Remove(name) // bbolt initialises a missing file
	defer os.Remove(name)
	for _, seg := range logPaths(name) {
		defer os.Remove(seg) // sameLedger opens the copy, which creates its log
	}
	dst, err := bolt.Open(name, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return res, fmt.Errorf("compact ledger: %w", err)
	}
	err = guard(func() error { return bolt.Compact(dst, src.db, 64<<20) })
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, fmt.Errorf("compact ledger: %w", err)
	}
	if err := sameLedger(src, name, opts); err != nil {
		return res, fmt.Errorf("compact ledger: the compacted copy is not the same ledger, so the original is kept: %w", err)
	}
	if err := os.Rename(name, path); err != nil {
		return res, fmt.Errorf("compact ledger: %w", err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return res, err
	}
	if fi, err := os.Stat(path); err == nil {
		res.BytesAfter = fi.Size()
	}
	return res, nil
}

// sameLedger opens the copy at name as a ledger and compares it with src.
func sameLedger(src *Ledger, name string, opts Options) error {
	opts.Retention = Retention{} // compare, do not evict
	cp, err := Open(name, opts)
	if err != nil {
		return err
	}
	defer cp.Close()
	if err := cp.Check(); err != nil {
		return err
	}
	ctx := context.Background()
	a1, err1 := src.All()
	a2, err2 := cp.All()
	p1, err3 := src.Pending()
	p2, err4 := cp.Pending()
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return err
	}
	if fmt.Sprint(a1) != fmt.Sprint(a2) || fmt.Sprint(p1) != fmt.Sprint(p2) {
		return errors.New("accounts or pending reservations differ")
	}
	count := func(l *Ledger) (n int, err error) {
		err = l.Audit(ctx, budget.AuditFilter{}, func(budget.AuditEntry) error { n++; return nil })
		return n, err
	}
	n1, err1 := count(src)
	n2, err2 := count(cp)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if n1 != n2 {
		return fmt.Errorf("%d audit entries in the copy, %d in the original", n2, n1)
	}
	var r1, r2 int
	_ = src.db.View(func(tx *bolt.Tx) error { r1 = tx.Bucket(bucketReleaseLog).Stats().KeyN; return nil })
	_ = cp.db.View(func(tx *bolt.Tx) error { r2 = tx.Bucket(bucketReleaseLog).Stats().KeyN; return nil })
	if r1 != r2 {
		return fmt.Errorf("%d releases in the copy, %d in the original", r2, r1)
	}
	return nil
}
