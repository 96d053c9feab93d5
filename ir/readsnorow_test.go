package ir

import "testing"

func TestReadsNoRow(t *testing.T) {
	lit := func(v Value) Expr { return Literal{Value: v} }
	one, zero := lit(Int(1)), lit(Int(0))
	col := ColumnRef{Name: "age"}
	limit := func(n int64) *int64 { return &n }
	tests := []struct {
		name  string
		where Expr
		limit *int64
		want  bool
	}{
		{"1 <> 1", Compare{Op: OpNe, L: one, R: one}, nil, true},
		{"1 = 0", Compare{Op: OpEq, L: one, R: zero}, nil, true},
		{"false", lit(Bool(false)), nil, true},
		{"NULL", lit(Null()), nil, true},
		{"MySQL 0", zero, nil, true},
		{"NULL AND false", And{L: lit(Null()), R: lit(Bool(false))}, nil, true},
		{"column AND false", And{L: Compare{Op: OpGt, L: col, R: one}, R: lit(Bool(false))}, nil, true},
		{"NOT (1 = 1)", Not{X: Compare{Op: OpEq, L: one, R: one}}, nil, true},
		{"1 IS NULL", IsNull{X: one}, nil, true},
		{"limit 0", nil, limit(0), true},
		{"no where", nil, nil, false},
		{"limit 1", nil, limit(1), false},
		{"1 = 1", Compare{Op: OpEq, L: one, R: one}, nil, false},
		{"column <> column", Compare{Op: OpNe, L: col, R: col}, nil, false},
		{"NULL OR true", Or{L: lit(Null()), R: lit(Bool(true))}, nil, false},
		{"column OR false", Or{L: Compare{Op: OpGt, L: col, R: one}, R: lit(Bool(false))}, nil, false},
		{"text = integer does not fold", Compare{Op: OpEq, L: lit(String("a")), R: one}, nil, false},
		{"parameter", Compare{Op: OpEq, L: Param{Index: 1}, R: one}, nil, false},
	}
	for _, tt := range tests {
		q := Query{Where: tt.where, Limit: tt.limit}
		if got := q.ReadsNoRow(); got != tt.want {
			t.Errorf("%s: ReadsNoRow = %v, want %v", tt.name, got, tt.want)
		}
	}
}
