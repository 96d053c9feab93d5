package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSQLAlchemyCoreAndPandas runs testdata/bi_clients.py: SQLAlchemy Core
// select() over tables reflected with schema='public', pandas read_sql on
// both front ends. .ci/run installs Debian's python3 packages it needs.
func TestSQLAlchemyCoreAndPandas(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import pandas, sqlalchemy, psycopg2, pymysql").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI: python3-pandas, python3-sqlalchemy, python3-psycopg2 and python3-pymysql must be installed by .ci/run: %v", err)
		}
		t.Skip("python3 with pandas, sqlalchemy, psycopg2 and pymysql is not installed (apt-get install python3-pandas python3-sqlalchemy python3-psycopg2 python3-pymysql)")
	}
	pgAddr, myAddr := startDemoBoth(t)
	host, pgPort, _ := strings.Cut(pgAddr, ":")
	_, myPort, _ := strings.Cut(myAddr, ":")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, "testdata/bi_clients.py", host, pgPort, myPort).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "pandas mysql ok") {
		t.Fatalf("bi_clients.py: %v\n%s", err, out)
	}
}

// knexDir holds the Knex client and its package.json; .ci/run installs
// its node_modules from the npm registry (npm ci).
const knexDir = "testdata/knex"

// TestKnexQueryBuilder runs testdata/knex/client.js: the Knex query builder
// with node's pg and mysql2 drivers issuing filtered and grouped
// aggregates against both front ends.
func TestKnexQueryBuilder(t *testing.T) {
	node, errNode := exec.LookPath("node")
	_, errMods := os.Stat(filepath.Join(knexDir, "node_modules", "knex"))
	if errNode != nil || errMods != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI: node and %s/node_modules must be installed by .ci/run (%v, %v)", knexDir, errNode, errMods)
		}
		t.Skipf("node or the Knex client's modules are not installed (run: npm ci --prefix %s)", knexDir)
	}
	pgAddr, myAddr := startDemoBoth(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, filepath.Join(knexDir, "client.js"), pgAddr, myAddr).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "knex mysql ok") {
		t.Fatalf("knex client: %v\n%s", err, out)
	}
}
