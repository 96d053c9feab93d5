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
	return &Cache{max: max(size, 1), order: list.New(), items: map[cacheKey]*list.Element{}}
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
