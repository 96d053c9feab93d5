package main

import (
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// mariadbCLI runs the mariadb (or mysql) client in batch mode with stdin
// as the script, returning stdout, stderr and whether it exited 0.
func mariadbCLI(t *testing.T, addr, user, pw, db, script string, extra ...string) (string, string, bool) {
	t.Helper()
	bin := clientBinary(t, "mariadb-client", "mariadb", "mysql")
	host, port, _ := net.SplitHostPort(addr)
	args := append([]string{"-h", host, "-P", port, "-u", user, "-p" + pw, "--batch", "--skip-ssl"}, extra...)
	if db != "" {
		args = append(args, db)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = strings.NewReader(script)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("mariadb client timed out; stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	return out.String(), errb.String(), err == nil
}

// TestMariaDBCLIDemo is what a new user does first: connect to the demo,
// list tables, describe one, ask aggregates, see what they cost, and get
// a clear refusal for a row-level read.
func TestMariaDBCLIDemo(t *testing.T) {
	addr, _ := startMySQLDemo(t)
	out, errOut, ok := mariadbCLI(t, addr, "analyst", "demo", "demo", `
SHOW TABLES;
DESCRIBE people;
SET @ddp_epsilon = 0.5;
SELECT sex, COUNT(*) FROM people GROUP BY sex;
SHOW WARNINGS;
SELECT * FROM people;
SELECT AVG(age) FROM people WHERE sex = 'Female';
EXPLAIN SELECT COUNT(*) FROM people WHERE age > 40;
SELECT * FROM ddp.budget;
`, "--force", "--auto-rehash")
	_ = ok // --force: the client exits 0 after printing the errors
	for _, want := range []string{
		"Tables_in_demo\n" + strings.Join(demoTables(t), "\n") + "\n",
		"Field\tType\tNull\tKey\tDefault\tExtra\nage\tbigint\tYES\t\tNULL\tbounds 17..90, groupable\n",
		"sex\tCOUNT(*)\nFemale\t", // MariaDB's name for the item
		"Note\t1105\tddp: spent ε = 0.5 on census\n",
		"COUNT(*): noise scale 2, 95% within ±6",
		"class: private_aggregate",
		"dataset\tepsilon_total\tepsilon_spent\tepsilon_left",
		"census\t10\t1\t9\t", // two answers at ε = 0.5
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "ERROR 1142 (42000)") || !strings.Contains(errOut, "SELECT * reads individual rows") {
		t.Errorf("stderr:\n%s", errOut)
	}
}

// TestMariaDBCLIMariaDBBackend runs the CLI against a real MariaDB
// backend with password authentication, through budget exhaustion.
func TestMariaDBCLIMariaDBBackend(t *testing.T) {
	f := newMariaFixture(t, 200, 1.0)
	addr := serveMySQL(t, f.pol)
	if _, errOut, ok := mariadbCLI(t, addr, "analyst", "wrong", "test", "SELECT 1;"); ok || !strings.Contains(errOut, "ERROR 1045 (28000)") {
		t.Errorf("wrong password: ok=%v stderr %s", ok, errOut)
	}
	out, errOut, _ := mariadbCLI(t, addr, "analyst", f.password, "test", `
SHOW TABLES;
DESCRIBE `+f.table+`;
SET @ddp_epsilon = 0.5;
SELECT COUNT(*) FROM `+f.table+` WHERE age > 30;
SELECT sex, SUM(score) FROM `+f.table+` GROUP BY sex;
SELECT COUNT(*) FROM `+f.table+` WHERE age > 31;
SELECT 1;
SELECT table_name, table_rows FROM information_schema.tables WHERE table_schema = 'test';
SELECT table_name FROM information_schema.tables WHERE table_schema = 'test';
SELECT * FROM information_schema.column_statistics;
`, "--force")
	for _, want := range []string{
		"Tables_in_test\n" + f.table + "\n",
		"age\tbigint\tYES\t\tNULL\tbounds 0..100, groupable\n",
		"sex\tSUM(score)\nF\t",
		"1\n1\n",
		"table_name\n" + f.table + "\n", // only the policy's table, although test holds others
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{
		"ERROR 1226 (42000)",        // the third private query: budget 1 spent
		"catalog column TABLE_ROWS", // statistics refused
		"information_schema.COLUMN_STATISTICS holds statistics",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}
