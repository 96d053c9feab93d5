package ir

import "strconv"

// Expr is a scalar expression in a WHERE, HAVING or ORDER BY clause. The set
// of node types is closed: it is exactly the predicate whitelist of
// DESIGN.md (comparisons, BETWEEN, IN, LIKE, IS NULL, AND/OR/NOT, + - *
// / %, searched CASE, CAST, the functions of package exprtype's table). A parser
// that meets anything else refuses the statement instead of approximating
// it. Clamp is the one node parsers never produce: the planner inserts it;
// CurrentTime the one the planner never sees: the session binds it.
type Expr interface{ exprNode() }

// ColumnRef names a column as written: Qualifier is the table name or alias
// ("" when unqualified), Schema the schema (PostgreSQL) or database (MySQL)
// of a three-part name schema.table.column ("" otherwise; only with a
// Qualifier). The planner resolves it against the policy.
type ColumnRef struct {
	Schema    string
	Qualifier string
	Name      string
}

// Literal is a constant.
type Literal struct{ Value Value }

// CurrentTime is the statement's time as the client's functions read it,
// in UTC (the time zone every session reports): Kind KindTimestampTZ for
// PostgreSQL's now() and CURRENT_TIMESTAMP, KindTimestamp for
// LOCALTIMESTAMP and MySQL's NOW(), KindDate for CURRENT_DATE and
// CURDATE(); Precision is the number of fractional second digits kept (6
// in PostgreSQL, 0 for MySQL's NOW()). The session replaces it with a
// literal before planning (BindTime), so that the time is part of the
// statement the release is keyed by; a plan never holds one.
type CurrentTime struct {
	Kind      Kind
	Precision int
}

// Param is a bind parameter ($1 in PostgreSQL, the i-th ? in MySQL),
// 1-based. Front ends replace parameters with literals (Bind) before planning.
type Param struct{ Index int }

// CmpOp is a comparison operator.
type CmpOp uint8

const (
	OpEq CmpOp = iota
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
)

var cmpOpText = [...]string{"=", "<>", "<", "<=", ">", ">="}

func (o CmpOp) String() string { return cmpOpText[o] }

// Compare is L op R.
type Compare struct {
	Op   CmpOp
	L, R Expr
}

// Between is X [NOT] BETWEEN Lo AND Hi (inclusive).
type Between struct {
	X, Lo, Hi Expr
	Not       bool
}

// In is X [NOT] IN (List...). Subqueries are never represented.
type In struct {
	X    Expr
	List []Expr
	Not  bool
}

// Like is X [NOT] LIKE Pattern, or ILIKE when CaseInsensitive. The escape
// character is always backslash (parsers refuse an ESCAPE clause).
type Like struct {
	X, Pattern      Expr
	Not             bool
	CaseInsensitive bool
}

// IsNull is X IS [NOT] NULL.
type IsNull struct {
	X   Expr
	Not bool
}

// And, Or and Not are the boolean connectives.
type And struct{ L, R Expr }
type Or struct{ L, R Expr }
type Not struct{ X Expr }

// ArithOp is an arithmetic operator. Division and modulo are total by
// construction: a zero divisor gives NULL (the renderer writes the
// divisor as NULLIF(b, 0)), and the range analysis of package exprtype
// refuses the one overflow (MinInt64 / -1).
type ArithOp uint8

const (
	OpAdd ArithOp = iota
	OpSub
	OpMul
	// OpDiv is PostgreSQL's /: on two integers the quotient truncated
	// toward zero, otherwise the real quotient. The analysis lowers it
	// to OpRealDiv when an operand is real, so a lowered OpDiv always
	// has integer operands.
	OpDiv
	// OpMod is the remainder of integers, with the sign of the dividend
	// (% on every backend, MOD in MySQL).
	OpMod
	// OpRealDiv is the quotient in double precision whatever the
	// operands' types: MySQL's / (which never truncates).
	OpRealDiv
	// OpIntDiv is MySQL's DIV: integer operands only (the analysis
	// refuses reals), lowered to OpDiv.
	OpIntDiv
)

var arithOpText = [...]string{"+", "-", "*", "/", "%", "/", "DIV"}

func (o ArithOp) String() string { return arithOpText[o] }

// Arith is L op R.
type Arith struct {
	Op   ArithOp
	L, R Expr
}

// Neg is -X.
type Neg struct{ X Expr }

// Func is a call of one of the whitelisted pure functions, by canonical
// lower-case name (the table of package exprtype, which owns their arity,
// typing, ranges and rendering). Parsers map dialect spellings onto these
// names and refuse every other function.
type Func struct {
	Name string
	Args []Expr
}

// When is one arm of a Case: when Cond is true, the value is Then.
type When struct{ Cond, Then Expr }

// Case is the searched CASE WHEN c THEN a ... [ELSE b] END: the Then of
// the first arm whose Cond is true, else Else (NULL when Else is nil).
// Parsers lower the simple form CASE x WHEN v THEN a to WHEN x = v.
type Case struct {
	Whens []When
	Else  Expr
}

// CastType is the target of a Cast.
type CastType uint8

const (
	// CastBigint is a 64-bit integer (BIGINT, SIGNED).
	CastBigint CastType = iota
	// CastInteger is PostgreSQL's integer (int4): the analysis requires
	// the value to fit 32 bits and computes it as a BIGINT.
	CastInteger
	// CastDouble is an IEEE double (DOUBLE PRECISION, DOUBLE).
	CastDouble
	// CastText is text (TEXT, CHAR).
	CastText
	// CastDate, CastTimestamp and CastTimestampTZ are the date and time
	// types (DATE; TIMESTAMP, DATETIME; TIMESTAMPTZ).
	CastDate
	CastTimestamp
	CastTimestampTZ
	// CastNumeric is an exact decimal (NUMERIC, DECIMAL) of Cast.Precision
	// digits, Cast.Scale of them after the point; Precision 0 is
	// PostgreSQL's unconstrained numeric. Only post-processing computes it
	// as a decimal (package exprtype); in a row-level expression it is a
	// double.
	CastNumeric
)

var castTypeText = [...]string{"bigint", "integer", "double precision", "text", "date", "timestamp", "timestamptz", "numeric"}

func (t CastType) String() string { return castTypeText[t] }

// Cast is CAST(X AS To). Package exprtype allows only the casts that
// cannot fail on any value of X's range and lowers the others away
// (a cast to X's own type), so a lowered Cast always converts.
type Cast struct {
	X  Expr
	To CastType
	// Precision and Scale are the type modifiers of CastNumeric
	// (NUMERIC(Precision, Scale)); zero for every other target.
	Precision, Scale int
}

// TypeName is the cast's target as SQL writes it: numeric(10,2) with
// its modifiers.
func (c Cast) TypeName() string {
	if c.To == CastNumeric && c.Precision > 0 {
		return "numeric(" + strconv.Itoa(c.Precision) + "," + strconv.Itoa(c.Scale) + ")"
	}
	return c.To.String()
}

// Clamp is X clamped to [Lo, Hi]: LEAST(GREATEST(X, Lo), Hi), NULL when X
// is NULL. Lo and Hi are both integers or both reals, and the clamped value
// has their type (the backend computes in BIGINT or DOUBLE whatever the
// column's storage type). With real bounds a value of magnitude below
// TinyReal becomes 0 before clamping, so that no product of clamped values
// can underflow to zero (PostgreSQL raises an error for that). The planner wraps every column that an
// expression computes with in a Clamp to its declared bounds, so the
// expression's value range is known and it cannot fail on any stored
// value (the totality rule, DESIGN.md). Parsers never produce it.
type Clamp struct {
	X      Expr
	Lo, Hi Value
}

// TinyReal is the magnitude below which a real Clamp reads 0. It is at
// least 2^-256, so every nonzero clamped value is a multiple of 2^-308.
const TinyReal = 1e-77

// Aggregate is an aggregate call in HAVING or ORDER BY (the select list uses
// SelectItem). The planner maps it to an output column of the noisy result.
type Aggregate struct {
	Func AggFunc
	Arg  *ColumnRef // nil for COUNT(*) and for an expression argument
	// ArgExpr is the argument when it is not a bare column (Arg nil).
	// Walk and Rewrite do not descend into it: it is evaluated on input
	// rows, not on the output row the rest of the expression reads.
	ArgExpr Expr
	// Distinct, Fraction and Name as in SelectItem.
	Distinct bool
	Fraction *float64
	Name     string
}

// OutputRef refers to the i-th (0-based) item of the select list, as in
// ORDER BY 2. Parsers produce it for positional references only; bare names
// stay ColumnRef and the planner resolves them against select-list aliases.
type OutputRef struct{ Index int }

func (ColumnRef) exprNode()   {}
func (Literal) exprNode()     {}
func (Param) exprNode()       {}
func (CurrentTime) exprNode() {}
func (Compare) exprNode()     {}
func (Between) exprNode()     {}
func (In) exprNode()          {}
func (Like) exprNode()        {}
func (IsNull) exprNode()      {}
func (And) exprNode()         {}
func (Or) exprNode()          {}
func (Not) exprNode()         {}
func (Arith) exprNode()       {}
func (Neg) exprNode()         {}
func (Func) exprNode()        {}
func (Case) exprNode()        {}
func (Cast) exprNode()        {}
func (Clamp) exprNode()       {}
func (Aggregate) exprNode()   {}
func (OutputRef) exprNode()   {}

// Walk calls fn for e and every sub-expression, depth first, stopping
// early when fn returns false for a node (its children are skipped).
func Walk(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	switch n := e.(type) {
	case Compare:
		Walk(n.L, fn)
		Walk(n.R, fn)
	case Between:
		Walk(n.X, fn)
		Walk(n.Lo, fn)
		Walk(n.Hi, fn)
	case In:
		Walk(n.X, fn)
		for _, x := range n.List {
			Walk(x, fn)
		}
	case Like:
		Walk(n.X, fn)
		Walk(n.Pattern, fn)
	case IsNull:
		Walk(n.X, fn)
	case And:
		Walk(n.L, fn)
		Walk(n.R, fn)
	case Or:
		Walk(n.L, fn)
		Walk(n.R, fn)
	case Not:
		Walk(n.X, fn)
	case Arith:
		Walk(n.L, fn)
		Walk(n.R, fn)
	case Neg:
		Walk(n.X, fn)
	case Func:
		for _, x := range n.Args {
			Walk(x, fn)
		}
	case Case:
		for _, w := range n.Whens {
			Walk(w.Cond, fn)
			Walk(w.Then, fn)
		}
		Walk(n.Else, fn)
	case Cast:
		Walk(n.X, fn)
	case Clamp:
		Walk(n.X, fn)
	case Window:
		Walk(n.Arg, fn)
		for _, x := range n.PartitionBy {
			Walk(x, fn)
		}
		for _, o := range n.OrderBy {
			Walk(o.Expr, fn)
		}
	}
}

// Rewrite returns e with every node replaced by fn's result, bottom up.
// fn receives nodes whose children were already rewritten.
func Rewrite(e Expr, fn func(Expr) (Expr, error)) (Expr, error) {
	if e == nil {
		return nil, nil
	}
	var err error
	rw := func(x Expr) Expr {
		if err != nil {
			return x
		}
		var y Expr
		y, err = Rewrite(x, fn)
		return y
	}
	switch n := e.(type) {
	case Compare:
		n.L, n.R = rw(n.L), rw(n.R)
		e = n
	case Between:
		n.X, n.Lo, n.Hi = rw(n.X), rw(n.Lo), rw(n.Hi)
		e = n
	case In:
		n.X = rw(n.X)
		list := make([]Expr, len(n.List))
		for i, x := range n.List {
			list[i] = rw(x)
		}
		n.List = list
		e = n
	case Like:
		n.X, n.Pattern = rw(n.X), rw(n.Pattern)
		e = n
	case IsNull:
		n.X = rw(n.X)
		e = n
	case And:
		n.L, n.R = rw(n.L), rw(n.R)
		e = n
	case Or:
		n.L, n.R = rw(n.L), rw(n.R)
		e = n
	case Not:
		n.X = rw(n.X)
		e = n
	case Arith:
		n.L, n.R = rw(n.L), rw(n.R)
		e = n
	case Neg:
		n.X = rw(n.X)
		e = n
	case Func:
		args := make([]Expr, len(n.Args))
		for i, x := range n.Args {
			args[i] = rw(x)
		}
		n.Args = args
		e = n
	case Case:
		whens := make([]When, len(n.Whens))
		for i, w := range n.Whens {
			whens[i] = When{Cond: rw(w.Cond), Then: rw(w.Then)}
		}
		n.Whens = whens
		if n.Else != nil {
			n.Else = rw(n.Else)
		}
		e = n
	case Cast:
		n.X = rw(n.X)
		e = n
	case Clamp:
		n.X = rw(n.X)
		e = n
	case Window:
		if n.Arg != nil {
			n.Arg = rw(n.Arg)
		}
		part := make([]Expr, len(n.PartitionBy))
		for i, x := range n.PartitionBy {
			part[i] = rw(x)
		}
		n.PartitionBy = part
		order := make([]OrderItem, len(n.OrderBy))
		for i, o := range n.OrderBy {
			o.Expr = rw(o.Expr)
			order[i] = o
		}
		n.OrderBy = order
		e = n
	}
	if err != nil {
		return nil, err
	}
	return fn(e)
}
