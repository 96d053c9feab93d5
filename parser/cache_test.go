package parser

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
)

func TestCache(t *testing.T) {
	c := NewCache(2)
	q := "SELECT COUNT(*) FROM people WHERE age > 3"
	want, err := Parse(Postgres, q)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Parse(Postgres, q)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("cached parse %+v, %v", got, err)
	}
	again, _ := c.Parse(Postgres, q)
	if &again[0] != &got[0] {
		t.Fatal("second parse of the same text was not served from the cache")
	}
	// The dialect is part of the key: MySQL parses backquotes, PostgreSQL does not.
	if _, err := c.Parse(MySQL, "SELECT COUNT(*) FROM `people`"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Parse(Postgres, "SELECT COUNT(*) FROM `people`"); err == nil {
		t.Fatal("PostgreSQL accepted backquotes: the dialect is not part of the key")
	}
	if c.Len() != 2 {
		t.Fatalf("cache holds %d texts, bound is 2", c.Len())
	}
	// q was evicted (least recently used): a new parse gives a new slice.
	fresh, _ := c.Parse(Postgres, q)
	if &fresh[0] == &got[0] {
		t.Fatal("an evicted entry was still served")
	}
}

// The cached fingerprint is the audit history's: the same as Fingerprint
// for each dialect (so the dialect is part of the key), "" for a text that
// does not parse, and the cache stays bounded.
func TestCacheFingerprint(t *testing.T) {
	c := NewCache(2)
	a, b := "SELECT COUNT(*) FROM people WHERE age > 3", "SELECT COUNT(*) FROM people WHERE age > 40"
	fa := c.Fingerprint(Postgres, a)
	if fa == "" || fa != Fingerprint(Postgres, a) {
		t.Fatalf("cached fingerprint %q, uncached %q", fa, Fingerprint(Postgres, a))
	}
	if fb := c.Fingerprint(Postgres, b); fb != fa {
		t.Errorf("texts differing only in a literal: %q and %q", fa, fb)
	}
	if again := c.Fingerprint(Postgres, a); again != fa {
		t.Errorf("second lookup %q, first %q", again, fa)
	}
	bq := "SELECT COUNT(*) FROM `people`"
	if my, pg := c.Fingerprint(MySQL, bq), c.Fingerprint(Postgres, bq); my == "" || pg != "" {
		t.Errorf("backquoted text: MySQL %q (want a digest), PostgreSQL %q (want none: it does not parse)", my, pg)
	}
	if n := c.fps.order.Len(); n != 2 || len(c.fps.items) != 2 {
		t.Errorf("fingerprint cache holds %d (%d keyed), bound is 2", n, len(c.fps.items))
	}
}

func TestCacheConcurrent(t *testing.T) {
	c := NewCache(8)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				q := fmt.Sprintf("SELECT COUNT(*) FROM t WHERE a > %d", i%12)
				st, err := c.Parse(Postgres, q)
				if err != nil || len(st) != 1 || st[0].Query == nil {
					t.Errorf("%s: %v", q, err)
					return
				}
				if fp := c.Fingerprint(Postgres, q); fp != Fingerprint(Postgres, q) {
					t.Errorf("%s: cached fingerprint %q", q, fp)
					return
				}
			}
		}()
	}
	wg.Wait()
	if c.Len() > 8 {
		t.Fatalf("cache grew to %d", c.Len())
	}
}

func TestOutputNames(t *testing.T) {
	tests := map[string][]string{
		"SELECT a, t.b, count(*), x AS y, 1, c::text FROM t": {"a", "b", "count", "y", "?column?", "c"},
		"SELECT * FROM t":                       nil,
		"SELECT a FROM t UNION SELECT b FROM u": nil,
	}
	for sql, want := range tests {
		st, err := Parse(Postgres, sql)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(st[0].OutputNames, want) {
			t.Errorf("%s: %q, want %q", sql, st[0].OutputNames, want)
		}
	}
}
