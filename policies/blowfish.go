package policies

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ddp-proxy/ddp-proxy/constraints"
	"github.com/ddp-proxy/ddp-proxy/sensitivity"
)

// Secrets is a Blowfish secret graph G over the tuple domain: which changes
// of one tuple must stay indistinguishable. In the file it is either a word
// (full, attribute) or a map with one key:
//
//	secrets: full
//	secrets: attribute
//	secrets: {partition: {columns: [city]}}
//	secrets: {partition: {column: age, buckets: [[0, 17], [18, 64], [65, 120]]}}
//	secrets: {partition: {column: age, buckets: 10}}  # [lo, lo+9], ... over the range domain
//	secrets: {distance: {column: salary, theta: 1000}}
type Secrets struct {
	// Kind is one of the Secrets* constants.
	Kind string `yaml:"-"`
	// Columns are the partition columns (partition: {columns: [...]}): two
	// tuples are a secret pair iff they agree on every one of them.
	Columns []string `yaml:"-"`
	// Column is the bucketed partition column or the distance column
	// (lower-case).
	Column string `yaml:"-"`
	// Theta is the distance threshold θ of distance secrets: values of
	// Column at most θ apart are a secret pair.
	Theta float64 `yaml:"-"`
	// Buckets are the cells of a bucketed partition of Column: for an
	// integer or real column each bucket is an inclusive range [lo, hi];
	// for a text or boolean column it is a list of values. Two tuples are
	// a secret pair iff their Column values fall in the same bucket.
	Buckets [][]any `yaml:"-"`
	// BucketWidth is the shorthand buckets: w for an integer column with a
	// declared range domain [lo, hi]: the buckets [lo, lo+w−1], [lo+w,
	// lo+2w−1], ... (the last one cut at hi). Validation expands it into
	// Buckets.
	BucketWidth int64 `yaml:"-"`

	// Line is the line of the secrets key's value (for messages).
	Line int `yaml:"-" json:"-"`
}

// Secret graph kinds (the spellings of the secrets key; constraints owns
// them, sensitivity re-exports them).
const (
	SecretsFull      = sensitivity.SecretsFull      // complete graph: plain DP on tuples
	SecretsAttribute = sensitivity.SecretsAttribute // change one attribute of a tuple
	SecretsPartition = sensitivity.SecretsPartition // change within a cell of a partition
	SecretsDistance  = sensitivity.SecretsDistance  // change one ordinal column by at most θ
)

// UnmarshalYAML decodes the word or one-key map forms of Secrets. Problems
// are reported as yaml.TypeError lines so that Load turns them into
// file:line problems like every other type error.
func (s *Secrets) UnmarshalYAML(n *yaml.Node) error {
	*s = Secrets{Line: n.Line}
	n = deref(n)
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.Value {
		case SecretsFull, SecretsAttribute:
			s.Kind = n.Value
			return nil
		case SecretsPartition, SecretsDistance:
			return lineError(n, "secrets: %s needs parameters: write {partition: {columns: [...]}} or {distance: {column: c, theta: θ}}", n.Value)
		}
		return lineError(n, "secrets: unknown kind %q; use full, attribute, {partition: {...}} or {distance: {...}}", n.Value)
	case yaml.MappingNode:
	default:
		return lineError(n, "secrets: expected full, attribute or a mapping with partition or distance")
	}
	if len(n.Content) != 2 {
		return lineError(n, "secrets: give exactly one of partition or distance")
	}
	k, v := n.Content[0], deref(n.Content[1])
	fields, err := mapFields(v, "secrets."+k.Value)
	if err != nil {
		return err
	}
	switch k.Value {
	case SecretsPartition:
		s.Kind = SecretsPartition
		for name, f := range fields {
			switch name {
			case "columns":
				if err := f.Decode(&s.Columns); err != nil {
					return lineError(f, "secrets.partition.columns: expected a list of column names")
				}
			case "column":
				if err := f.Decode(&s.Column); err != nil {
					return lineError(f, "secrets.partition.column: expected a column name")
				}
			case "buckets":
				if f.Kind == yaml.ScalarNode {
					if err := f.Decode(&s.BucketWidth); err != nil || s.BucketWidth < 1 {
						return lineError(f, "secrets.partition.buckets: a width is a positive integer (buckets: 10), or give the buckets as a list")
					}
					continue
				}
				if err := f.Decode(&s.Buckets); err != nil {
					return lineError(f, "secrets.partition.buckets: expected a list of buckets, each a list ([lo, hi] for a number column, values for a text column)")
				}
			default:
				return lineError(f, "secrets.partition: unknown key %q; use columns, or column with buckets", name)
			}
		}
	case SecretsDistance:
		s.Kind = SecretsDistance
		s.Theta = math.NaN() // missing θ is reported by validation
		for name, f := range fields {
			switch name {
			case "column":
				if err := f.Decode(&s.Column); err != nil {
					return lineError(f, "secrets.distance.column: expected a column name")
				}
			case "theta":
				if err := f.Decode(&s.Theta); err != nil {
					return lineError(f, "secrets.distance.theta: expected a number")
				}
			default:
				return lineError(f, "secrets.distance: unknown key %q; use column and theta", name)
			}
		}
	default:
		return lineError(k, "secrets: unknown kind %q; use full, attribute, {partition: {...}} or {distance: {...}}", k.Value)
	}
	return nil
}

// Constraint is one published exact count (or family of counts). In the
// file it is one list item:
//
//   - total                          # the number of rows is public
//   - marginal: [sex, region]        # every cell of GROUP BY sex, region
//   - rows_and_columns: [sex, region] # both one-way marginals of a 2-D table
//   - count: {region: [north, east]} # one count: a conjunction of per-column
//   - count: {sex: F, age: {range: [18, 64]}} # equality / IN / inclusive range
//   - count: "sex = 'F' AND age BETWEEN 18 AND 64" # the same, in SQL
type Constraint struct {
	// Kind is one of the Constraint* constants.
	Kind string `yaml:"-" json:"kind"`
	// Columns are the marginal's columns or the two rows_and_columns
	// columns (lower-case).
	Columns []string `yaml:"-" json:"columns,omitempty"`
	// Count is the conjunction of a count constraint, in file order.
	Count []Condition `yaml:"-" json:"count,omitempty"`

	// Line is the line of the list item (for messages).
	Line int `yaml:"-" json:"-"`
}

// Condition restricts one column in a count constraint: the column's value
// is one of Values (equality when there is one), or lies in the inclusive
// Range [lo, hi].
type Condition struct {
	Column string    `json:"column"`
	Values []any     `json:"values,omitempty"`
	Range  []float64 `json:"range,omitempty"`
	Line   int       `json:"-"`
}

// Constraint kinds (the spellings of a constraint's kind; constraints
// owns them).
const (
	ConstraintTotal          = constraints.KindTotal
	ConstraintMarginal       = constraints.KindMarginal
	ConstraintRowsAndColumns = constraints.KindRowsAndColumns
	ConstraintCount          = constraints.KindCount
)

// UnmarshalYAML decodes one constraint item.
func (ct *Constraint) UnmarshalYAML(n *yaml.Node) error {
	*ct = Constraint{Line: n.Line}
	n = deref(n)
	if n.Kind == yaml.ScalarNode {
		if n.Value == ConstraintTotal {
			ct.Kind = ConstraintTotal
			return nil
		}
		return lineError(n, "constraint %q: use total, marginal: [cols], rows_and_columns: [a, b] or count: {column: value...}", n.Value)
	}
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		return lineError(n, "a constraint is total or a mapping with exactly one of marginal, rows_and_columns, count")
	}
	k, v := n.Content[0], deref(n.Content[1])
	switch k.Value {
	case ConstraintTotal:
		var b bool
		if err := v.Decode(&b); err != nil || !b {
			return lineError(v, "total: write the item as \"- total\" (or total: true)")
		}
		ct.Kind = ConstraintTotal
	case ConstraintMarginal, ConstraintRowsAndColumns:
		ct.Kind = k.Value
		if err := v.Decode(&ct.Columns); err != nil {
			return lineError(v, "%s: expected a list of column names", k.Value)
		}
		for i := range ct.Columns {
			ct.Columns[i] = strings.ToLower(ct.Columns[i])
		}
	case ConstraintCount:
		ct.Kind = ConstraintCount
		if v.Kind == yaml.ScalarNode && v.Tag == "!!str" {
			conds, err := parseCountPredicate(v.Value)
			if err != nil {
				return lineError(v, "%v", err)
			}
			for i := range conds {
				conds[i].Line = v.Line
			}
			ct.Count = conds
			return nil
		}
		if v.Kind != yaml.MappingNode {
			return lineError(v, "count: expected a SQL predicate string or a mapping of column: value, column: [values] or column: {range: [lo, hi]}")
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			ck, cv := v.Content[i], deref(v.Content[i+1])
			cond := Condition{Column: strings.ToLower(ck.Value), Line: ck.Line}
			switch cv.Kind {
			case yaml.ScalarNode:
				var x any
				if err := cv.Decode(&x); err != nil {
					return lineError(cv, "count.%s: %v", ck.Value, err)
				}
				cond.Values = []any{x}
			case yaml.SequenceNode:
				if err := cv.Decode(&cond.Values); err != nil {
					return lineError(cv, "count.%s: expected a list of values", ck.Value)
				}
			case yaml.MappingNode:
				fields, err := mapFields(cv, "count."+ck.Value)
				if err != nil {
					return err
				}
				for name, f := range fields {
					if name != "range" {
						return lineError(f, "count.%s: unknown key %q; use range: [lo, hi]", ck.Value, name)
					}
					if err := f.Decode(&cond.Range); err != nil {
						return lineError(f, "count.%s.range: expected two numbers [lo, hi]", ck.Value)
					}
				}
				if cond.Range == nil {
					return lineError(cv, "count.%s: give range: [lo, hi]", ck.Value)
				}
			default:
				return lineError(cv, "count.%s: expected a value, a list of values or {range: [lo, hi]}", ck.Value)
			}
			ct.Count = append(ct.Count, cond)
		}
		if len(ct.Count) == 0 {
			return lineError(v, "count: give at least one column condition")
		}
	default:
		return lineError(k, "unknown constraint %q; use total, marginal, rows_and_columns or count", k.Value)
	}
	return nil
}

// String renders the constraint in the file's own words, for messages and
// explain output.
func (ct *Constraint) String() string {
	switch ct.Kind {
	case ConstraintTotal:
		return "total"
	case ConstraintMarginal, ConstraintRowsAndColumns:
		return ct.Kind + ": [" + strings.Join(ct.Columns, ", ") + "]"
	case ConstraintCount:
		var parts []string
		for _, c := range ct.Count {
			switch {
			case c.Range != nil:
				parts = append(parts, fmt.Sprintf("%s BETWEEN %v AND %v", c.Column, c.Range[0], c.Range[len(c.Range)-1]))
			case len(c.Values) == 1:
				parts = append(parts, c.Column+" = "+sqlLiteral(c.Values[0]))
			default:
				var vs []string
				for _, v := range c.Values {
					vs = append(vs, sqlLiteral(v))
				}
				parts = append(parts, c.Column+" IN ("+strings.Join(vs, ", ")+")")
			}
		}
		return "count: " + strings.Join(parts, " AND ")
	}
	return ct.Kind
}

func sqlLiteral(v any) string {
	if s, ok := v.(string); ok {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return fmt.Sprintf("%v", v)
}

// Readings of constraints under model blowfish.
const (
	CompensationAny         = "any"          // He et al. Def. 4.1 as written (default)
	CompensationSecretsOnly = "secrets-only" // every change is a secret pair (weaker guarantee)
)

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// lineError reports a problem at n's line in the format decodeProblems
// understands.
func lineError(n *yaml.Node, format string, args ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %s", n.Line, fmt.Sprintf(format, args...))}}
}

// mapFields returns the keys of mapping n, refusing duplicates.
func mapFields(n *yaml.Node, what string) (map[string]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, lineError(n, "%s: expected a mapping", what)
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if _, dup := out[k.Value]; dup {
			return nil, lineError(k, "%s: key %q is given twice", what, k.Value)
		}
		out[k.Value] = deref(n.Content[i+1])
	}
	return out, nil
}

// checkNoModelFields refuses blowfish/induced/ddp fields on a dp dataset:
// a DBA who declares constraints must not silently get plain DP.
func (c *checker) checkNoModelFields(dp string, d *Dataset) {
	if d.Secrets != nil {
		c.add(dp+".secrets", "secrets need model: blowfish")
	}
	if len(d.Constraints) > 0 {
		c.add(dp+".constraints", "published constraints need model: induced or model: blowfish; under dp they would be ignored")
	}
	if d.Compensation != "" {
		c.add(dp+".compensation", "compensation needs model: blowfish")
	}
	if d.Dependence != nil {
		c.add(dp+".dependence", "dependence needs model: ddp")
	}
}

// addAt reports a problem at an explicit line (inside secrets or
// constraints, whose sub-keys the walker does not record).
func (c *checker) addAt(line int, path, format string, args ...any) {
	if line == 0 {
		c.add(path, format, args...)
		return
	}
	c.ps = append(c.ps, Problem{File: c.p.Source, Line: line, Path: path, Message: prefixPath(path, fmt.Sprintf(format, args...))})
}

// checkBlowfish validates the model fields of a blowfish or induced
// dataset that do not need resolved tables; checkConstraintSystem (after
// the tables are checked) does the rest and runs the analysis.
func (c *checker) checkBlowfish(dp string, d *Dataset) {
	if d.Dependence != nil {
		c.add(dp+".dependence", "dependence needs model: ddp")
	}
	if c.p.has(dp + ".neighbors") {
		if d.Model == ModelInduced {
			c.add(dp+".neighbors", "neighbors does not apply to model: induced (a move adds or removes one row); to declare the row count public, add - total under constraints")
		} else {
			c.add(dp+".neighbors", "neighbors does not apply to model: blowfish (the number of rows is always public; a neighbour changes rows along secret pairs)")
		}
	}
	switch d.Model {
	case ModelInduced:
		if d.Secrets != nil {
			c.add(dp+".secrets", "secrets apply to model: blowfish; model: induced hides every minimal change of the published tables")
		}
		if d.Compensation != "" {
			c.add(dp+".compensation", "compensation applies to model: blowfish only")
		}
	case ModelBlowfish:
		if d.Secrets == nil {
			c.add(dp+".secrets", "model: blowfish needs secrets: full, attribute, {partition: {columns: [...]}} or {distance: {column: c, theta: θ}}")
		}
		switch d.Compensation {
		case "", CompensationAny, CompensationSecretsOnly:
		default:
			c.add(dp+".compensation", "compensation must be any (the default: He et al. Def. 4.1 as written) or secrets-only (every change is a secret pair; a weaker guarantee), not %q", d.Compensation)
		}
	}
}

// privateTable returns the one private table of a blowfish/induced
// dataset.
func (d *Dataset) privateTable() *Table {
	var out *Table
	for _, tn := range d.TableNames {
		if t := d.Tables[tn]; t != nil && !t.Public {
			if out != nil {
				return nil
			}
			out = t
		}
	}
	return out
}

// checkConstraintSystem checks what secrets and constraints say about the
// dataset's private table (which must be unique and hold one row per
// unit) and runs the load-time sensitivity analysis.
func (c *checker) checkConstraintSystem(dp string, d *Dataset) {
	d.Analysis = nil // a failed re-validation must not keep an old bound
	nPrivate := 0
	for _, t := range d.Tables {
		if !t.Public {
			nPrivate++
		}
	}
	if nPrivate != 1 {
		c.add(dp+".tables", "model %s needs exactly one private table (secrets and constraints describe its rows); this dataset has %d, so split it into datasets", d.Model, nPrivate)
		return
	}
	t := d.privateTable()
	tp := dp + ".tables." + t.Name
	if t.MaxRowsPerUnit != 1 {
		c.add(tp+".max_rows_per_unit", "model %s treats each row as one individual's tuple: max_rows_per_unit must be 1, not %d", d.Model, t.MaxRowsPerUnit)
	}
	ok := true
	if s := d.Secrets; s != nil {
		ok = c.checkSecrets(dp+".secrets", s, t) && ok
	}
	for i, ct := range d.Constraints {
		ok = c.checkConstraint(fmt.Sprintf("%s.constraints.%d", dp, i), ct, t) && ok
	}
	if !ok || (d.Model == ModelBlowfish && d.Secrets == nil) {
		return
	}
	an, err := analyze(d, t)
	if err != nil {
		var be *constraints.BoundError
		if errors.As(err, &be) && len(be.Constraints) > 0 && be.Constraints[0] < len(d.Constraints) {
			i := be.Constraints[0]
			c.addAt(d.Constraints[i].Line, fmt.Sprintf("%s.constraints.%d", dp, i), "%v", err)
			return
		}
		c.add(dp+".constraints", "%v", err)
		return
	}
	d.Analysis = an
}

// column returns t's column name or reports it.
func (c *checker) tableColumn(line int, path string, t *Table, name string) *Column {
	col := t.Column(name)
	if col == nil {
		known := append([]string(nil), t.ColumnNames...)
		sort.Strings(known)
		c.addAt(line, path, "column %q is not declared in table %s (declared: %s)", name, t.Name, strings.Join(known, ", "))
		return nil
	}
	if strings.EqualFold(name, t.Unit) {
		c.addAt(line, path, "column %q is the privacy unit, not an attribute of the tuple", name)
		return nil
	}
	return col
}

// finiteDomain reports whether col has a domain the load-time analysis can
// enumerate (values or range, not query).
func (c *checker) finiteDomain(line int, path string, col *Column, why string) bool {
	if col.Domain == nil || len(col.Domain.Resolved) == 0 {
		c.addAt(line, path, "column %s needs a domain with values or range (%s)", col.Name, why)
		return false
	}
	return true
}

func (c *checker) checkSecrets(sp string, s *Secrets, t *Table) bool {
	ok := true
	switch s.Kind {
	case SecretsFull, SecretsAttribute:
	case SecretsPartition:
		switch {
		case len(s.Columns) > 0 && (s.Column != "" || s.Buckets != nil):
			c.addAt(s.Line, sp+".partition", "give either columns: [...] or column with buckets, not both")
			return false
		case len(s.Columns) > 0:
			seen := map[string]bool{}
			for i, cn := range s.Columns {
				s.Columns[i] = strings.ToLower(cn)
				if seen[s.Columns[i]] {
					c.addAt(s.Line, sp+".partition.columns", "column %q is listed twice", cn)
					ok = false
				}
				seen[s.Columns[i]] = true
				ok = c.tableColumn(s.Line, sp+".partition.columns", t, cn) != nil && ok
			}
		case s.Column != "":
			s.Column = strings.ToLower(s.Column)
			col := c.tableColumn(s.Line, sp+".partition.column", t, s.Column)
			if col == nil {
				return false
			}
			ok = c.checkBuckets(sp+".partition.buckets", s, col)
		default:
			c.addAt(s.Line, sp+".partition", "give columns: [...] (cells agree on those columns) or column: c with buckets")
			return false
		}
	case SecretsDistance:
		if s.Column == "" {
			c.addAt(s.Line, sp+".distance.column", "distance secrets need column: the ordinal column whose value is protected up to θ")
			ok = false
		} else {
			s.Column = strings.ToLower(s.Column)
			if col := c.tableColumn(s.Line, sp+".distance.column", t, s.Column); col == nil {
				ok = false
			} else if col.Type != TypeInteger && col.Type != TypeReal {
				c.addAt(s.Line, sp+".distance.column", "distance secrets need an integer or real column; %s is %s", s.Column, col.Type)
				ok = false
			}
		}
		if !finite(s.Theta) || s.Theta <= 0 {
			c.addAt(s.Line, sp+".distance.theta", "theta must be a positive number (values at most θ apart are indistinguishable)")
			ok = false
		}
	default:
		c.addAt(s.Line, sp, "unknown secrets kind %q", s.Kind)
		ok = false
	}
	return ok
}

func (c *checker) checkBuckets(bp string, s *Secrets, col *Column) bool {
	if s.BucketWidth > 0 && len(s.Buckets) == 0 {
		if col.Type != TypeInteger || col.Domain == nil || len(col.Domain.Range) != 2 {
			c.addAt(s.Line, bp, "buckets: %d (a width) needs an integer column with domain: {range: [lo, hi]}; otherwise list the buckets", s.BucketWidth)
			return false
		}
		lo, hi := col.Domain.Range[0], col.Domain.Range[1]
		for a := lo; a <= hi; a += s.BucketWidth {
			b := min(a+s.BucketWidth-1, hi)
			s.Buckets = append(s.Buckets, []any{int(a), int(b)})
			if b == hi {
				break
			}
		}
	}
	if len(s.Buckets) == 0 {
		c.addAt(s.Line, bp, "a bucketed partition needs buckets: a list of [lo, hi] ranges (number column) or value lists (text column)")
		return false
	}
	numeric := col.Type == TypeInteger || col.Type == TypeReal
	var ranges [][2]float64
	seen := map[string]int{}
	for i, b := range s.Buckets {
		if numeric {
			lo, ok1 := asFloat(b, 0)
			hi, ok2 := asFloat(b, 1)
			if len(b) != 2 || !ok1 || !ok2 || lo > hi {
				c.addAt(s.Line, fmt.Sprintf("%s.%d", bp, i), "a bucket of number column %s is an inclusive range [lo, hi] with lo <= hi", col.Name)
				return false
			}
			for j, r := range ranges {
				if lo <= r[1] && r[0] <= hi {
					c.addAt(s.Line, fmt.Sprintf("%s.%d", bp, i), "bucket [%v, %v] overlaps bucket %d; buckets are the disjoint cells of a partition", lo, hi, j)
					return false
				}
			}
			ranges = append(ranges, [2]float64{lo, hi})
			continue
		}
		for _, raw := range b {
			v, why := convertValue(raw, col.Type)
			if why != "" {
				c.addAt(s.Line, fmt.Sprintf("%s.%d", bp, i), "%s", why)
				return false
			}
			if j, dup := seen[v.SQL()]; dup {
				c.addAt(s.Line, fmt.Sprintf("%s.%d", bp, i), "value %s is in buckets %d and %d; buckets are disjoint", v.SQL(), j, i)
				return false
			}
			seen[v.SQL()] = i
		}
	}
	return true
}

func asFloat(b []any, i int) (float64, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch x := b[i].(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, finite(x)
	}
	return 0, false
}

func (c *checker) checkConstraint(cp string, ct *Constraint, t *Table) bool {
	const why = "the proxy analyses published constraints over the declared domains at load"
	ok := true
	switch ct.Kind {
	case ConstraintTotal:
	case ConstraintMarginal, ConstraintRowsAndColumns:
		if len(ct.Columns) == 0 {
			c.addAt(ct.Line, cp, "%s needs at least one column", ct.Kind)
			return false
		}
		if ct.Kind == ConstraintRowsAndColumns && len(ct.Columns) != 2 {
			c.addAt(ct.Line, cp, "rows_and_columns names exactly two columns [a, b] (the row and column sums of the a×b table), not %d", len(ct.Columns))
			return false
		}
		seen := map[string]bool{}
		for _, cn := range ct.Columns {
			if seen[cn] {
				c.addAt(ct.Line, cp, "column %q is listed twice", cn)
				ok = false
				continue
			}
			seen[cn] = true
			col := c.tableColumn(ct.Line, cp, t, cn)
			ok = col != nil && c.finiteDomain(ct.Line, cp, col, why) && ok
		}
	case ConstraintCount:
		seen := map[string]bool{}
		for _, cond := range ct.Count {
			if seen[cond.Column] {
				c.addAt(cond.Line, cp+".count."+cond.Column, "column %q is given twice; combine its values into one list", cond.Column)
				ok = false
				continue
			}
			seen[cond.Column] = true
			col := c.tableColumn(cond.Line, cp+".count."+cond.Column, t, cond.Column)
			if col == nil || !c.finiteDomain(cond.Line, cp+".count."+cond.Column, col, why) {
				ok = false
				continue
			}
			if cond.Range != nil {
				if col.Type != TypeInteger && col.Type != TypeReal {
					c.addAt(cond.Line, cp+".count."+cond.Column, "range needs an integer or real column; %s is %s (list its values instead)", col.Name, col.Type)
					ok = false
				} else if len(cond.Range) != 2 || !finite(cond.Range[0]) || !finite(cond.Range[1]) || cond.Range[0] > cond.Range[1] {
					c.addAt(cond.Line, cp+".count."+cond.Column, "range is two finite numbers [lo, hi] with lo <= hi")
					ok = false
				}
				continue
			}
			if len(cond.Values) == 0 {
				c.addAt(cond.Line, cp+".count."+cond.Column, "give at least one value")
				ok = false
			}
			for _, raw := range cond.Values {
				v, why := convertValue(raw, col.Type)
				if why != "" {
					c.addAt(cond.Line, cp+".count."+cond.Column, "%s", why)
					ok = false
					continue
				}
				if !inDomain(col, v.SQL()) {
					c.addAt(cond.Line, cp+".count."+cond.Column, "value %s is not in the declared domain of %s", v.SQL(), col.Name)
					ok = false
				}
			}
		}
	default:
		c.addAt(ct.Line, cp, "unknown constraint kind %q", ct.Kind)
		ok = false
	}
	return ok
}

func inDomain(col *Column, sql string) bool {
	for _, v := range col.Domain.Resolved {
		if v.SQL() == sql {
			return true
		}
	}
	return false
}

// BucketRanges returns the inclusive [lo, hi] ranges of a bucketed
// partition of a number column (ok false for other secrets).
func (s *Secrets) BucketRanges() ([][2]float64, bool) {
	if s == nil || s.Kind != SecretsPartition || s.Column == "" || len(s.Buckets) == 0 {
		return nil, false
	}
	var out [][2]float64
	for _, b := range s.Buckets {
		lo, ok1 := asFloat(b, 0)
		hi, ok2 := asFloat(b, 1)
		if len(b) != 2 || !ok1 || !ok2 {
			return nil, false
		}
		out = append(out, [2]float64{lo, hi})
	}
	return out, true
}
