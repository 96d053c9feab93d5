package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestFloatTextFromClients: a real-valued result reaches a text client
// spelled as its database would spell it. Grafana's time bucket
// (floor(extract(epoch …) / 86400) * 86400, a double) is a group key,
// exact, so its text is known: 1262304000, where the proxy used to send
// 1.262304e+09 to psql and the mariadb client alike; a noisy real near
// 2e8 has no exponent either.
func TestFloatTextFromClients(t *testing.T) {
	pgAddr, myAddr := startDemoBoth(t)
	ctx := context.Background()
	conn := connectPgxURL(t, fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", pgAddr), pgx.QueryExecModeCacheStatement)
	// The simple protocol's text cells, as psql receives them.
	res, err := conn.PgConn().Exec(ctx, `SET ddp.epsilon = 1;
		SELECT floor(extract(epoch from checkin_time) / 86400) * 86400 AS day, COUNT(*)
		FROM checkins WHERE checkin_time >= '2010-01-01' AND checkin_time < '2010-01-03' GROUP BY 1 ORDER BY 1;
		SELECT SUM(hours_per_week)::float8 * 1000 FROM people`).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("%d results, want 3", len(res))
	}
	var days []string
	for _, row := range res[1].Rows {
		days = append(days, string(row[0]))
	}
	if got, want := strings.Join(days, " "), "1262304000 1262390400"; got != want {
		t.Errorf("PostgreSQL front end: day keys %q, want %q", got, want)
	}
	positional := regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	if len(res[2].Rows) != 1 || !positional.Match(res[2].Rows[0][0]) {
		t.Errorf("PostgreSQL front end: SUM(…)::float8 * 1000 = %q, want positional notation", res[2].Rows)
	}

	out, errOut, _ := mariadbCLI(t, myAddr, "analyst", "demo", "demo", `
SET @ddp_epsilon = 1;
SELECT floor(unix_timestamp(checkin_time) / 86400) * 86400 AS day, COUNT(*) FROM checkins
  WHERE checkin_time >= '2010-01-01' AND checkin_time < '2010-01-03' GROUP BY 1 ORDER BY 1;
SELECT SUM(hours_per_week) * 1000e0 AS s FROM people;
`)
	if !strings.Contains(out, "day\tCOUNT(*)\n1262304000\t") || !strings.Contains(out, "\n1262390400\t") {
		t.Errorf("MySQL front end: day keys not spelled 1262304000, 1262390400:\n%s\n%s", out, errOut)
	}
	_, s, found := strings.Cut(out, "s\n")
	if s = strings.TrimSpace(s); !found || !positional.MatchString(s) {
		t.Errorf("MySQL front end: SUM(…) * 1000e0 = %q, want positional notation:\n%s\n%s", s, out, errOut)
	}
}
