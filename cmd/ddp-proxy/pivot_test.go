package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// lookerPivotInner is the aggregate query of a Looker explore pivoted on
// income; lookerPivot wraps it as Looker does (column rank, row rank, min
// rank per pivot row, its dense rank, per-column ordering, the highest
// ranked cell, the row and column limits).
const (
	lookerPivotInner = `SELECT people.sex AS "people.sex", people.income AS "people.income", COUNT(*) AS "people.count" FROM public.people AS people GROUP BY 1,2`
	lookerPivot      = `SELECT * FROM (SELECT *, DENSE_RANK() OVER (ORDER BY z___min_rank) as z___pivot_row_rank, RANK() OVER (PARTITION BY z__pivot_col_rank ORDER BY z___min_rank) as z__pivot_col_ordering, CASE WHEN z___min_rank = z___rank THEN 1 ELSE 0 END AS z__is_highest_ranked_cell FROM (SELECT *, MIN(z___rank) OVER (PARTITION BY "people.sex") as z___min_rank FROM (SELECT *, RANK() OVER (ORDER BY "people.sex" ASC, z__pivot_col_rank) AS z___rank FROM (SELECT *, DENSE_RANK() OVER (ORDER BY "people.income" NULLS LAST) AS z__pivot_col_rank FROM (` +
		lookerPivotInner + `) ww) bb WHERE z__pivot_col_rank <= 16384) aa) xx) zz WHERE (z__pivot_col_rank <= 50 OR z__is_highest_ranked_cell = 1) AND (z___pivot_row_rank <= 500 OR z__pivot_col_ordering = 1) ORDER BY z___pivot_row_rank`
)

// lookerPivotByMeasure is the pivot sorted by the count of the first
// pivot column, descending (Looker's sort on a pivoted measure).
const lookerPivotByMeasure = `SELECT * FROM (SELECT *, DENSE_RANK() OVER (ORDER BY z___min_rank) as z___pivot_row_rank, RANK() OVER (PARTITION BY z__pivot_col_rank ORDER BY z___min_rank) as z__pivot_col_ordering FROM (SELECT *, MIN(z___rank) OVER (PARTITION BY "people.sex") as z___min_rank FROM (SELECT *, RANK() OVER (ORDER BY CASE WHEN z__pivot_col_rank=1 THEN 1 ELSE 2 END, CASE WHEN z__pivot_col_rank=1 THEN "people.count" ELSE NULL END DESC NULLS LAST, "people.count" DESC, z__pivot_col_rank, "people.sex") AS z___rank FROM (SELECT *, DENSE_RANK() OVER (ORDER BY "people.income" NULLS LAST) AS z__pivot_col_rank FROM (` +
	lookerPivotInner + `) ww) bb WHERE z__pivot_col_rank <= 16384) aa) xx) zz WHERE z___pivot_row_rank <= 500 OR z__pivot_col_ordering = 1 ORDER BY z___pivot_row_rank`

// lookerPivotCols are its columns, in order.
var lookerPivotCols = []string{"people.sex", "people.income", "people.count", "z__pivot_col_rank", "z___rank", "z___min_rank", "z___pivot_row_rank", "z__pivot_col_ordering", "z__is_highest_ranked_cell"}

// wantPivotRows computes the pivot's rows from the plain query's noisy
// rows (sex, income, count) by the definitions: the pivot column rank is
// income's dense rank, the cell rank (sex, column rank)'s rank, both
// unique per cell here; the row rank is the sex's dense rank.
func wantPivotRows(plain [][]string) []string {
	sexes, incomes := map[string]bool{}, map[string]bool{}
	for _, r := range plain {
		sexes[r[0]], incomes[r[1]] = true, true
	}
	ss, is := slices.Sorted(func(y func(string) bool) {
		for k := range sexes {
			y(k)
		}
	}), slices.Sorted(func(y func(string) bool) {
		for k := range incomes {
			y(k)
		}
	})
	var out []string
	for si, s := range ss {
		for ii, inc := range is {
			n := ""
			for _, r := range plain {
				if r[0] == s && r[1] == inc {
					n = r[2]
				}
			}
			rank := si*len(is) + ii + 1
			minRank := si*len(is) + 1
			highest := 0
			if rank == minRank {
				highest = 1
			}
			out = append(out, strings.Join([]string{s, inc, n, fmt.Sprint(ii + 1), fmt.Sprint(rank), fmt.Sprint(minRank), fmt.Sprint(si + 1), fmt.Sprint(si + 1), fmt.Sprint(highest)}, "|"))
		}
	}
	return out
}

// TestLookerPivotOverTheWire: Looker's pivot query answers through pgx
// (simple and extended protocol) and go-sql-driver/mysql with Looker's
// columns, computed from the plain query's release: the same noisy
// counts, and nothing more charged after it.
func TestLookerPivotOverTheWire(t *testing.T) {
	pgAddr, myAddr := startDemoBoth(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", pgAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	query := func(q string, mode pgx.QueryExecMode) (cols []string, rows [][]string) {
		t.Helper()
		rs, err := conn.Query(ctx, q, mode)
		if err != nil {
			t.Fatalf("%s (%v): %v", q, mode, err)
		}
		for _, f := range rs.FieldDescriptions() {
			cols = append(cols, f.Name)
		}
		for rs.Next() {
			vs, err := rs.Values()
			if err != nil {
				t.Fatal(err)
			}
			var r []string
			for _, v := range vs {
				r = append(r, fmt.Sprint(v))
			}
			rows = append(rows, r)
		}
		if err := rs.Err(); err != nil {
			t.Fatalf("%s (%v): %v", q, mode, err)
		}
		return cols, rows
	}
	fresh := showBudget(t, conn)
	_, plain := query(lookerPivotInner, pgx.QueryExecModeSimpleProtocol)
	if len(plain) != 4 {
		t.Fatalf("plain query: %v, want 2 sexes × 2 incomes", plain)
	}
	before := showBudget(t, conn)
	if before == fresh {
		t.Fatalf("the plain query charged nothing (budget %s): the test would prove nothing", before)
	}
	want := wantPivotRows(plain)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeDescribeExec} {
		cols, rows := query(lookerPivot, mode)
		if !slices.Equal(cols, lookerPivotCols) {
			t.Errorf("%v: columns %v, want %v", mode, cols, lookerPivotCols)
		}
		var got []string
		for _, r := range rows {
			got = append(got, strings.Join(r, "|"))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v: rows\n%v\nwant\n%v", mode, got, want)
		}
	}
	// Sorted by the measure of the first pivot column, as Looker writes
	// it: the same columns and cells (in another row order), still free.
	cols, rows := query(lookerPivotByMeasure, pgx.QueryExecModeDescribeExec)
	if want := slices.Delete(slices.Clone(lookerPivotCols), 8, 9); !slices.Equal(cols, want) {
		t.Errorf("by measure: columns %v, want %v", cols, want)
	}
	var cells, plainCells []string
	for _, r := range rows {
		cells = append(cells, strings.Join(r[:3], "|"))
	}
	for _, r := range plain {
		plainCells = append(plainCells, strings.Join(r, "|"))
	}
	if slices.Sort(cells); !slices.Equal(cells, slices.Sorted(slices.Values(plainCells))) {
		t.Errorf("by measure: cells %v, want the plain query's %v", cells, plainCells)
	}
	if after := showBudget(t, conn); after != before {
		t.Errorf("budget %s after the pivots, was %s: they must share the plain query's release", after, before)
	}

	// MySQL (Looker's MySQL dialect writes no NULLS LAST).
	db, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo", myAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	my, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer my.Close()
	mysqlText := func(q string) string {
		q = strings.ReplaceAll(q, " NULLS LAST", "")
		return strings.ReplaceAll(strings.ReplaceAll(q, `"`, "`"), "public.", "demo.")
	}
	myBefore := queryStrings(t, my, "SELECT * FROM ddp.budget")
	var myPlain [][]string
	for _, r := range queryStrings(t, my, mysqlText(lookerPivotInner)) {
		myPlain = append(myPlain, r[:3])
	}
	myWant := wantPivotRows(myPlain)
	for _, prepared := range []bool{false, true} {
		rows := queryStrings(t, my, mysqlText(lookerPivot))
		if prepared {
			rows = preparedStrings(t, my, mysqlText(lookerPivot))
		}
		var got []string
		for _, r := range rows {
			got = append(got, strings.Join(r, "|"))
		}
		if !slices.Equal(got, myWant) {
			t.Errorf("mysql (prepared %v): rows\n%v\nwant\n%v", prepared, got, myWant)
		}
	}
	if rows := queryStrings(t, my, mysqlText(lookerPivotByMeasure)); len(rows) != 4 || len(rows[0]) != 8 {
		t.Errorf("mysql by measure: %v, want 4 rows of 8 columns", rows)
	}
	// One release across front ends: the plain query and the pivot are
	// both free here after the PostgreSQL client's plain query.
	if after := queryStrings(t, my, "SELECT * FROM ddp.budget"); fmt.Sprint(after) != fmt.Sprint(myBefore) {
		t.Errorf("mysql: budget %v after the queries, was %v", after, myBefore)
	}
	if fmt.Sprint(myPlain) != fmt.Sprint(plain) {
		t.Errorf("mysql: plain rows %v, want the PostgreSQL client's %v", myPlain, plain)
	}
}
