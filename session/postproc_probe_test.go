package session

import (
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestPostProcessingNeverFailsAfterCharge: an expression over noisy
// outputs either is refused before the charge or answers; it never fails
// once the noisy values exist (the failure would depend on them), and
// two databases that differ in one person give the same outcome.
func TestPostProcessingNeverFailsAfterCharge(t *testing.T) {
	fs := [2]*totalityFixture{totalitySQLite(t, "a"), totalitySQLite(t, "b")}
	pg, my := parser.Postgres, parser.MySQL
	qs := []struct {
		d parser.Dialect
		q string
	}{
		{pg, "SELECT COUNT(*) / (COUNT(*) - COUNT(*)) FROM people"},
		{pg, "SELECT SUM(age) / (COUNT(*) - 200) FROM people"},
		{pg, "SELECT SUM(age) % (COUNT(*) - COUNT(*)) FROM people"},
		{pg, "SELECT SUM(salary) * 9223372036854775807 FROM people"},
		{pg, "SELECT SUM(salary) * SUM(salary) * SUM(salary) * SUM(salary) FROM people"},
		{pg, "SELECT -(SUM(salary) - 9223372036854775807 - 1) FROM people"},
		{pg, "SELECT abs(SUM(salary) - 9223372036854775807 - 1) FROM people"},
		{pg, "SELECT AVG(score) / (AVG(score) - AVG(score)) FROM people"},
		{pg, "SELECT SUM(score) * 1e308 * 10 FROM people"},
		{pg, "SELECT round(AVG(score), 2147483647) FROM people"},
		{pg, "SELECT round(AVG(score), -2147483648) FROM people"},
		{pg, "SELECT round(SUM(salary), -30) FROM people"},
		{pg, "SELECT round(SUM(salary), 1000) FROM people"},
		{pg, "SELECT CAST(SUM(score) * 1e300 AS bigint) FROM people"},
		{pg, "SELECT CAST(AVG(score) AS bigint) FROM people"},
		{pg, "SELECT CAST(SUM(salary) AS integer) FROM people"},
		{pg, "SELECT floor(SUM(score) * 1e300) FROM people"},
		{pg, "SELECT COUNT(*) * 100.0 / SUM(COUNT(*)) OVER () FROM people GROUP BY flag"},
		{pg, "SELECT SUM(COUNT(*) * 9223372036854775807) OVER () FROM people GROUP BY flag"},
		{pg, "SELECT SUM(SUM(salary)) OVER () * 1000000000000 FROM people GROUP BY flag"},
		{pg, "SELECT width_bucket(COUNT(*), 0, 10, 5) FROM people"},
		{pg, "SELECT substr('abc', COUNT(*)) FROM people"},
		{pg, "SELECT substr('abc', 1, COUNT(*) - 1000) FROM people"},
		{pg, "SELECT left('abc', COUNT(*) - 1000) FROM people"},
		{pg, "SELECT right('abc', COUNT(*) - 1000) FROM people"},
		{pg, "SELECT repeat('abc', COUNT(*)) FROM people"},
		{pg, "SELECT COUNT(*) / 0 FROM people"},
		{pg, "SELECT COUNT(*) % 0 FROM people"},
		{pg, "SELECT CAST(COUNT(*) AS text)::bigint FROM people"},
		{pg, "SELECT date_trunc('month', DATE '2010-01-01' + CAST(COUNT(*) AS integer)) FROM people"},
		{pg, "SELECT (SUM(salary) - 9223372036854775807) - 9223372036854775807 FROM people"},
		{pg, "SELECT COUNT(*) FROM people HAVING SUM(salary) / (COUNT(*) - COUNT(*)) > 1"},
		{pg, "SELECT COUNT(*) FROM people ORDER BY SUM(salary) * 9223372036854775807"},
		{pg, "SELECT educ, COUNT(*) FROM people GROUP BY educ ORDER BY COUNT(*) / (COUNT(*) - COUNT(*))"},
		{pg, "SELECT educ, LAG(COUNT(*)) OVER (ORDER BY educ) / (COUNT(*) - COUNT(*)) FROM people GROUP BY educ"},
		{pg, "SELECT educ, SUM(salary) - LAG(SUM(salary), 1, -9223372036854775807) OVER (ORDER BY educ) FROM people GROUP BY educ"},
		{pg, "SELECT educ, NTILE(COUNT(*) - COUNT(*)) OVER (ORDER BY educ) FROM people GROUP BY educ"},
		{pg, "SELECT educ, LAG(COUNT(*), COUNT(*)) OVER (ORDER BY educ) FROM people GROUP BY educ"},
		{pg, "SELECT educ, NTH_VALUE(COUNT(*), COUNT(*) - COUNT(*)) OVER (ORDER BY educ) FROM people GROUP BY educ"},
		{pg, "SELECT educ, COUNT(*) FROM people GROUP BY educ LIMIT 1 OFFSET 9223372036854775807"},
		{pg, "SELECT power(SUM(salary), 1000) FROM people"},
		{pg, "SELECT sqrt(SUM(score) - 1e9) FROM people"},
		{pg, "SELECT ln(SUM(score) - 1e9) FROM people"},
		{pg, "SELECT exp(SUM(salary)) FROM people"},
		{pg, "SELECT mod(SUM(salary), COUNT(*) - COUNT(*)) FROM people"},
		{pg, "SELECT (-9223372036854775807 - 1 + 0 * COUNT(*)) / -1 FROM people"},
		{pg, "SELECT (-9223372036854775807 - 1 + 0 * COUNT(*)) % -1 FROM people"},
		{pg, "SELECT abs(-9223372036854775807 - 1 + 0 * COUNT(*)) FROM people"},
		{pg, "SELECT -(-9223372036854775807 - 1 + 0 * COUNT(*)) FROM people"},
		{pg, "SELECT (SUM(salary) * 0 - 9223372036854775807 - 1) / -1 FROM people"},
		{pg, "SELECT (SUM(salary) * 0 - 9223372036854775807 - 1) % -1 FROM people"},
		{pg, "SELECT -(SUM(salary) * 0 - 9223372036854775807 - 1) FROM people"},
		{pg, "SELECT abs(SUM(salary) * 0 - 9223372036854775807 - 1) FROM people"},
		{pg, "SELECT CAST(SUM(score) * 1e20 AS bigint) FROM people"},
		{pg, "SELECT CAST(SUM(score) AS text) || repeat('x', 10) FROM people"},
		{pg, "SELECT width_bucket(SUM(salary), -9223372036854775807, 9223372036854775807, 2147483646) FROM people"},
		{pg, "SELECT small % 5 AS k, COUNT(*) * 100.0 / SUM(COUNT(*)) OVER () FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, COUNT(*) * 100.0 / (SUM(COUNT(*)) OVER () - SUM(COUNT(*)) OVER ()) FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, SUM(COUNT(*) * 9223372036854775807) OVER () FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, SUM(SUM(salary)) OVER () * 1000000000000 FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, SUM(SUM(salary) * 1000000000000) OVER (ORDER BY k) FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, AVG(SUM(score) * 1e300) OVER () FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, SUM(AVG(score) * 1e307) OVER () FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, COUNT(*) - LAG(COUNT(*)) OVER (ORDER BY k) FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, RANK() OVER (ORDER BY COUNT(*) / (COUNT(*) - COUNT(*))) FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, COUNT(*) FROM people GROUP BY 1 ORDER BY SUM(salary) * SUM(salary) LIMIT 3"},
		{pg, "SELECT small % 5 AS k, ROW_NUMBER() OVER (PARTITION BY COUNT(*) % 0 ORDER BY AVG(score)) FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, MAX(SUM(salary)) OVER () - MIN(SUM(salary)) OVER () - 9223372036854775807 FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, CAST(AVG(score) * 1e300 AS bigint) FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, round(AVG(score) * 1e300, 308) FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, round(AVG(score) * 1e300, -308) FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, floor(AVG(score) * 1e300) FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, CAST(floor(AVG(score) * 1e300) AS bigint) FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, CAST(COUNT(*) AS integer) * 2147483647 FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, CAST(SUM(salary) * 1000 AS integer) FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, CAST(AVG(score) AS integer) FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, abs(SUM(score) * 1e308 * 1e308) FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, AVG(score) / 0.0 FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, SUM(salary) / 0.0 FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, COUNT(*) / 0.0 FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, ceil(SUM(score) / 1e-300) FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, SUM(score) * 1e-300 * 1e-300 FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, COUNT(*) FROM people GROUP BY 1 HAVING SUM(score) * 1e-300 * 1e-300 > 0"},
		{pg, "SELECT small % 5 AS k, COUNT(*) FROM people GROUP BY 1 HAVING AVG(score) / 0.0 > 0"},
		{pg, "SELECT small % 5 AS k, COUNT(*) FROM people GROUP BY 1 HAVING CAST(AVG(score) * 1e30 AS bigint) > 0"},
		{pg, "SELECT small % 5 AS k, nullif(AVG(score), 0) / nullif(AVG(score), 0) FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, coalesce(AVG(score), 1) * 1e308 FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, greatest(SUM(salary), 9223372036854775807) + 1 FROM people GROUP BY 1"},
		{pg, "SELECT small % 5 AS k, CASE WHEN COUNT(*) > 0 THEN SUM(salary) * 9223372036854775807 ELSE 0 END FROM people GROUP BY 1"},
		{my, "SELECT small % 5 AS k, COUNT(*) DIV (COUNT(*) - COUNT(*)) FROM people GROUP BY 1"},
		{my, "SELECT small % 5 AS k, SUM(salary) * 9223372036854775807 FROM people GROUP BY 1"},
		{my, "SELECT small % 5 AS k, AVG(score) / 0 FROM people GROUP BY 1"},
		{my, "SELECT SUM(salary) DIV (COUNT(*) - COUNT(*)) FROM people"},
		{my, "SELECT (SUM(salary) * 0 - 9223372036854775807 - 1) DIV -1 FROM people"},
		{my, "SELECT SUM(salary) MOD (COUNT(*) - COUNT(*)) FROM people"},
		{my, "SELECT LEFT('abc', COUNT(*) - 1000) FROM people"},
		{my, "SELECT POW(SUM(salary), 100) FROM people"},
		{my, "SELECT ROUND(AVG(score), 100000000000) FROM people"},
		{my, "SELECT TRUNCATE(AVG(score), 100000000000) FROM people"},
		{my, "SELECT CONCAT(REPEAT('x', COUNT(*)), 'y') FROM people"},
		{my, "SELECT DATE_ADD('2010-01-01', INTERVAL COUNT(*) * 100000 DAY) FROM people"},
		// Stacked levels (stages) over the noisy rows.
		{pg, "SELECT k, n / (n - n) FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) t"},
		{pg, "SELECT k, s * 9223372036854775807 * s FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) t"},
		{pg, "SELECT k FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) t WHERE n % (n - n) = 0 OR a / 0.0 > 1"},
		{pg, "SELECT k, CAST(a * 1e300 AS bigint), round(a, 2147483647) FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) t"},
		{pg, "SELECT k, -(s * 0 - 9223372036854775807 - 1) FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) t"},
		{pg, "SELECT k, SUM(s * 9223372036854775807) OVER (), AVG(a * 1e308) OVER () FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) t"},
		{pg, "SELECT k, NTILE(CAST(n - n AS integer)) OVER (ORDER BY k) FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) t"},
		{pg, "SELECT k, LAG(n, CAST(n AS integer)) OVER (ORDER BY k), NTH_VALUE(s, 1) OVER (ORDER BY k) FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) t"},
		{pg, "SELECT * FROM (SELECT *, RANK() OVER (ORDER BY n DESC) AS r FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) w) t WHERE r > 1000000"},
		{pg, "SELECT *, SUM(n) OVER (), MAX(r) OVER (), ROW_NUMBER() OVER (ORDER BY r) FROM (SELECT *, RANK() OVER (ORDER BY n DESC) AS r FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) w) t WHERE n < -9223372036854775807"},
		{pg, "SELECT * FROM (SELECT *, DENSE_RANK() OVER (ORDER BY r / (n - n)) AS z FROM (SELECT *, RANK() OVER (ORDER BY n DESC) AS r FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) w) t) u WHERE z <= 3 ORDER BY z, k LIMIT 0"},
		{pg, "SELECT * FROM (SELECT *, RANK() OVER (ORDER BY n DESC) AS r FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) w) t ORDER BY s * s * s LIMIT 9223372036854775807 OFFSET 9223372036854775807"},
		{pg, "SELECT * FROM (SELECT *, RANK() OVER (ORDER BY n DESC) AS r FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) w) t ORDER BY r LIMIT 2 OFFSET 3"},
		{pg, "SELECT * FROM (SELECT *, RANK() OVER (ORDER BY n DESC) AS r FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) w) t LIMIT -1"},
		{pg, "SELECT * FROM (SELECT *, RANK() OVER (ORDER BY n DESC) AS r FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) w) t OFFSET -1"},
		{pg, "SELECT k, r, n - LAG(n, 1, -9223372036854775807) OVER (ORDER BY r) FROM (SELECT *, RANK() OVER (ORDER BY n DESC) AS r FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) w) t"},
		{pg, "SELECT k, exp(s), ln(a - 1e9), sqrt(s - 9223372036854775807), power(a, 1000) FROM (SELECT *, RANK() OVER (ORDER BY n DESC) AS r FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) w) t"},
		{pg, "SELECT k, substr('abc', CAST(n AS integer)), repeat('x', CAST(n AS integer)) FROM (SELECT *, RANK() OVER (ORDER BY n DESC) AS r FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) w) t"},
		{pg, "SELECT COUNT(*) FROM (SELECT *, RANK() OVER (ORDER BY n DESC) AS r FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) w) t"},
		{pg, "SELECT * FROM (SELECT *, RANK() OVER (ORDER BY n DESC) AS r FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) w) t WHERE k = (SELECT COUNT(*) FROM people)"},
		{pg, "SELECT t.*, p.age FROM (SELECT *, RANK() OVER (ORDER BY n DESC) AS r FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) w) t, people p"},
		{pg, "SELECT * FROM (SELECT *, RANK() OVER (ORDER BY n DESC) AS r FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) w) t WHERE r < $1"},
		{my, "SELECT k, n DIV (n - n), s MOD (n - n) FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) t"},
		{my, "SELECT * FROM (SELECT *, RANK() OVER (ORDER BY n DESC) AS r FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) w) t WHERE r > 1 ORDER BY s * s LIMIT 18446744073709551615"},
		{my, "SELECT * FROM (SELECT *, RANK() OVER (ORDER BY n DESC) AS r FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) w) t LIMIT 3, 18446744073709551615"},
		{my, "SELECT k, DATE_ADD('2010-01-01', INTERVAL n * 100000000 DAY) FROM (SELECT *, RANK() OVER (ORDER BY n DESC) AS r FROM (SELECT small % 5 AS k, COUNT(*) AS n, SUM(salary) AS s, AVG(score) AS a FROM people GROUP BY 1) w) t"},
	}
	for _, q := range qs {
		var msgs [2]string
		for i, f := range fs {
			_, err, charged := f.run(t, probe{name: q.q, dialect: q.d, sql: q.q})
			if err != nil && charged > 0 {
				t.Errorf("%s: %s: failed after a charge of ε %g: %v", f.name, q.q, charged, err)
			}
			if e := sqlerr.As(err); e != nil {
				msgs[i] = e.Code.SQLState + " " + e.Message // hints name each fixture's policy file
			}
		}
		if msgs[0] != msgs[1] {
			t.Errorf("%s: the two databases answer differently: %q | %q", q.q, msgs[0], msgs[1])
		}
	}
}
