package ir

// Stage is one SELECT level over the rows of the level below it: the
// aggregate query's (noisy) output rows for the first stage, the previous
// stage's rows after it. Looker's pivot wrapper is such a stack: each
// level computes window functions over the previous level's rows and the
// outermost filters on them. A stage is post-processing: the proxy
// evaluates it after the noise, nothing of it reaches the backend or
// changes the release.
//
// Every expression of a stage reads the level below's columns as
// OutputRef (Index is the 0-based column of that level's result), never a
// column of the input rows and never an aggregate. SQL's order of
// evaluation applies: Where filters the rows below, then the windows run
// over the rows it kept, then the select list, ORDER BY, OFFSET and LIMIT.
type Stage struct {
	Select []StageItem
	Where  Expr // nil when absent
	// OrderBy keys are expressions over the level below too: an output
	// name or position of this stage is replaced by its item's expression.
	OrderBy []OrderItem
	Limit   *int64
	Offset  *int64
}

// StageItem is one output column of a stage.
type StageItem struct {
	Name string // "" when the SQL gave none (the planner names it as PostgreSQL)
	Expr Expr
}

// stageExprs lists every expression of the stages, for Walk and Rewrite.
func stageExprs(stages []Stage, visit func(*Expr)) {
	for i := range stages {
		s := &stages[i]
		for j := range s.Select {
			visit(&s.Select[j].Expr)
		}
		visit(&s.Where)
		for j := range s.OrderBy {
			visit(&s.OrderBy[j].Expr)
		}
	}
}

// copyStages copies the stages deeply enough that rewriting their
// expressions in place leaves the original untouched.
func copyStages(stages []Stage) []Stage {
	if stages == nil {
		return nil
	}
	out := make([]Stage, len(stages))
	for i, s := range stages {
		s.Select = append([]StageItem(nil), s.Select...)
		s.OrderBy = append([]OrderItem(nil), s.OrderBy...)
		out[i] = s
	}
	return out
}
