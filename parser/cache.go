package parser

import (
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
	items *lru[cacheKey, cacheEntry]

	// Fingerprints of statement texts, bounded the same way: a private
	// statement's fingerprint goes into its log line on every answer
	// (cached ones too) and into the audit entry of a fresh one, and
	// libpg_query computes it by parsing the text again.
	fps *lru[cacheKey, string]

	// Shapes of PostgreSQL texts (shape.go): a text that misses above but
	// differs from a parsed one only in literal values is built from that
	// one's tree instead of parsed, bounded the same way.
	// Bounded also by the bytes of their keys (maxShapeBytes).
	shapes *lru[string, *shapeEntry]
}

// maxShapeBytes bounds the shapes' memory besides their number: a shape
// keeps up to 1+maxShapeInstances trees, and a tree takes up to about 70
// bytes per byte of text (measured on a 6 kB IN list), so 512 kB of shape
// text is some 100 MB at worst and a few hundred typical BI statements.
const maxShapeBytes = 512 << 10

type cacheKey struct {
	d   Dialect
	sql string
}

type cacheEntry struct {
	stmts []ir.Statement
	err   error
	// shape: the text was parsed through this checked shape, so its
	// fingerprint is the shape's (Fingerprint need not lex it again).
	shape *shapeEntry
}

// NewCache returns a cache holding at most size parsed texts (size < 1
// means 1).
func NewCache(size int) *Cache {
	size = max(size, 1)
	return &Cache{items: newLRU[cacheKey, cacheEntry](size, 0, nil), fps: newLRU[cacheKey, string](size, 0, nil),
		shapes: newLRU[string, *shapeEntry](size, maxShapeBytes, func(k string) int { return len(k) })}
}

// Fingerprint is Fingerprint with memoisation (the same value: it depends
// on the dialect and the text only).
func (c *Cache) Fingerprint(d Dialect, text string) string {
	if len(text) > maxCachedText {
		return Fingerprint(d, text)
	}
	k := cacheKey{d, text}
	c.mu.Lock()
	fp, ok := c.fps.get(k)
	var shape *shapeEntry
	if !ok {
		if e, parsed := c.items.get(k); parsed && e.shape != nil {
			shape, fp = e.shape, e.shape.fp
		}
	}
	c.mu.Unlock()
	if ok || fp != "" {
		return fp
	}

	if d == Postgres {
		if fp, ok := c.shapeFingerprint(text, shape); ok {
			return fp
		}
	}

	fp = Fingerprint(d, text)
	c.mu.Lock()
	c.fps.add(k, fp)
	c.mu.Unlock()
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
	e, ok := c.items.get(k)
	c.mu.Unlock()
	if ok {
		return e.stmts, e.err
	}

	stmts, shape, done, err := c.parseShape(d, sql)
	if !done {
		stmts, err = Parse(d, sql)
	}

	c.mu.Lock()
	c.items.add(k, cacheEntry{stmts: stmts, err: err, shape: shape})
	c.mu.Unlock()
	return stmts, err
}

// Len returns the number of cached texts.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.items.order.Len()
}

// parseShape parses a PostgreSQL text through its shape: from the shape's
// tree when the shape is known and checked, else by parsing it and
// checking the shape for the next text. done=false means the text has no
// usable shape: parse it as usual.
func (c *Cache) parseShape(d Dialect, sql string) (stmts []ir.Statement, shape *shapeEntry, done bool, err error) {
	if d != Postgres {
		return nil, nil, false, nil
	}
	key, lits, ok := pgShape(sql)
	if !ok || len(lits) == 0 {
		return nil, nil, false, nil // no literal: the text-keyed map is the shape cache
	}
	if e := c.shape(key); e != nil {
		if !e.ok {
			return nil, nil, false, nil
		}
		in := e.tree(lits)
		stmts = orEmpty(pgStatements(sql, in.res))
		e.put(in)
		return stmts, e, true, nil
	}
	res, perr := pgParse(sql)
	if perr != nil {
		c.addShape(&shapeEntry{key: key})
		return nil, nil, true, pgSyntaxError(perr)
	}
	c.addShape(newShapeEntry(key, sql, res, lits))
	return orEmpty(pgStatements(sql, res)), nil, true, nil
}

// shape looks a shape up (nil when unknown).
func (c *Cache) shape(key string) *shapeEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, _ := c.shapes.get(key)
	return e
}

func (c *Cache) addShape(e *shapeEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shapes.add(e.key, e) // kept if another caller checked it first
}

// shapeFingerprint returns the fingerprint of a PostgreSQL text through its
// shape: libpg_query's fingerprint leaves constants out, so every text of
// a checked shape has the same one (the oracle tests compare them), and a
// new literal need not be fingerprinted nor fill the text-keyed map. The
// front ends fingerprint a statement's own text, which is not the text
// they parsed when it came with others or a semicolon, so an unknown
// shape is parsed and checked here too. known is the shape Parse read
// text through (nil: look it up by lexing text). ok=false: no usable
// shape.
func (c *Cache) shapeFingerprint(text string, known *shapeEntry) (fp string, ok bool) {
	e := known // the shape Parse read text through, if it did
	if e == nil {
		key, lits, lexed := pgShape(text)
		if !lexed || len(lits) == 0 {
			return "", false
		}
		e = c.shape(key)
		if e == nil {
			res, err := pgParse(text)
			if err != nil {
				c.addShape(&shapeEntry{key: key})
				return "", false
			}
			e = newShapeEntry(key, text, res, lits)
			c.addShape(e)
		}
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
