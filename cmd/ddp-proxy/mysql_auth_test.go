package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestMySQLAuthAndBudgetMariaDB: the policy's users log in with
// mysql_native_password (cleartext password_env and a verifier) and
// caching_sha2_password, wrong passwords are 1045 (28000), and spending
// the budget ends in 1226 (42000) on a connection that stays usable.
func TestMySQLAuthAndBudgetMariaDB(t *testing.T) {
	f := newMariaFixture(t, 200, 1.0)
	addr := serveMySQL(t, f.pol)
	for _, tc := range []struct {
		user, pw string
		ok       bool
	}{
		{"analyst", f.password, true},
		{"analyst", "wrong", false},
		{"hashed", "hashed-pw", true},
		{"hashed", "hashed-pw2", false},
		{"nobody", "x", false},
	} {
		db, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s)/test", tc.user, tc.pw, addr))
		if err != nil {
			t.Fatal(err)
		}
		err = db.Ping()
		db.Close()
		if tc.ok && err != nil {
			t.Errorf("%s with the right password: %v", tc.user, err)
		}
		if !tc.ok {
			wantMySQLError(t, err, 1045, "28000")
		}
	}

	ctx := context.Background()
	_, conn := mysqlConn(t, fmt.Sprintf("analyst:%s@tcp(%s)/test", f.password, addr))
	// Budget 1, ε 0.4 per query: two answers, the third is refused.
	if _, err := conn.ExecContext(ctx, "SET @ddp_epsilon = 0.4"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		var n int64
		err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+f.table+" WHERE age > ?", 20+i).Scan(&n)
		if i < 2 {
			if err != nil {
				t.Fatalf("query %d: %v", i, err)
			}
			continue
		}
		wantMySQLError(t, err, 1226, "42000")
	}
	w := joined(queryStrings(t, conn, "SHOW WARNINGS"))
	if !strings.HasPrefix(w, "Error\t1226\t") {
		t.Errorf("SHOW WARNINGS after the refusal:\n%s", w)
	}
	b := queryStrings(t, conn, "SELECT * FROM ddp.budget")
	if len(b) != 1 || b[0][0] != "people" || b[0][2] != "0.8" || b[0][3] != "0.2" {
		t.Errorf("budget view = %v, want 0.8 spent", b)
	}
	// ε above the user's max_epsilon is refused when set.
	_, err := conn.ExecContext(ctx, "SET @ddp_epsilon = 5")
	wantMySQLError(t, err, 1231, "42000")
	if got := queryStrings(t, conn, "SELECT 1"); got[0][0] != "1" {
		t.Errorf("SELECT 1 after budget exhaustion = %v", got)
	}
}

// TestCheckConnectMariaDB: check --connect reads a MySQL backend's schema.
func TestCheckConnectMariaDB(t *testing.T) {
	f := newMariaFixture(t, 10, 1)
	ctx := context.Background()
	probs, err := checkAgainstBackend(ctx, f.pol, io.Discard)
	if err != nil || len(probs) != 0 {
		t.Fatalf("check --connect on a matching table: %v %v", probs, err)
	}
	tbl := f.pol.Datasets["people"].Tables[f.table]
	tbl.ColumnNames = append(tbl.ColumnNames, "no_such_column")
	probs, err = checkAgainstBackend(ctx, f.pol, io.Discard)
	if err != nil || len(probs) != 1 || !strings.Contains(probs[0], "no_such_column does not exist") {
		t.Fatalf("check --connect with a missing column: %v %v", probs, err)
	}
}
