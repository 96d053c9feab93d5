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

	// Shapes of PostgreSQL texts (shape.go): a text that misses above but
	// differs from a parsed one only in literal values is built from that
	// one's tree instead of parsed, bounded the same way.
	shapeOrder *list.List // values are *shapeEntry
	shapes     map[string]*list.Element
	shapeBytes int // the sum of the shapes' key lengths, at most maxShapeBytes
}

// maxShapeBytes bounds the shapes' memory besides their number: a shape
// keeps up to 1+maxShapeInstances trees, and a tree takes up to about 70
// bytes per byte of text (measured on a 6 kB IN list), so 512 kB of shape
// text is some 100 MB at worst and a few hundred typical BI statements.
const maxShapeBytes = 512 << 10

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
		fpOrder: list.New(), fps: map[cacheKey]*list.Element{},
		shapeOrder: list.New(), shapes: map[string]*list.Element{}}
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

	if d == Postgres {
		if fp, ok := c.shapeFingerprint(text); ok {
			return fp
		}
	}

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

	stmts, done, err := c.parseShape(d, sql)
	if !done {
		stmts, err = Parse(d, sql)
	}

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

// parseShape parses a PostgreSQL text through its shape: from the shape's
// tree when the shape is known and checked, else by parsing it and
// checking the shape for the next text. done=false means the text has no
// usable shape: parse it as usual.
func (c *Cache) parseShape(d Dialect, sql string) (stmts []ir.Statement, done bool, err error) {
	if d != Postgres {
		return nil, false, nil
	}
	key, lits, ok := pgShape(sql)
	if !ok || len(lits) == 0 {
		return nil, false, nil // no literal: the text-keyed map is the shape cache
	}
	if e := c.shape(key); e != nil {
		if !e.ok {
			return nil, false, nil
		}
		in := e.tree(lits)
		stmts = orEmpty(pgStatements(sql, in.res))
		e.put(in)
		return stmts, true, nil
	}
	res, perr := pgParse(sql)
	if perr != nil {
		c.addShape(&shapeEntry{key: key})
		return nil, true, pgSyntaxError(perr)
	}
	c.addShape(newShapeEntry(key, sql, res, lits))
	return orEmpty(pgStatements(sql, res)), true, nil
}

// shape looks a shape up (nil when unknown).
func (c *Cache) shape(key string) *shapeEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.shapes[key]
	if !ok {
		return nil
	}
	c.shapeOrder.MoveToFront(el)
	return el.Value.(*shapeEntry)
}

func (c *Cache) addShape(e *shapeEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.shapes[e.key]; ok {
		return // another caller checked it first
	}
	c.shapes[e.key] = c.shapeOrder.PushFront(e)
	c.shapeBytes += len(e.key)
	for c.shapeOrder.Len() > c.max || c.shapeBytes > maxShapeBytes {
		last := c.shapeOrder.Back()
		old := last.Value.(*shapeEntry)
		delete(c.shapes, old.key)
		c.shapeBytes -= len(old.key)
		c.shapeOrder.Remove(last)
	}
}

// shapeFingerprint returns the fingerprint of a PostgreSQL text through its
// shape: libpg_query's fingerprint leaves constants out, so every text of
// a checked shape has the same one (the oracle tests compare them), and a
// new literal need not be fingerprinted nor fill the text-keyed map. The
// front ends fingerprint a statement's own text, which is not the text
// they parsed when it came with others or a semicolon, so an unknown
// shape is parsed and checked here too. ok=false: no usable shape.
func (c *Cache) shapeFingerprint(text string) (fp string, ok bool) {
	key, lits, lexed := pgShape(text)
	if !lexed || len(lits) == 0 {
		return "", false
	}
	e := c.shape(key)
	if e == nil {
		res, err := pgParse(text)
		if err != nil {
			c.addShape(&shapeEntry{key: key})
			return "", false
		}
		e = newShapeEntry(key, text, res, lits)
		c.addShape(e)
	}
	if !e.ok {
		return "", false
	}
	c.mu.Lock()
	fp = e.fp
	c.mu.Unlock()
	if fp == "" {
		fp = Fingerprint(Postgres, text)
		c.mu.Lock()
		e.fp = fp
		c.mu.Unlock()
	}
	return fp, true
}
