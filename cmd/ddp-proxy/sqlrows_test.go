package main

import (
	"database/sql"
	"testing"
)

// openDB opens a database/sql pool (a client of the proxy, or a backend
// whose reachability the caller checks), closed when the test ends.
func openDB(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// scanText reads the rows left in the current result set of rows as text,
// a NULL as null (tests differ in whether NULL must stay visible, "NULL",
// or read as the empty string). It does not close rows and does not check
// rows.Err: callers that read one result set do both, and a multi-result
// reader moves on with NextResultSet first.
func scanText(rows *sql.Rows, null string) ([][]string, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = null
			if v.Valid {
				row[i] = v.String
			}
		}
		out = append(out, row)
	}
	return out, nil
}
