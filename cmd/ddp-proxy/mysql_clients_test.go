package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMySQLWithPymysqlAndSQLAlchemy runs testdata/pymysql_client.py with
// Debian's python3 (pymysql and SQLAlchemy); .ci/run installs them.
func TestMySQLWithPymysqlAndSQLAlchemy(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import pymysql, sqlalchemy").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI: python3-pymysql and python3-sqlalchemy must be installed by .ci/run: %v", err)
		}
		t.Skip("python3 with pymysql and sqlalchemy is not installed (apt-get install python3-pymysql python3-sqlalchemy)")
	}
	addr, _ := startMySQLDemo(t)
	host, port, _ := strings.Cut(addr, ":")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, "testdata/pymysql_client.py", host, port).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "sqlalchemy ok") {
		t.Fatalf("python client: %v\n%s", err, out)
	}
}

// TestMySQLWithMariaDBConnectorJ compiles and runs
// testdata/MariaDBJdbcClient.java with Debian's libmariadb-java.
func TestMySQLWithMariaDBConnectorJ(t *testing.T) {
	jar := "/usr/share/java/mariadb-java-client.jar"
	_, errJ := os.Stat(jar)
	_, errC := exec.LookPath("javac")
	if errJ != nil || errC != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI: javac and libmariadb-java must be installed by .ci/run (%v, %v)", errJ, errC)
		}
		t.Skip("javac or MariaDB Connector/J (libmariadb-java) is not installed")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "javac", "-cp", jar, "-d", dir, "testdata/MariaDBJdbcClient.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	addr, _ := startMySQLDemo(t)
	host, port, _ := strings.Cut(addr, ":")
	out, err := exec.CommandContext(ctx, "java", "-cp", jar+":"+dir, "MariaDBJdbcClient", host, port).CombinedOutput()
	if err != nil || strings.Count(string(out), "mariadb jdbc ok") != 2 {
		t.Fatalf("Connector/J client: %v\n%s", err, out)
	}
}
