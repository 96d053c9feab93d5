package ir

// BackendQuery is what the planner asks a backend to compute: the true
// aggregates of a private table (optionally joined many-to-one to public
// tables), with each privacy unit's contribution bounded. It is built by the
// planner only; every column is resolved and qualified with the RefName of
// From or of a Join, and Where contains no Param.
//
// Backends render it in their own dialect, binding literals as parameters
// (never splicing them into SQL text):
//
//	SELECT g..., agg... FROM (
//	  SELECT g..., a..., ROW_NUMBER() OVER (PARTITION BY unit ORDER BY unit) AS rn
//	  FROM from JOIN ... WHERE where
//	) WHERE rn <= MaxRowsPerUnit GROUP BY g...
//
// and without the inner query when MaxRowsPerUnit is 0.
type BackendQuery struct {
	From  TableRef
	Joins []Join
	Where Expr
	// Unit is the privacy unit column of From. With MaxRowsPerUnit k > 0
	// the backend keeps at most k rows (after WHERE) per distinct Unit value;
	// rows whose unit is NULL count as one unit.
	Unit           ColumnRef
	MaxRowsPerUnit int
	// GroupBy are the grouping keys: a bare column is a ColumnRef, any
	// other key a lowered expression (package exprtype: total, every
	// column it computes with clamped).
	GroupBy []Expr
	Aggs    []BackendAgg
}

// BackendAggKind is the kind of a true aggregate.
type BackendAggKind uint8

const (
	// CountRows is COUNT(*).
	CountRows BackendAggKind = iota
	// CountValues is COUNT(col): rows where Column (or Expr) is not NULL.
	CountValues
	// SumClamped is SUM of Column clamped to [Lo, Hi] (NULLs contribute
	// nothing) and, when Quantum > 0, divided by Quantum and rounded to the
	// nearest integer per row (ties up) before summing:
	// SUM(CAST(FLOOR(LEAST(GREATEST(col, Lo), Hi) / Quantum + 0.5) AS BIGINT)).
	// FLOOR(x + 0.5), not ROUND, because ROUND breaks ties differently on
	// different backends.
	// With Quantum == 0 Column is an integer column and Lo, Hi are integers.
	// The result is always an exact integer (in units of Quantum), so
	// floating-point summation order cannot change it.
	SumClamped
	// CountDistinct is COUNT(DISTINCT x) over the bounded rows (after WHERE
	// and the per-unit bound k): the number of distinct non-NULL values of
	// Column (or Expr). An input that is a CAST to text at its top is
	// compared in the backend's exact (binary) collation, as a text group
	// key is, so every backend counts every distinct spelling once. The
	// unit column itself is passed bare: it is then compared under the
	// equality of the PARTITION BY that defines units, so one unit's rows
	// hold at most one distinct value.
	CountDistinct
)

// BackendAgg is one true aggregate of a BackendQuery.
type BackendAgg struct {
	Kind   BackendAggKind
	Column *ColumnRef // nil for CountRows and when Expr is set
	// Expr, when set, is the input instead of Column: a lowered expression
	// (exprtype.Scalar: total, every column clamped) whose range lies in
	// [Lo, Hi] for SumClamped, so the clamp is a no-op the renderer keeps.
	// Lo, Hi and Quantum are zero for the counting kinds.
	Expr    Expr
	Lo, Hi  float64
	Quantum float64
}

// BackendRow is one group of a BackendQuery's result: the group key values
// (in GroupBy order; none without GROUP BY) and one exact integer per Aggs
// entry. Without GROUP BY a backend returns exactly one row (with zero
// aggregates over an empty input).
type BackendRow struct {
	Keys []Value
	Aggs []int64
}
