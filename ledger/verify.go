package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// verifyFile checks the structure of a bbolt file before bbolt maps it.
//
// bbolt trusts its file: it memory-maps it and follows page ids without
// bounds checks, so a file cut short (a full disk, a copy interrupted, a
// restore of half a backup) faults with SIGBUS on the first page past the
// end of the file, and a corrupt page id reads past the mapping. Neither is
// a Go panic that recover could catch; the process dies with a runtime dump.
// So the file is read here with ReadAt, page by page, and everything bbolt
// will dereference when it opens the file and walks it (Open, tx.Check,
// every bucket and cursor) is checked to lie inside the file first:
//
//   - both meta pages are valid (magic, version, checksum, same page size);
//     bbolt would silently fall back to the older one if the newer were
//     damaged, losing the last transaction — a charge — so either one
//     being damaged is refused;
//   - the file holds every page below the newest meta's high-water mark;
//   - every page reachable from the root (branch, leaf, overflow pages,
//     sub-buckets, inline buckets) and the freelist lies below that mark,
//     says its own page id, has a branch/leaf type, and every element's key
//     and value lie inside its page; no page is reachable twice;
//   - every page below the mark is either reachable or free, not both.
//
// The layout is bbolt's file format version 2 (go.etcd.io/bbolt,
// internal/common): little-endian on the platforms ddp-proxy supports,
// written in the machine's byte order.
func verifyFile(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat: %w", err)
	}
	size := st.Size()
	if size == 0 {
		return &damagedError{what: "the file is empty (0 bytes); a ledger file is never empty, even before its first charge"}
	}
	v := &verifier{f: f, size: size}
	if err := v.readMetas(); err != nil {
		return err
	}
	return v.walk()
}

// bbolt format constants (internal/common).
const (
	boltMagic         = 0xED0CDAED
	boltVersion       = 2
	pageHeaderSize    = 16 // id u64, flags u16, count u16, overflow u32
	elementSize       = 16 // branch: pos u32, ksize u32, pgid u64; leaf: flags, pos, ksize, vsize u32
	metaSize          = 64 // magic, version, page size, flags u32; root, sequence, freelist, pgid, txid, checksum u64
	metaChecksumAt    = 56
	bucketHeaderSize  = 16 // root pgid u64, sequence u64
	flagBranch        = 0x01
	flagLeaf          = 0x02
	flagMeta          = 0x04
	flagFreelist      = 0x10
	leafFlagBucket    = 0x01
	pgidNoFreelist    = ^uint64(0)
	minPageSize       = 1 << 10
	maxPageSize       = 1 << 24 // the largest page size bbolt searches for
	maxBucketDepth    = 64      // the ledger nests no bucket; bbolt's limit is the stack
	freelistCountWide = 0xFFFF
)

var ne = binary.NativeEndian

// damagedError is a ledger file that exists but cannot be trusted. Open
// wraps it into a message that names the file and what to do.
type damagedError struct {
	what string
	// notBolt is set when the file is not a bbolt file at all (no meta
	// page carries the magic), foreign when it is a sound bbolt file
	// without the ledger's format marker: another file at ledger.path.
	notBolt, foreign bool
}

func (e *damagedError) Error() string { return e.what }

func damaged(format string, args ...any) error {
	return &damagedError{what: fmt.Sprintf(format, args...)}
}

type meta struct {
	magic, version, pageSize, flags uint32
	root, freelist, pgid, txid      uint64
	checksum                        uint64
	sum                             uint64 // computed
}

func parseMeta(b []byte) meta {
	h := fnv.New64a()
	h.Write(b[:metaChecksumAt])
	return meta{
		magic: ne.Uint32(b[0:]), version: ne.Uint32(b[4:]), pageSize: ne.Uint32(b[8:]), flags: ne.Uint32(b[12:]),
		root: ne.Uint64(b[16:]), freelist: ne.Uint64(b[32:]), pgid: ne.Uint64(b[40:]), txid: ne.Uint64(b[48:]),
		checksum: ne.Uint64(b[56:]), sum: h.Sum64(),
	}
}

// problem says what is wrong with the meta page of page id (nil if valid).
func (m meta) problem() error {
	switch {
	case m.magic != boltMagic:
		return errors.New("it does not carry the bbolt magic number")
	case m.version != boltVersion:
		return fmt.Errorf("its bbolt format version is %d, not %d", m.version, boltVersion)
	case m.checksum != m.sum:
		return errors.New("its checksum does not match its contents")
	case m.pageSize < minPageSize || m.pageSize > maxPageSize || m.pageSize&(m.pageSize-1) != 0:
		return fmt.Errorf("its page size %d is not a power of two between %d and %d", m.pageSize, minPageSize, maxPageSize)
	}
	return nil
}

type verifier struct {
	f        *os.File
	size     int64
	pageSize uint64
	hwm      uint64 // pages below it exist (the newest meta's pgid)
	m        meta   // the meta bbolt will use (highest txid)
	used     []bool // reachable pages
}

// readAt reads exactly len(b) bytes at off, or reports the file too short.
func (v *verifier) readAt(b []byte, off int64) error {
	n, err := v.f.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return damaged("the file ends at byte %d, inside a page that starts at byte %d: it was cut short", v.size, off)
	}
	return fmt.Errorf("read: %w", err)
}

// magicAt0 reports whether the file's first page carries the bbolt magic
// number, as far as the file reaches.
func (v *verifier) magicAt0() bool {
	var b [pageHeaderSize + 4]byte
	n, _ := v.f.ReadAt(b[:], 0)
	return n < len(b) || ne.Uint32(b[pageHeaderSize:]) == boltMagic
}

// metaAt reads the meta page stored at byte offset off.
func (v *verifier) metaAt(off int64) (meta, bool) {
	var b [pageHeaderSize + metaSize]byte
	if n, _ := v.f.ReadAt(b[:], off); n < len(b) {
		return meta{}, false
	}
	return parseMeta(b[pageHeaderSize:]), true
}

func (v *verifier) readMetas() error {
	// Meta page 0 is at offset 0 whatever the page size; page 1 is one page
	// further, so its offset is found from page 0 or, if page 0 is
	// unreadable, by trying every page size (as bbolt does).
	m0, ok0 := v.metaAt(0)
	if !ok0 && !v.magicAt0() {
		return &damagedError{notBolt: true, what: "no bbolt meta page"}
	}
	var ps uint64
	if ok0 && m0.problem() == nil {
		ps = uint64(m0.pageSize)
	} else {
		for s := uint64(minPageSize); s <= maxPageSize; s <<= 1 {
			if m, ok := v.metaAt(int64(s)); ok && m.problem() == nil && uint64(m.pageSize) == s {
				ps = s
				break
			}
		}
	}
	if ps == 0 {
		if !ok0 {
			return damaged("the file is only %d bytes long, shorter than a bbolt meta page: it was cut short", v.size)
		}
		if m0.magic != boltMagic {
			return &damagedError{notBolt: true, what: "no bbolt meta page"}
		}
		return damaged("both meta pages are damaged (page 0: %v)", m0.problem())
	}
	v.pageSize = ps
	metas := [2]meta{}
	for i := range metas {
		hdr := make([]byte, pageHeaderSize)
		if err := v.readAt(hdr, int64(uint64(i)*ps)); err != nil {
			return err
		}
		m, ok := v.metaAt(int64(uint64(i) * ps))
		if !ok {
			return damaged("the file is %d bytes long and ends inside meta page %d: it was cut short", v.size, i)
		}
		if err := m.problem(); err != nil {
			return damaged("meta page %d is damaged: %v", i, err)
		}
		if id, flags := ne.Uint64(hdr), ne.Uint16(hdr[8:]); id != uint64(i) || flags != flagMeta {
			return damaged("meta page %d is damaged: its header says page %d, type %#x", i, id, flags)
		}
		if uint64(m.pageSize) != ps {
			return damaged("the meta pages disagree on the page size (%d and %d)", ps, m.pageSize)
		}
		metas[i] = m
	}
	v.m = metas[0]
	if metas[1].txid > v.m.txid {
		v.m = metas[1]
	}
	v.hwm = v.m.pgid
	if v.hwm < 4 {
		return damaged("the newest meta page (transaction %d) says the file has %d pages; a bbolt file has at least 4", v.m.txid, v.hwm)
	}
	if pages := uint64(v.size) / ps; v.hwm > pages {
		return damaged("the file is %d bytes long but its newest meta page (transaction %d) needs %d pages of %d bytes (%d bytes): it was cut short",
			v.size, v.m.txid, v.hwm, ps, v.hwm*ps)
	}
	return nil
}

// page reads page id with its overflow pages after checking that they lie
// below the high-water mark and that the page says its own id. It marks the
// pages reachable.
func (v *verifier) page(id uint64, from string) (flags uint16, count uint16, span []byte, err error) {
	if id < 2 || id >= v.hwm {
		return 0, 0, nil, damaged("%s points to page %d, outside the pages in use (2 to %d)", from, id, v.hwm-1)
	}
	hdr := make([]byte, pageHeaderSize)
	if err := v.readAt(hdr, int64(id*v.pageSize)); err != nil {
		return 0, 0, nil, err
	}
	self, flags, count, overflow := ne.Uint64(hdr), ne.Uint16(hdr[8:]), ne.Uint16(hdr[10:]), uint64(ne.Uint32(hdr[12:]))
	if self != id {
		return 0, 0, nil, damaged("page %d (reached from %s) says it is page %d", id, from, self)
	}
	if overflow >= v.hwm-id {
		return 0, 0, nil, damaged("page %d continues over %d more pages, past the pages in use (%d)", id, overflow, v.hwm)
	}
	for p := id; p <= id+overflow; p++ {
		if v.used[p] {
			return 0, 0, nil, damaged("page %d is reached twice (again from %s)", p, from)
		}
		v.used[p] = true
	}
	span = make([]byte, (overflow+1)*v.pageSize)
	if err := v.readAt(span, int64(id*v.pageSize)); err != nil {
		return 0, 0, nil, err
	}
	return flags, count, span, nil
}

func (v *verifier) walk() error {
	v.used = make([]bool, v.hwm)
	v.used[0], v.used[1] = true, true
	free := make([]bool, v.hwm)
	if v.m.freelist != pgidNoFreelist {
		if err := v.freelist(free); err != nil {
			return err
		}
	}
	if err := v.tree(v.m.root, "the root bucket", 0); err != nil {
		return err
	}
	for id := uint64(2); id < v.hwm; id++ {
		switch {
		case v.used[id] && free[id]:
			return damaged("page %d is both in use and listed as free", id)
		case !v.used[id] && !free[id] && v.m.freelist != pgidNoFreelist:
			return damaged("page %d is neither in use nor listed as free", id)
		}
	}
	return nil
}

func (v *verifier) freelist(free []bool) error {
	flags, count, span, err := v.page(v.m.freelist, "the meta page's freelist")
	if err != nil {
		return err
	}
	if flags != flagFreelist {
		return damaged("the freelist page %d has type %#x", v.m.freelist, flags)
	}
	first, n := uint64(0), uint64(count)
	if count == freelistCountWide {
		if len(span) < pageHeaderSize+8 {
			return damaged("the freelist page %d is too short", v.m.freelist)
		}
		first, n = 1, ne.Uint64(span[pageHeaderSize:])
	}
	if n > uint64(len(span)-pageHeaderSize)/8-first {
		return damaged("the freelist page %d lists %d pages, more than it can hold", v.m.freelist, n)
	}
	for i := range n {
		id := ne.Uint64(span[pageHeaderSize+(first+i)*8:])
		if id < 2 || id >= v.hwm {
			return damaged("the freelist lists page %d, outside the pages in use", id)
		}
		if free[id] {
			return damaged("the freelist lists page %d twice", id)
		}
		free[id] = true
	}
	return nil
}

// tree checks the B+tree rooted at page id.
func (v *verifier) tree(id uint64, from string, depth int) error {
	if depth > maxBucketDepth {
		return damaged("the tree under %s is deeper than %d levels", from, maxBucketDepth)
	}
	flags, count, span, err := v.page(id, from)
	if err != nil {
		return err
	}
	switch flags {
	case flagBranch:
		if count == 0 {
			return damaged("branch page %d has no elements", id)
		}
		if err := elementsFit(span, count, id); err != nil {
			return err
		}
		for i := range uint64(count) {
			e := span[pageHeaderSize+i*elementSize:]
			pos, ksize, child := uint64(ne.Uint32(e)), uint64(ne.Uint32(e[4:])), ne.Uint64(e[8:])
			if err := inside(span, pageHeaderSize+i*elementSize, pos, ksize, id); err != nil {
				return err
			}
			if err := v.tree(child, fmt.Sprintf("branch page %d", id), depth+1); err != nil {
				return err
			}
		}
		return nil
	case flagLeaf:
		return v.leaf(span, count, id, depth)
	}
	return damaged("page %d (reached from %s) has type %#x where a branch or leaf page belongs", id, from, flags)
}

// leaf checks the elements of a leaf page (span) and the buckets it holds.
// id is the page id (0 for an inline bucket's page).
func (v *verifier) leaf(span []byte, count uint16, id uint64, depth int) error {
	if err := elementsFit(span, count, id); err != nil {
		return err
	}
	for i := range uint64(count) {
		at := pageHeaderSize + i*elementSize
		e := span[at:]
		flags, pos, ksize, vsize := ne.Uint32(e), uint64(ne.Uint32(e[4:])), uint64(ne.Uint32(e[8:])), uint64(ne.Uint32(e[12:]))
		if err := inside(span, at, pos, ksize+vsize, id); err != nil {
			return err
		}
		if flags&leafFlagBucket == 0 {
			continue
		}
		val := span[at+pos+ksize : at+pos+ksize+vsize]
		if len(val) < bucketHeaderSize {
			return damaged("a bucket entry on page %d is %d bytes, shorter than a bucket header", id, len(val))
		}
		root := ne.Uint64(val)
		if root != 0 {
			if err := v.tree(root, fmt.Sprintf("a bucket on page %d", id), depth+1); err != nil {
				return err
			}
			continue
		}
		// An inline bucket: its leaf page is the rest of the value.
		inline := val[bucketHeaderSize:]
		if len(inline) < pageHeaderSize {
			return damaged("an inline bucket on page %d is too short", id)
		}
		if f := ne.Uint16(inline[8:]); f != flagLeaf {
			return damaged("an inline bucket on page %d has page type %#x", id, f)
		}
		if err := v.leaf(inline, ne.Uint16(inline[10:]), id, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// elementsFit checks that count elements fit after the page header.
func elementsFit(span []byte, count uint16, id uint64) error {
	if uint64(len(span)) < pageHeaderSize+uint64(count)*elementSize {
		return damaged("page %d says it has %d elements, more than fit in it", id, count)
	}
	return nil
}

// inside checks that the n bytes an element at offset at points to (pos is
// relative to the element, as bbolt stores it) lie inside span.
func inside(span []byte, at, pos, n, id uint64) error {
	if end := at + pos + n; end > uint64(len(span)) {
		return damaged("an element of page %d points past the end of the page", id)
	}
	return nil
}
