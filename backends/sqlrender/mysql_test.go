package sqlrender

import (
	"fmt"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// TestRenderMySQL: backquotes, ? placeholders, SIGNED/DOUBLE casts, sums
// left as DECIMAL saturated at the int64 limits (no outer CAST), ILIKE
// as LOWER LIKE LOWER, CHAR_LENGTH and the portable ROUND.
func TestRenderMySQL(t *testing.T) {
	tests := []struct {
		name     string
		q        *ir.BackendQuery
		wantSQL  string
		wantArgs []any
	}{
		{
			name:     "count",
			q:        countWhere,
			wantSQL:  "SELECT COUNT(*) FROM `public`.`visits` AS `v` WHERE ((`v`.`age` >= ?) AND (LOWER(`v`.`name`) LIKE LOWER(?)))",
			wantArgs: []any{int64(18), "O'Brien%"},
		},
		{
			name: "bounded join",
			q:    boundedJoin,
			wantSQL: "SELECT `ddp_g1`, COUNT(*), COUNT(`ddp_a2`), " +
				"LEAST(GREATEST(COALESCE(SUM(CAST(LEAST(GREATEST(`ddp_a3`, ?), ?) AS SIGNED)), 0), -9223372036854775808), 9223372036854775807), " +
				"LEAST(GREATEST(COALESCE(SUM(CAST(FLOOR(LEAST(GREATEST((CASE WHEN (CAST(`ddp_a4` AS DOUBLE) > -6.25e-02) AND (CAST(`ddp_a4` AS DOUBLE) < 6.25e-02) THEN 0 ELSE CAST(`ddp_a4` AS DOUBLE) END), ?), ?) / ? + 0.5) AS SIGNED)), 0), -9223372036854775808), 9223372036854775807) " +
				"FROM (SELECT `c`.`region` AS `ddp_g1`, `v`.`age` AS `ddp_a2`, `v`.`age` AS `ddp_a3`, `v`.`spend` AS `ddp_a4`, " +
				"ROW_NUMBER() OVER (PARTITION BY `v`.`uid` ORDER BY `c`.`region`, `v`.`age`, `v`.`spend`) AS `ddp_rn` " +
				"FROM `visits` AS `v` JOIN `cities` AS `c` ON `v`.`city_id` = `c`.`id` WHERE (`v`.`note` IS NOT NULL)) AS `ddp_b` " +
				"WHERE `ddp_rn` <= 2 GROUP BY `ddp_g1`",
			wantArgs: []any{int64(0), int64(100), -5.5, 10.0, 0.25},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := MySQL().Render(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if st.SQL != tc.wantSQL {
				t.Errorf("SQL\n got %s\nwant %s", st.SQL, tc.wantSQL)
			}
			if fmt.Sprint(st.Args) != fmt.Sprint(tc.wantArgs) {
				t.Errorf("args %v, want %v", st.Args, tc.wantArgs)
			}
		})
	}
	st, err := MySQL().RenderExpr(ir.Compare{Op: ir.OpEq, L: ir.Func{Name: "length", Args: []ir.Expr{col("t", "s")}},
		R: ir.Func{Name: "round", Args: []ir.Expr{col("t", "f")}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "(CAST(CHAR_LENGTH(`t`.`s`) AS SIGNED) = (SIGN(CAST(`t`.`f` AS DOUBLE)) * FLOOR(ABS(CAST(`t`.`f` AS DOUBLE)) + 0.5)))"; st.SQL != want {
		t.Errorf("functions\n got %s\nwant %s", st.SQL, want)
	}
	if ByName("mysql") == nil || ByName("mysql").Name != "mysql" {
		t.Error(`ByName("mysql") is not the MySQL dialect`)
	}
}
