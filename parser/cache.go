package parser

import (
	"container/list"
	"sync"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// Cache memoises Parse by (dialect, text). Dashboards and BI tools send the
// same query text over and over, and a cold PostgreSQL parse costs about
// 100 µs (most of it inside pg_query's protobuf serialisation), so the
// front ends parse through a Cache. It is bounded (least recently used
// entries are evicted) and safe for concurrent use.
//
// The statements it returns are shared between callers: treat them as
// read-only (ir.Query.Bind returns a copy, which is how parameters are
// filled in).
type Cache struct {
	mu    sync.Mutex
	max   int
	order *list.List // front = most recently used; values are *cacheEntry
	items map[cacheKey]*list.Element

	// Fingerprints of statement texts, bounded the same way: a private
	// statement's fingerprint goes into its log line on every answer
	// (cached ones too) and into the audit entry of a fresh one, and
	// libpg_query computes it by parsing the text again.
	fpOrder *list.List // values are *fpEntry
	fps     map[cacheKey]*list.Element
}

type fpEntry struct {
	key cacheKey
	fp  string
}

type cacheKey struct {
	d   Dialect
	sql string
}

type cacheEntry struct {
	key   cacheKey
	stmts []ir.Statement
	err   error
}

// NewCache returns a cache holding at most size parsed texts (size < 1
// means 1).
func NewCache(size int) *Cache {
	return &Cache{max: max(size, 1), order: list.New(), items: map[cacheKey]*list.Element{},
		fpOrder: list.New(), fps: map[cacheKey]*list.Element{}}
}

// Fingerprint is Fingerprint with memoisation (the same value: it depends
// on the dialect and the text only).
func (c *Cache) Fingerprint(d Dialect, text string) string {
	if len(text) > maxCachedText {
		return Fingerprint(d, text)
	}
	k := cacheKey{d, text}
	c.mu.Lock()
	if el, ok := c.fps[k]; ok {
		c.fpOrder.MoveToFront(el)
		fp := el.Value.(*fpEntry).fp
		c.mu.Unlock()
		return fp
	}
	c.mu.Unlock()

	fp := Fingerprint(d, text)

	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.fps[k]; !ok {
		c.fps[k] = c.fpOrder.PushFront(&fpEntry{key: k, fp: fp})
		for c.fpOrder.Len() > c.max {
			last := c.fpOrder.Back()
			delete(c.fps, last.Value.(*fpEntry).key)
			c.fpOrder.Remove(last)
		}
	}
	return fp
}

// maxCachedText bounds the length of a cached text: long generated
// statements are rarely repeated and would pin memory.
const maxCachedText = 16 << 10

// Parse is Parse with memoisation. Errors (syntax errors) are cached too:
// they depend on the text only.
func (c *Cache) Parse(d Dialect, sql string) ([]ir.Statement, error) {
	if len(sql) > maxCachedText {
		return Parse(d, sql)
	}
	k := cacheKey{d, sql}
	c.mu.Lock()
	if el, ok := c.items[k]; ok {
		c.order.MoveToFront(el)
		e := el.Value.(*cacheEntry)
		c.mu.Unlock()
		return e.stmts, e.err
	}
	c.mu.Unlock()

	stmts, err := Parse(d, sql)

	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[k]; !ok {
		c.items[k] = c.order.PushFront(&cacheEntry{key: k, stmts: stmts, err: err})
		for c.order.Len() > c.max {
			last := c.order.Back()
			delete(c.items, last.Value.(*cacheEntry).key)
			c.order.Remove(last)
		}
	}
	return stmts, err
}

// Len returns the number of cached texts.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
