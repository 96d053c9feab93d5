package parser

import (
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// trickyShapes are texts written to break the shape cache: literals next
// to minus signs, comments and quoted identifiers that look like literals,
// literals the grammar reads as something other than a constant, class
// boundaries.
var trickyShapes = []string{
	"SELECT sex, COUNT(*) FROM t WHERE age <> -123456 GROUP BY sex",
	"SELECT a - 5 FROM t", "SELECT a -5 FROM t", "SELECT - 5", "SELECT -5", "SELECT - -5", "SELECT -(5)",
	"SELECT a<>-5 FROM t", "SELECT a<-5 FROM t", "SELECT a @- 5 FROM t", "SELECT a+-5 FROM t", "SELECT a*-1.5 FROM t",
	"SELECT a - /* c */ 5 FROM t", "SELECT a -- 5\n - 6 FROM t", "SELECT 1 --comment 5\n", "SELECT 1 /* 'x' */ + 2",
	"SELECT /* nested /* 5 */ 'y' */ 3", "SELECT 'a''b'", "SELECT '' || 'x'", "SELECT \"col 5\" FROM t WHERE \"x\"\"y\" = 'z'",
	"SELECT 1::float(10)", "SELECT 1::float(30)", "SELECT 1::numeric(10,2)", "SELECT CAST(1.5 AS numeric(12, 3))",
	"SELECT interval '1 day'", "SELECT interval '1' day", "SELECT interval(3) '1 day'", "SELECT date '2020-01-01'",
	"SELECT timestamp(3) '2020-01-01 00:00:00'", "SELECT '2020-01-01'::date + 5",
	"SELECT a FROM t ORDER BY 1", "SELECT a FROM t LIMIT 5", "SELECT a FROM t LIMIT 5 OFFSET 10",
	"SELECT a FROM t FETCH FIRST 5 ROWS ONLY", "SELECT a FROM t FETCH FIRST -5 ROWS ONLY",
	"SELECT count(*) FROM t WHERE a IN (1,2,3)", "SELECT count(*) FROM t WHERE a NOT IN (-1, 2.5, 'x')",
	"SELECT 'a'\n'b'", "SELECT 'a' 'b'", "SELECT 'a' -- c\n'b'",
	"SELECT 2147483647", "SELECT 2147483648", "SELECT -2147483648", "SELECT -2147483647", "SELECT 1.5", "SELECT -1.5",
	"SELECT 00012", "SELECT 0000000000000000000012", "SELECT 99999999999999999999999", "SELECT 0.0", "SELECT -0",
	"SELECT $1 + 5 FROM t WHERE a = $2", "SELECT 1; SELECT 2", "SELECT 1;SELECT 'x';", "SELECT 'x' ; ; SELECT -3",
	"SET statement_timeout = 5000", "SET statement_timeout = -5", "SET x.y = +5", "SET search_path TO 'public', 'x'",
	"SET TIME ZONE 'UTC'", "SET TIME ZONE -3", "SHOW x", "FETCH 5 FROM c", "FETCH -5 FROM c", "MOVE 3 IN c",
	"DECLARE c CURSOR FOR SELECT count(*) FROM t WHERE a > 5", "EXPLAIN SELECT count(*) FROM t WHERE a = 'q'",
	"EXPLAIN (FORMAT 'json') SELECT 1", "SELECT count(*) FROM t WHERE a = 5 AND b IS NULL OR c = TRUE",
	"SELECT CASE WHEN a > 5 THEN 'x' ELSE NULL END FROM t", "SELECT coalesce(a, 0), nullif(b, '') FROM t",
	"SELECT extract(year FROM d), extract('month' FROM d) FROM t", "SELECT date_trunc('month', d), count(*) FROM t GROUP BY 1",
	"SELECT substring(a FROM 2 FOR 3) FROM t", "SELECT trim(both 'x' FROM a) FROM t", "SELECT a LIKE 'x%' ESCAPE '#' FROM t",
	"SELECT sum(a) FILTER (WHERE b > 10) FROM t", "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY a) FROM t",
	"SELECT a FROM t WHERE b BETWEEN -5 AND 5.5", "SELECT a FROM t WHERE b BETWEEN SYMMETRIC 5 AND 1",
	"SELECT 'é€😀' || a FROM t", "SELECT 'x' AS \"5\"", "SELECT a.b FROM t a WHERE a.c = 1",
	"SELECT varchar(10) 'abc'", "SELECT 'abc'::varchar(10)", "SELECT bit(3) '101'", "SELECT 5 !", "SELECT 5 OPERATOR(pg_catalog.+) 6",
	"SELECT array[1,2,3][2]", "SELECT (a).b[1:2] FROM t", "SELECT ROW(1, 'x', -2.5)", "VALUES (1, 'a'), (2, 'b')",
	"SELECT count(*) FROM t GROUP BY ROLLUP (a, 5)", "SELECT a FROM t WHERE b = ANY ('{1,2}')", "SELECT 1 IS DISTINCT FROM 2",
	"WITH x AS (SELECT 5 AS v) SELECT v - 1 FROM x", "SELECT 5 ## 6", "SELECT a FROM t WHERE b ~ '^x' AND c !~* 'y'",
	"SELECT xmlelement(name foo, 'x')", "SELECT 1 FROM t WHERE a = 'x'\n-- trailing 5",
	"SELECT 1 FROM t WHERE a = 'x' /* unterminated", "SELECT 'unterminated", "SELECT E'a\\nb'", "SELECT e'x'", "SELECT B'101'",
	"SELECT X'ff'", "SELECT N'x'", "SELECT U&'x'", "SELECT U&\"x\" FROM t", "SELECT $$x$$", "SELECT $a$x$a$", "SELECT 'a\\b'",
	"SELECT 0x1F", "SELECT 0o17", "SELECT 0b101", "SELECT 1_000", "SELECT 1e5", "SELECT 1.5e3", "SELECT .5", "SELECT 5.",
	"SELECT 1..2", "SELECT 5abc", "SELECT 5$", "SELECT a5 FROM t", "SELECT $1abc", "SELECT 1 2", "SELECT (1",
	"SELECT count(*) FROM people WHERE age > 3", "SELECT sex, count(*) FROM people WHERE income > -1.5 GROUP BY sex HAVING count(*) > 10",
	"select current_setting('server_version_num')::int/1",
}

// shapeCorpus gathers SQL texts from the repository's test corpora: the
// .sql corpora, the fuzz seed corpora, and every string literal of the
// repository's Go files that looks like SQL (test tables, demo queries).
func shapeCorpus(t testing.TB) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if len(s) > 0 && len(s) <= maxCachedText && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, s := range trickyShapes {
		add(s)
	}
	sqlish := regexp.MustCompile(`(?i)^\s*(\(|/\*|--.*\n)*\s*(select|with|values|set|show|explain|declare|fetch|move|begin|reset|table)\b`)
	root := filepath.Join("..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "node_modules" || name == "vendor" {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(path, ".sql"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			add(string(b))
			if parts, err := pg.SplitWithScanner(string(b), true); err == nil {
				for _, p := range parts {
					add(p)
				}
			}
		case strings.Contains(path, filepath.Join("testdata", "fuzz")):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, line := range strings.Split(string(b), "\n") {
				if s, ok := strings.CutPrefix(line, "string("); ok {
					if v, err := strconv.Unquote(strings.TrimSuffix(s, ")")); err == nil {
						add(v)
					}
				}
			}
		case strings.HasSuffix(path, ".go"):
			f, err := goparser.ParseFile(token.NewFileSet(), path, nil, goparser.SkipObjectResolution)
			if err != nil {
				return nil // not ours to judge
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if v, err := strconv.Unquote(lit.Value); err == nil && sqlish.MatchString(v) {
						add(v)
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// variant replaces every literal of text by a random value of the same
// class (so the variant has the same shape).
func variant(r *rand.Rand, text string, lits []pgLiteral) string {
	var b strings.Builder
	prev := 0
	for _, l := range lits {
		b.WriteString(text[prev:l.start])
		b.WriteString(randomLiteral(r, l))
		prev = l.end
	}
	b.WriteString(text[prev:])
	return b.String()
}

func randomDigits(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(byte('0' + r.IntN(10)))
	}
	return b.String()
}

func randomLiteral(r *rand.Rand, l pgLiteral) string {
	switch l.class {
	case litInt:
		switch r.IntN(6) {
		case 0:
			return []string{"0", "1", "2147483647", "00", "0002147483647"}[r.IntN(5)]
		case 1:
			return strings.Repeat("0", r.IntN(5)) + strconv.Itoa(r.IntN(100))
		default:
			return strconv.FormatInt(r.Int64N(1<<31), 10)
		}
	case litFloat:
		if strings.Contains(l.text, ".") {
			return randomDigits(r, 1+r.IntN(12)) + "." + randomDigits(r, 1+r.IntN(12))
		}
		return strconv.FormatInt(1<<31+r.Int64N(1<<40), 10) + randomDigits(r, r.IntN(15)) // too big for an int32
	}
	pieces := []string{"", "a", "Z", " ", "''", "é", "😀", "%", "_", "5", "-1", "--", "/*", "*/", "$1", "$$", "\"", ";", "\n", "\t", "1 day", "2020-01-01", "x'y"}
	var b strings.Builder
	b.WriteByte('\'')
	for range r.IntN(6) {
		p := pieces[r.IntN(len(pieces))]
		if p == "x'y" {
			p = "x''y"
		}
		b.WriteString(p)
	}
	b.WriteByte('\'')
	return b.String()
}

// checkShapeVariant asserts that the cache gives for text exactly what a
// fresh parse gives: the tree (when the shape is checked), the statements,
// the error, and the fingerprint.
func checkShapeVariant(t *testing.T, c *Cache, text string) {
	t.Helper()
	key, lits, ok := pgShape(text)
	if !ok {
		t.Fatalf("variant %q has no shape", text)
	}
	if e := c.shape(key); e != nil && e.ok {
		in := e.tree(lits)
		want, err := pg.Parse(text)
		if err != nil {
			t.Fatalf("%q: the shape is checked but a fresh parse fails: %v", text, err)
		}
		if !proto.Equal(in.res, want) {
			t.Fatalf("%q: shape tree differs from a fresh parse\nshape: %v\nfresh: %v", text, in.res, want)
		}
		e.put(in)
	}
	want, werr := Parse(Postgres, text)
	got, gerr := c.Parse(Postgres, text)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("%q: cached error %v, fresh %v", text, gerr, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: cached statements differ from a fresh parse\ncached: %+v\nfresh:  %+v", text, got, want)
	}
	if got, want := c.Fingerprint(Postgres, text), Fingerprint(Postgres, text); got != want {
		t.Fatalf("%q: cached fingerprint %q, fresh %q", text, got, want)
	}
}

// TestShapeOracle: for every corpus text and random same-shape variants of
// it, the shape cache yields what a fresh parse yields.
func TestShapeOracle(t *testing.T) {
	corpus := shapeCorpus(t)
	r := rand.New(rand.NewPCG(1, 2))
	c := NewCache(1 << 16)
	fc := NewCache(1 << 16) // fingerprints only: shapes first seen there
	checked, refused, none := 0, 0, 0
	for _, text := range corpus {
		key, lits, ok := pgShape(text)
		if !ok || len(lits) == 0 {
			none++
			// The cache still answers as Parse does.
			got, gerr := c.Parse(Postgres, text)
			want, werr := Parse(Postgres, text)
			if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: cached parse differs", text)
			}
			continue
		}
		checkShapeVariant(t, c, text) // the first text of the shape: checks it
		if e := c.shape(key); e == nil {
			t.Fatalf("%q: shape not recorded", text)
		} else if e.ok {
			checked++
		} else {
			refused++
		}
		for range 6 {
			v := variant(r, text, lits)
			checkShapeVariant(t, c, v)
			if got, want := fc.Fingerprint(Postgres, v), Fingerprint(Postgres, v); got != want {
				t.Fatalf("%q: fingerprint %q through a shape first seen by Fingerprint, fresh %q", v, got, want)
			}
		}
	}
	t.Logf("%d texts: %d checked shapes, %d refused shapes, %d without literals or not lexed", len(corpus), checked, refused, none)
	if checked < 100 {
		t.Fatalf("only %d corpus texts have a checked shape: the oracle tests little", checked)
	}
}

// The tricky texts land where they should: the lexer refuses what it must
// not guess, and the check refuses literals the grammar does not turn
// into a constant of their own.
func TestShapeDecisions(t *testing.T) {
	c := NewCache(64)
	for _, tc := range []struct {
		text string
		want string // "none" (no shape), "refused", "checked"
	}{
		{"SELECT sex, COUNT(*) FROM t WHERE age <> -123456 GROUP BY sex", "checked"},
		{"SELECT a - 5 FROM t", "checked"},
		{"SELECT -5", "checked"},
		{"SELECT -2147483648", "checked"},
		{"SELECT 'a''b'", "checked"},
		{"SELECT CASE WHEN a > 5 THEN 'x' ELSE NULL END FROM t", "checked"},
		{"SELECT 1; SELECT 2", "checked"},
		{"SELECT 1::numeric(10,2)", "checked"},
		{"SELECT 1::float(10)", "refused"},                 // float(p) picks float4 or float8
		{"FETCH 5 FROM c", "refused"},                      // a count, not a constant
		{"SELECT interval '1' day", "checked"},             // the field mask: a constant at the keyword
		{"SELECT interval(3) '1 day'", "checked"},          // INTERVAL_FULL_RANGE at no location
		{"SELECT extract(year FROM d) + 1", "checked"},     // 'year': a constant at the word
		{"SELECT extract(\"year\" FROM d) + 1", "refused"}, // ... but not at a quoted one (conservative)
		{"SELECT 1 + +5", "checked"},                       // a binary +: 5 is its own constant
		{"SET x.y = +5", "refused"},
		{"SELECT 'a'\n'b'", "none"},
		{"SELECT E'x'", "none"},
		{"SELECT $$x$$", "none"},
		{"SELECT 1e5", "none"},
		{"SELECT .5", "none"},
		{"SELECT 5.", "none"},
		{"SELECT 0x1F", "none"},
		{"SELECT 1_000", "none"},
		{"SELECT 'a\\b'", "none"},
		{"SELECT 1 /* x", "none"},
		{"SELECT 1 " + strings.Repeat("+-", 31) + "+ 2", "checked"}, // a run of 63 operator characters
		{"SELECT 1 " + strings.Repeat("+-", 32) + " 2", "none"},     // 64: read once, refused
	} {
		key, lits, ok := pgShape(tc.text)
		got := "none"
		if ok && len(lits) > 0 {
			if _, err := c.Parse(Postgres, tc.text); err != nil && tc.want != "refused" {
				t.Errorf("%q: %v", tc.text, err)
			}
			got = "refused"
			if e := c.shape(key); e != nil && e.ok {
				got = "checked"
			}
		}
		if got != tc.want {
			t.Errorf("%q: shape %s, want %s", tc.text, got, tc.want)
		}
	}
}

// A literal that changes class changes the shape: 5 and 3000000000 are
// different tokens to the grammar (ICONST, FCONST), so are 5 and 5.0.
func TestShapeClassChange(t *testing.T) {
	key := func(s string) string {
		k, _, ok := pgShape(s)
		if !ok {
			t.Fatalf("%q: no shape", s)
		}
		return k
	}
	same := [][2]string{
		{"SELECT a FROM t WHERE b = 5", "SELECT a FROM t WHERE b = 2147483647"},
		{"SELECT a FROM t WHERE b = 5", "SELECT a FROM t WHERE b = 000000000000000000000007"},
		{"SELECT a FROM t WHERE b = 2147483648", "SELECT a FROM t WHERE b = 99999999999999999999"},
		{"SELECT a FROM t WHERE b = 'x'", "SELECT a FROM t WHERE b = 'it''s'"},
	}
	for _, p := range same {
		if key(p[0]) != key(p[1]) {
			t.Errorf("%q and %q: different shapes", p[0], p[1])
		}
	}
	differ := [][2]string{
		{"SELECT a FROM t WHERE b = 5", "SELECT a FROM t WHERE b = 3000000000"},
		{"SELECT a FROM t WHERE b = 5", "SELECT a FROM t WHERE b = 5.0"},
		{"SELECT a FROM t WHERE b = 5", "SELECT a FROM t WHERE b = '5'"},
		{"SELECT a FROM t WHERE b = 5", "SELECT a FROM t WHERE b = -5"},
		{"SELECT a FROM t WHERE b = 5", "SELECT a FROM t WHERE b =  5"},
	}
	for _, p := range differ {
		if key(p[0]) == key(p[1]) {
			t.Errorf("%q and %q: same shape", p[0], p[1])
		}
	}
}

// pgStatements must not change the tree it reads: the shape cache hands
// the same tree to many conversions.
func TestShapeConversionReadsOnly(t *testing.T) {
	for _, text := range shapeCorpus(t) {
		res, err := pg.Parse(text)
		if err != nil {
			continue
		}
		before := proto.Clone(res)
		pgStatements(text, res)
		if !proto.Equal(before, res) {
			t.Fatalf("%q: converting changed the tree", text)
		}
	}
}

// FuzzShape mutates the literal values of corpus texts (the seed picks the
// values) and checks the cache against fresh parses.
func FuzzShape(f *testing.F) {
	for i, s := range shapeCorpus(f) {
		if _, lits, ok := pgShape(s); ok && len(lits) > 0 {
			f.Add(s, uint64(i))
		}
	}
	f.Fuzz(func(t *testing.T, text string, seed uint64) {
		_, lits, ok := pgShape(text)
		if !ok || len(lits) == 0 || len(text) > maxCachedText {
			return
		}
		r := rand.New(rand.NewPCG(seed, seed>>7))
		c := NewCache(4)
		checkShapeVariant(t, c, text)
		for range 4 {
			checkShapeVariant(t, c, variant(r, text, lits))
		}
	})
}

// Many goroutines parsing texts of a few shapes through one cache (the
// pooled trees are patched per text) get what fresh parses give. Run
// with -race.
func TestShapeConcurrent(t *testing.T) {
	c := NewCache(64)
	bases := []string{
		"SELECT sex, COUNT(*) FROM t WHERE age <> -123456 GROUP BY sex",
		"SELECT count(*) FROM t WHERE a IN (1, 2.5, 'x') AND b BETWEEN -3 AND 4 LIMIT 10",
		"DECLARE c CURSOR FOR SELECT count(*) FROM t WHERE a > 5; SELECT 'x', -1.5",
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for i := range 200 {
				base := bases[(g+i)%len(bases)]
				_, lits, _ := pgShape(base)
				text := variant(r, base, lits)
				got, gerr := c.Parse(Postgres, text)
				want, werr := Parse(Postgres, text)
				if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
					select {
					case errs <- text:
					default:
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for text := range errs {
		t.Errorf("%q: cached statements differ from a fresh parse", text)
	}
}

// The shapes are bounded by number (the cache's size) and by the bytes of
// their texts.
func TestShapeCacheBounded(t *testing.T) {
	c := NewCache(3)
	for i := range 10 {
		if _, err := c.Parse(Postgres, fmt.Sprintf("SELECT count(*) FROM t%d WHERE a > 5", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.shapes.order.Len(); n != 3 || len(c.shapes.items) != 3 {
		t.Fatalf("%d shapes (%d in the map), bound 3", n, len(c.shapes.items))
	}
	c = NewCache(1 << 20)
	long := "/* " + strings.Repeat("x", 12<<10) + " */" // kept in the key
	for i := range 100 {
		if _, err := c.Parse(Postgres, fmt.Sprintf("SELECT %s 1 FROM t%d", long, i)); err != nil {
			t.Fatal(err)
		}
	}
	total := 0
	for el := c.shapes.order.Front(); el != nil; el = el.Next() {
		total += len(el.Value.(*lruEntry[string, *shapeEntry]).key)
	}
	if total != c.shapes.size || total > maxShapeBytes || c.shapes.order.Len() != len(c.shapes.items) {
		t.Fatalf("shapes hold %d bytes (counted %d), bound %d", total, c.shapes.size, maxShapeBytes)
	}
	if c.shapes.order.Len() < 10 {
		t.Fatalf("only %d shapes kept", c.shapes.order.Len())
	}
}
