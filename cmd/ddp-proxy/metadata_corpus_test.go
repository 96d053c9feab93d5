package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// corpusQuery is one block of testdata/metadata_corpus.sql.
type corpusQuery struct {
	tool, dialect, expect string
	types                 []string
	sql                   string
}

func loadMetadataCorpus(t *testing.T) []corpusQuery {
	t.Helper()
	b, err := os.ReadFile("testdata/metadata_corpus.sql")
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusQuery
	for _, line := range strings.Split(string(b), "\n") {
		if h, ok := strings.CutPrefix(line, "-- tool: "); ok {
			q := corpusQuery{}
			for i, part := range strings.Split(h, "|") {
				k, v, _ := strings.Cut(strings.TrimSpace(part), ": ")
				switch {
				case i == 0:
					q.tool = strings.TrimSpace(part)
				case k == "dialect":
					q.dialect = v
				case k == "expect":
					q.expect = v
				case k == "types":
					q.types = strings.Split(v, ",")
				}
			}
			out = append(out, q)
			continue
		}
		if len(out) > 0 && strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "--") {
			out[len(out)-1].sql += line
		}
	}
	for _, q := range out {
		if q.sql == "" || (q.dialect != "postgres" && q.dialect != "mysql") || (q.expect != "answer" && q.expect != "refuse") {
			t.Fatalf("corpus block %+v is malformed", q)
		}
	}
	return out
}

// TestMetadataCorpus runs the startup and metadata queries of
// testdata/metadata_corpus.sql (Metabase, Superset, Grafana, Tableau,
// DBeaver, pgcli, psql, pgjdbc, psqlODBC, Connector/J, pymysql,
// SQLAlchemy) through the proxy as the tools send them (the simple query
// protocol; text protocol on MySQL), on the demo over both front ends and,
// for the PostgreSQL ones that name no demo table, on a PostgreSQL
// backend: each is answered (with the column types the tool reads, where
// listed) or, when it reads statistics about data, refused.
func TestMetadataCorpus(t *testing.T) {
	corpus := loadMetadataCorpus(t)
	pgAddr, myAddr := startDemoBoth(t)
	pgConn := connectPgx(t, pgAddr, pgx.QueryExecModeSimpleProtocol)
	my, err := sql.Open("mysql", "analyst:demo@tcp("+myAddr+")/demo")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { my.Close() })
	my.SetMaxOpenConns(1)

	type backend struct {
		name string
		pg   *pgx.Conn
	}
	backends := []backend{{"demo", pgConn}}
	if os.Getenv("DDP_TEST_POSTGRES_DSN") != "" {
		b := postgresCatalog(t)
		cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://analyst:demo@%s/%s?sslmode=disable", b.addr, b.db))
		if err != nil {
			t.Fatal(err)
		}
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		conn, err := pgx.ConnectConfig(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(context.Background()) })
		backends = append(backends, backend{"postgres", conn})
	}
	answered, total := 0, 0
	for _, q := range corpus {
		for _, be := range backends {
			if q.dialect == "mysql" && be.name != "demo" {
				continue
			}
			if be.name != "demo" && (strings.Contains(q.sql, "people") || strings.Contains(q.sql, "'demo'")) {
				continue // names of the demo's schema
			}
			total++
			var types []string
			var err error
			if q.dialect == "postgres" {
				types, err = runPgCorpus(be.pg, q.sql)
			} else {
				types, err = runMyCorpus(my, q.sql)
			}
			where := q.tool + " on " + be.name + " (" + q.dialect + "): " + q.sql
			switch q.expect {
			case "refuse":
				// On the demo the emulated catalog has no such relation
				// (feature_not_supported); a PostgreSQL backend's is
				// refused (insufficient_privilege).
				var pe *pgconn.PgError
				if !errors.As(err, &pe) || !(pe.Code == "42501" || be.name == "demo" && pe.Code == "0A000") {
					t.Errorf("%s\nwant a refusal, got %v", where, err)
					continue
				}
				answered++
			case "answer":
				if err != nil {
					t.Errorf("%s\n%v", where, err)
					continue
				}
				if q.types != nil && strings.Join(types, ",") != strings.Join(q.types, ",") {
					t.Errorf("%s\ncolumn types %v, want %v", where, types, q.types)
					continue
				}
				answered++
			}
		}
	}
	t.Logf("metadata corpus: %d of %d handled as the tools need", answered, total)
}

// runPgCorpus runs one query and returns its columns' type names.
func runPgCorpus(conn *pgx.Conn, q string) ([]string, error) {
	rows, err := conn.Query(context.Background(), q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var types []string
	for _, f := range rows.FieldDescriptions() {
		if dt, ok := conn.TypeMap().TypeForOID(f.DataTypeOID); ok {
			types = append(types, dt.Name)
		} else {
			types = append(types, fmt.Sprint(f.DataTypeOID))
		}
	}
	for rows.Next() {
	}
	return types, rows.Err()
}

func runMyCorpus(db *sql.DB, q string) ([]string, error) {
	rows, err := db.Query(q)
	if err != nil {
		var me *mysql.MySQLError
		if errors.As(err, &me) && me.Number == 1142 {
			return nil, &pgconn.PgError{Code: "42501", Message: me.Message}
		}
		return nil, err
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	var types []string
	for _, c := range cts {
		types = append(types, c.DatabaseTypeName())
	}
	for rows.Next() {
	}
	return types, rows.Err()
}
