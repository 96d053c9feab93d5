package parser

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// scannerLiterals lists the literal tokens PostgreSQL's own scanner finds
// in sql, in the lexer's terms (the minus is left out: it is a grammar
// matter the tree check decides).
func scannerLiterals(sql string) ([]string, error) {
	res, err := pg.Scan(sql)
	if err != nil {
		return nil, err
	}
	var out []string
	minus := int32(-1)
	for _, tok := range res.Tokens {
		if tok.Token == pg.Token_SQL_COMMENT || tok.Token == pg.Token_C_COMMENT {
			continue
		}
		m := minus
		minus = -1
		if tok.Token == pg.Token_ASCII_45 {
			minus = tok.Start
		}
		var class litClass
		switch tok.Token {
		case pg.Token_ICONST:
			class = litInt
		case pg.Token_FCONST:
			class = litFloat
		case pg.Token_SCONST:
			class = litString
		default:
			switch tok.Token {
			case pg.Token_USCONST, pg.Token_BCONST, pg.Token_XCONST, pg.Token_UIDENT:
				out = append(out, fmt.Sprintf("other%d@%d", tok.Token, tok.Start))
			}
			continue
		}
		out = append(out, fmt.Sprintf("%d:%d:%d:%d", class, tok.Start, tok.End, m))
	}
	return out, nil
}

func lexerLiterals(lits []pgLiteral) []string {
	var out []string
	for _, l := range lits {
		out = append(out, fmt.Sprintf("%d:%d:%d:%d", l.class, l.start, l.end, l.minus))
	}
	return out
}

var scanPieces = []string{
	"'", "\"", "--", "/*", "*/", "\n", "\r", "\t", "\f", "\v", " ", "-", "+", "*", "/", "<", ">", "=", "@", "!", "#",
	"~", "?", "|", "`", "%", "^", "&", "5", "12", "1.5", "2147483648", "2147483647", "0", "$1", "$", "$$", "e", "E",
	"U&", "u", "&", ".", "a", "x", "b", "n", "_", "''", "\"\"", "0x", "é", "😀", "\\", "::", ":", "(", ")", ";", ",",
	"[", "]", "{", "}", "1e", "SELECT ", "AS", "uescape", "1.", ".5", "1_0", "0b1", "0o7", "$12abc", "e'", "U&\"", "<--5", "b'", "N'", "X'", "00", "9999999999999999999999", "-5", "'a'", "\"a\"", "/*/", "**/", "\u0080",
}

// The lexer's literals are the scanner's ICONST, FCONST and SCONST tokens,
// span and class, on every text the lexer accepts.
func TestShapeLexerAgreesWithScanner(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	texts := append([]string{}, trickyShapes...)
	for range 200000 {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(scanPieces[r.IntN(len(scanPieces))])
		}
		texts = append(texts, b.String())
	}
	accepted := 0
	for _, text := range texts {
		lits, ok := pgLiterals(text)
		if !ok {
			continue
		}
		want, err := scannerLiterals(text)
		if err != nil {
			continue // the parse fails too: the shape is refused
		}
		accepted++
		if got := lexerLiterals(lits); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%q: lexer literals %v, scanner %v", text, got, want)
		}
	}
	t.Logf("%d texts lexed", accepted)
}

// grammarShapes reach the grammar's rarer rules that take literals: each
// must either be refused by the check or give fresh parses' trees for
// every variant.
var grammarShapes = []string{
	"SELECT JSON_VALUE(j, '$.a' RETURNING int DEFAULT 5 ON ERROR) FROM t",
	"SELECT JSON_QUERY(j, '$.a' WITH WRAPPER KEEP QUOTES) FROM t", "SELECT JSON_EXISTS(j, '$.a ? (@ > $x)' PASSING 5 AS x) FROM t",
	"SELECT JSON_OBJECT('a' VALUE 1, 'b' : 2 ABSENT ON NULL) FROM t", "SELECT JSON_ARRAY(1, 'x', 2.5) FROM t",
	"SELECT j IS JSON OBJECT WITH UNIQUE KEYS FROM t", "SELECT JSON('{\"a\":1}'), JSON_SCALAR(5), JSON_SERIALIZE('1' RETURNING bytea)",
	"SELECT * FROM JSON_TABLE(j, '$.a[*]' AS p COLUMNS (a int PATH '$.x' DEFAULT 5 ON EMPTY, NESTED PATH '$.b' COLUMNS (c text PATH '$.c'))) jt, t",
	"SELECT * FROM JSON_TABLE('[1]'::jsonb, '$[*]' COLUMNS (a int PATH '$')) jt",
	"SELECT json_objectagg('k' : v), json_arrayagg(v ORDER BY 1) FROM t",
	"SELECT xmlelement(name a, xmlattributes(1 AS b), 'c'), xmlforest('x' AS y), xmlpi(name x, 'y')",
	"SELECT xmlroot(x, version '1.0', standalone yes), xmlparse(document '<a/>'), xmlserialize(content x AS text) FROM t",
	"SELECT xmlexists('//a' PASSING x) FROM t", "SELECT * FROM xmltable('/a' PASSING '<a/>' COLUMNS b int PATH 'b' DEFAULT 5, c text PATH '@c')",
	"SELECT a COLLATE \"C\", b AT TIME ZONE 'UTC', overlay(a PLACING 'x' FROM 2 FOR 3), position('a' IN b) FROM t",
	"SELECT substring(a SIMILAR 'x' ESCAPE '#'), a SIMILAR TO 'x%' ESCAPE '!' FROM t", "SELECT CAST('1' AS int), '1'::int, int '1', int4 '7'",
	"SELECT interval '1' hour to second(3), interval '5' second(2), interval(2) '1 s', time(3) with time zone '00:00', char(5) 'x'",
	"SELECT numeric(10,2) '1.5', timestamp(2) '2020-01-01', bit varying(5) '101', varchar(3) 'ab', float4 '1.5', double precision '2'",
	"SELECT a FROM t TABLESAMPLE SYSTEM (10) REPEATABLE (5)", "SELECT a FROM t TABLESAMPLE bernoulli (50.5)",
	"SELECT count(*) OVER (ORDER BY b GROUPS BETWEEN 1 PRECEDING AND 2 FOLLOWING) FROM t",
	"SELECT count(*) OVER (ORDER BY b ROWS 5 PRECEDING), sum(a) OVER (ORDER BY d RANGE BETWEEN '1 day' PRECEDING AND CURRENT ROW) FROM t",
	"SELECT a FROM t ORDER BY a FETCH NEXT 5 ROWS WITH TIES", "SELECT a FROM t OFFSET 3 ROWS FETCH FIRST 2 ROW ONLY",
	"SELECT a FROM t FETCH FIRST +5 ROWS ONLY", "SELECT a FROM t FETCH FIRST -5.5 ROWS ONLY", "SELECT a FROM t LIMIT 5 FOR UPDATE",
	"SELECT a FROM t LIMIT -5", "SELECT a FROM t OFFSET -3",
	"SET LOCAL x TO 5", "SET TIME ZONE INTERVAL '+00:00' HOUR TO MINUTE", "SET TIME ZONE INTERVAL(2) '1 hour'", "SET TIME ZONE 5.5",
	"SET TIME ZONE -5.5", "SET SESSION AUTHORIZATION 'x'", "SET ROLE 'x'", "SET NAMES 'utf8'", "SET SCHEMA 'x'",
	"SET TRANSACTION SNAPSHOT '0001'", "SET x = 1.5, 'a', -2", "SET x = -1.5", "SET x TO 'a', 5",
	"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY", "RESET x",
	"EXPLAIN (COSTS false) SELECT 5", "EXPLAIN (FORMAT json) SELECT 'x'", "EXPLAIN ANALYZE SELECT 5",
	"DECLARE c SCROLL CURSOR FOR SELECT 5", "FETCH FORWARD 5 c", "FETCH ABSOLUTE -1 c", "FETCH RELATIVE 3 FROM c", "MOVE BACKWARD 2 IN c",
	"PREPARE p AS SELECT 5", "EXECUTE p(5, 'x')", "COPY (SELECT 5) TO STDOUT WITH (FORMAT 'csv')",
	"CREATE TABLE x (a varchar(10) DEFAULT 'x', b numeric(5,2) CHECK (b > 0))", "ALTER SYSTEM SET x = 5", "COMMENT ON TABLE t IS 'x'",
	"NOTIFY x, 'payload'", "SELECT pg_sleep(5)", "SELECT 'a' IS NORMALIZED, normalize('a', NFC)", "SELECT '{}'::int[5]",
	"SELECT ARRAY[1,2]::int[3][4]", "SELECT 1 OPERATOR(pg_catalog.+) 2", "SELECT CURRENT_TIME(3), LOCALTIMESTAMP(2), CURRENT_TIMESTAMP(1)",
	"SELECT a FROM t WHERE a IN (SELECT 5)", "VALUES (5) ORDER BY 1 LIMIT 2", "SELECT * FROM generate_series(1, 5) WITH ORDINALITY AS g(x, y)",
	"WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM x WHERE n < 5) CYCLE n SET c TO 'Y' DEFAULT 'N' USING p SELECT n FROM x",
	"WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM x WHERE n < 5) SEARCH DEPTH FIRST BY n SET o SELECT n FROM x",
	"SELECT DISTINCT ON (1) a FROM t", "SELECT count(*) FROM t GROUP BY GROUPING SETS ((1), (2), ())", "SELECT count(*) FROM t GROUP BY CUBE (1, 2)",
	"SELECT count(*) FILTER (WHERE a > 5) OVER (ORDER BY b ROWS BETWEEN 5 PRECEDING AND CURRENT ROW EXCLUDE TIES) FROM t",
	"INSERT INTO t VALUES (5, 'x')", "UPDATE t SET a = 5 WHERE b = 'x'", "DELETE FROM t WHERE a = 5",
	"MERGE INTO t USING s ON t.a = s.a WHEN MATCHED AND s.b > 5 THEN UPDATE SET b = 'x' WHEN NOT MATCHED THEN INSERT VALUES (1)",
	"SELECT a[1], a[2:3], a[:5], (b).c[1] FROM t", "SELECT $1::int[], $2 + 5 FROM t", "SELECT 5 = ANY (ARRAY[1, 2]), 5 <> ALL ('{1}')",
	"SELECT EXTRACT(epoch FROM d), EXTRACT('hour' FROM d), date_part('day', d) FROM t", "SELECT trim(leading 'x' FROM a), trim('x') FROM t",
	"SELECT GREATEST(1, 2.5), LEAST('a', 'b'), NULLIF(1, 1), COALESCE(NULL, 5)", "SELECT a BETWEEN 1 AND 5, a NOT BETWEEN SYMMETRIC 5 AND 1 FROM t",
	"SELECT 'x' || 5, 5 || 'x', -5 || 'x', - 'x'", "SELECT -a, - - 5, -(-5), +5, + -5, -+5", "SELECT 5 !, 5 ## 6, 5 @- 6, @ -5, |/ 25",
	"SELECT count(*) FROM t WHERE a IS DISTINCT FROM 5 AND b IS NOT TRUE AND c IS UNKNOWN AND d ISNULL",
	"SELECT 5 AS x ORDER BY x USING <", "TABLE t", "SELECT * FROM ROWS FROM (generate_series(1, 5), unnest('{1}'::int[])) AS r",
	"SELECT lag(a, 1, 0) OVER w FROM t WINDOW w AS (PARTITION BY b ORDER BY c ROWS UNBOUNDED PRECEDING)",
	"SELECT percentile_disc(ARRAY[0.1, 0.5]) WITHIN GROUP (ORDER BY a), mode() WITHIN GROUP (ORDER BY b) FROM t",
	"SELECT a FROM t WHERE a LIKE ANY (ARRAY['x%', 'y%'])", "SELECT ROW(1, 2) OVERLAPS ROW(3, 4)",
	"SELECT (DATE '2001-02-16', DATE '2001-12-21') OVERLAPS (DATE '2001-10-30', DATE '2002-10-30')",
	"SELECT a::numeric(5), a::decimal(5, 2), a::float(53), a::float(24), a::float8, a::dec(3)", "SELECT 'a'::\"char\", 'x'::text COLLATE \"C\"",
	"SELECT 1 FROM t WHERE a = 5 UNION SELECT 2 FROM u WHERE b = 'x' ORDER BY 1 LIMIT 10",
}

func TestShapeGrammarOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	c := NewCache(1 << 12)
	checked := 0
	for _, text := range grammarShapes {
		key, lits, ok := pgShape(text)
		if !ok || len(lits) == 0 {
			t.Logf("%q: no shape", text)
			continue
		}
		checkShapeVariant(t, c, text)
		if e := c.shape(key); e != nil && e.ok {
			checked++
		} else {
			t.Logf("%q: refused", text)
		}
		for range 20 {
			checkShapeVariant(t, c, variant(r, text, lits))
		}
	}
	t.Logf("%d of %d checked", checked, len(grammarShapes))
}
