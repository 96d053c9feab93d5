package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/ddp-proxy/ddp-proxy/demo"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer, log *slog.Logger) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", defaultDemoDir(), "where the demo database, policy and ledger are written")
	pgAddr := fs.String("postgres", demo.DefaultPostgres, "PostgreSQL front end address")
	myAddr := fs.String("mysql", demo.DefaultMySQL, `MySQL front end address ("off" to disable)`)
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		return fmt.Errorf("creating the demo directory: %w", err)
	}
	files, err := demo.BuildListen(ctx, *dir, demo.Listen{Postgres: *pgAddr, MySQL: *myAddr})
	if err != nil {
		return fmt.Errorf("building the demo database: %w", err)
	}
	pol, err := policies.Load(files.Policy)
	if err != nil {
		return fmt.Errorf("loading the demo policy: %w", err)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	p, err := startProxy(ctx, pol, log)
	if err != nil {
		return err
	}
	host, port, _ := net.SplitHostPort(p.pgAddr)
	fmt.Fprintf(stdout, `ddp-proxy demo is running (Ctrl-C to stop).

  database, policy and ledger: %s
  policy to read:              %s

Connect with psql (any password works: the demo policy says listen.auth: trust):

  psql "host=%s port=%s user=analyst dbname=demo sslmode=disable"

JDBC:       jdbc:postgresql://%s:%s/demo?user=analyst&password=demo
SQLAlchemy: postgresql+psycopg2://analyst:demo@%s:%s/demo
`, *dir, files.Policy, host, port, host, port, host, port)
	if p.myAddr != "" {
		mh, mp, _ := net.SplitHostPort(p.myAddr)
		fmt.Fprintf(stdout, `
Or with the mariadb / mysql client (--show-warnings prints what each answer cost; set the ε
of the next queries with SET @ddp_epsilon = 0.05):

  mariadb --show-warnings -h %s -P %s -u analyst -pdemo demo
  mysql --show-warnings -h %s -P %s -u analyst -pdemo demo

JDBC:       jdbc:mariadb://%s:%s/demo?user=analyst&password=demo
Go:         analyst:demo@tcp(%s:%s)/demo
SQLAlchemy: mysql+pymysql://analyst:demo@%s:%s/demo
`, mh, mp, mh, mp, mh, mp, mh, mp, mh, mp)
	}
	fmt.Fprintf(stdout, "\nThen set the ε the examples are made for (each then spends %g of its dataset's budget of 10; the session's smaller default leaves more queries, with more noise):\n\n  SET ddp.epsilon = %g;    -- MySQL: SET @ddp_epsilon = %g;\n\nand try:\n",
		demo.ExampleEpsilon, demo.ExampleEpsilon, demo.ExampleEpsilon)
	for _, ex := range demo.Examples() {
		fmt.Fprintf(stdout, "\n  -- %s\n  %s\n", ex.Title, ex.SQL)
	}
	fmt.Fprintf(stdout, "\nEvery answer is followed by a NOTICE (PostgreSQL) or a warning (MySQL: SHOW WARNINGS) with the ε it spent and the noise of each column.\n")
	return p.wait(ctx)
}

func defaultDemoDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "ddp-proxy-demo")
	}
	return filepath.Join(os.TempDir(), "ddp-proxy-demo")
}
