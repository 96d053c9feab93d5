package session

import (
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
)

// TestPostProcessingNeverFailsAfterCharge: an expression over noisy
// outputs either is refused before the charge or answers; it never fails
// once the noisy values exist (the failure would depend on them).
func TestPostProcessingNeverFailsAfterCharge(t *testing.T) {
	f := totalitySQLite(t, "a")
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
		{my, "SELECT SUM(salary) DIV (COUNT(*) - COUNT(*)) FROM people"},
		{my, "SELECT (SUM(salary) * 0 - 9223372036854775807 - 1) DIV -1 FROM people"},
		{my, "SELECT SUM(salary) MOD (COUNT(*) - COUNT(*)) FROM people"},
		{my, "SELECT LEFT('abc', COUNT(*) - 1000) FROM people"},
		{my, "SELECT POW(SUM(salary), 100) FROM people"},
		{my, "SELECT ROUND(AVG(score), 100000000000) FROM people"},
		{my, "SELECT TRUNCATE(AVG(score), 100000000000) FROM people"},
		{my, "SELECT CONCAT(REPEAT('x', COUNT(*)), 'y') FROM people"},
		{my, "SELECT DATE_ADD('2010-01-01', INTERVAL COUNT(*) * 100000 DAY) FROM people"},
	}
	for _, q := range qs {
		_, err, charged := f.run(t, probe{name: q.q, dialect: q.d, sql: q.q})
		if err != nil && charged > 0 {
			t.Errorf("%s: failed after a charge of ε %g: %v", q.q, charged, err)
		}
	}
}
