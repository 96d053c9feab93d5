package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestQuerySizeLimit: listen.max_query_bytes is enforced on both front
// ends of a running proxy (54000 FATAL for PostgreSQL clients, 1153 for
// MySQL clients), MySQL sessions report it as max_allowed_packet and do
// not let a client change it, and queries under it are answered.
func TestQuerySizeLimit(t *testing.T) {
	const limit = 64 << 10
	_, pol := demoPolicy(t)
	pol.Listen.Postgres, pol.Listen.MySQL, pol.Listen.MaxQueryBytes = "127.0.0.1:0", "127.0.0.1:0", limit
	ctx, cancel := context.WithCancel(context.Background())
	p, err := startProxy(ctx, pol, slog.New(slog.DiscardHandler))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	defer func() { cancel(); p.wait(ctx) }()

	pad := func(n int) string { return "SELECT COUNT(*) FROM people /*" + strings.Repeat(" ", n) + "*/" }
	pg, err := pgx.Connect(ctx, fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", p.pgAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	var n int64
	if err := pg.QueryRow(ctx, pad(limit/2), pgx.QueryExecModeSimpleProtocol).Scan(&n); err != nil {
		t.Fatalf("PostgreSQL front end, a query under the limit: %v", err)
	}
	_, err = pg.Exec(ctx, pad(2*limit), pgx.QueryExecModeSimpleProtocol)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "54000" {
		t.Fatalf("PostgreSQL front end, a query over the limit: %v, want 54000", err)
	}

	my, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo", p.myAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer my.Close()
	var packet int
	if err := my.QueryRow("SELECT @@max_allowed_packet").Scan(&packet); err != nil || packet != limit {
		t.Fatalf("@@max_allowed_packet = %d (%v), want %d", packet, err, limit)
	}
	if _, err := my.Exec("SET max_allowed_packet = 1073741824"); err == nil {
		t.Error("SET max_allowed_packet succeeded; the front end would not honour it")
	}
	if err := my.QueryRow(pad(limit / 2)).Scan(&n); err != nil {
		t.Fatalf("MySQL front end, a query under the limit: %v", err)
	}
	_, err = my.Exec(pad(2 * limit))
	var me *gomysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1153 {
		t.Fatalf("MySQL front end, a query over the limit: %v, want 1153", err)
	}
}
