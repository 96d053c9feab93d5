package policies

import (
	"math"
	"strconv"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// MaxRowsPerUnitLimit bounds k: noise grows linearly with it, and a k this
// large almost always means the DBA meant something else (a row count).
const MaxRowsPerUnitLimit = 10000

func (p *Policy) checkDatasets(c *checker) {
	if len(p.Datasets) == 0 {
		c.add("datasets", "no datasets are declared; add one under datasets (see policies/examples/census.yaml)")
	}
	owner := map[string]string{} // table name -> path of its first declaration
	for _, dn := range p.DatasetNames {
		d := p.Datasets[dn]
		dp := joinPath("datasets", dn)
		c.checkIdent(dp, "dataset name", dn)
		switch d.Model {
		case ModelDP:
			c.checkNoModelFields(dp, d)
		case ModelBlowfish, ModelInduced:
			c.checkBlowfish(dp, d)
		case ModelDDP:
			c.checkDDP(dp, d)
		default:
			c.add(dp+".model", "unknown model %q; use dp, blowfish, induced or ddp", d.Model)
		}
		c.checkSynopses(dp, d)
		switch d.Neighbors {
		case NeighborsUnbounded, NeighborsBounded:
		default:
			c.add(dp+".neighbors", "neighbors must be unbounded (add or remove one unit) or bounded (change one unit), not %q", d.Neighbors)
		}
		if len(d.Tables) == 0 {
			c.add(dp, "dataset declares no tables; add at least one private table under tables")
			continue
		}
		private := false
		for _, tn := range d.TableNames {
			t := d.Tables[tn]
			tp := dp + ".tables." + tn
			if first, dup := owner[tn]; dup {
				c.add(tp, "table %q is already declared at %s; a table belongs to exactly one dataset, so remove one of them", tn, p.Position(first))
			} else {
				owner[tn] = tp
			}
			private = private || !t.Public
			c.checkTable(tp, t)
		}
		if !private {
			c.add(dp+".tables", "dataset has no private table (all are public: true); a dataset exists to protect the units of a private table")
		}
		if d.Model == ModelBlowfish || d.Model == ModelInduced {
			c.checkConstraintSystem(dp, d) // needs the resolved column domains
		}
		d.Fingerprint = d.fingerprint()
	}
}

func (c *checker) checkTable(tp string, t *Table) {
	c.checkIdent(tp, "table name", t.Name)
	if t.Schema != "" {
		c.checkIdent(tp+".schema", "schema", t.Schema)
	}
	if t.Public {
		if t.Unit != "" || c.p.has(tp+".unit") {
			c.add(tp+".unit", "a public table has no privacy unit; remove unit (or remove public: true if the table holds private data)")
		}
		if t.MaxRowsPerUnit != 0 || c.p.has(tp+".max_rows_per_unit") {
			c.add(tp+".max_rows_per_unit", "max_rows_per_unit only applies to private tables; remove it")
		}
		if t.Key != "" && c.checkIdent(tp+".key", "key column", t.Key) && len(t.Columns) > 0 && t.Column(t.Key) == nil {
			c.add(tp+".key", "key %q is not one of the listed columns; add it under columns or fix its name", t.Key)
		}
	} else {
		if t.Unit == "" {
			c.add(tp+".unit", "a private table needs unit: the column that identifies the individual to protect (e.g. person_id); or set public: true if the table holds no private data")
		} else {
			c.checkIdent(tp+".unit", "unit column", t.Unit)
		}
		if t.Key != "" {
			c.add(tp+".key", "key is the join key of a public table; a private table is joined on the public table's key, so remove it here")
		}
		switch k := t.MaxRowsPerUnit; {
		case k < 1:
			c.add(tp+".max_rows_per_unit", "max_rows_per_unit must be at least 1 (the most rows one unit may contribute), not %d", k)
		case k > MaxRowsPerUnitLimit:
			c.add(tp+".max_rows_per_unit", "max_rows_per_unit %d is absurdly large (noise grows linearly with it); use at most %d, a typical number of rows per unit", k, MaxRowsPerUnitLimit)
		}
	}
	for _, cn := range t.ColumnNames {
		c.checkColumn(tp+".columns."+cn, t.Columns[cn])
	}
}

// typeHints maps common SQL type names to the policy's four types.
var typeHints = map[string]string{
	"int": TypeInteger, "bigint": TypeInteger, "smallint": TypeInteger, "int4": TypeInteger, "int8": TypeInteger,
	"float": TypeReal, "double": TypeReal, "numeric": TypeReal, "decimal": TypeReal, "float8": TypeReal,
	"string": TypeText, "varchar": TypeText, "char": TypeText,
	"bool":     TypeBoolean,
	"datetime": TypeTimestamp, "timestamp without time zone": TypeTimestamp,
	"timestamp with time zone": TypeTimestampTZ, "time": TypeTimestamp,
}

// TimeKind returns the ir kind of a date or time column type.
func TimeKind(typ string) (ir.Kind, bool) {
	switch typ {
	case TypeDate:
		return ir.KindDate, true
	case TypeTimestamp:
		return ir.KindTimestamp, true
	case TypeTimestampTZ:
		return ir.KindTimestampTZ, true
	}
	return ir.KindNull, false
}

// maxExactInt is 2^53: integers beyond it are not exact in float64, in
// which bounds travel.
const maxExactInt = 1 << 53

func (c *checker) checkColumn(cp string, col *Column) {
	c.checkIdent(cp, "column name", col.Name)
	switch col.Type {
	case TypeInteger, TypeReal, TypeText, TypeBoolean, TypeDate, TypeTimestamp, TypeTimestampTZ:
	case "":
		c.add(cp+".type", "type is required: integer, real, text, boolean, date, timestamp or timestamptz")
	default:
		if h, ok := typeHints[strings.ToLower(col.Type)]; ok {
			c.add(cp+".type", "unknown type %q; write %s", col.Type, h)
		} else {
			c.add(cp+".type", "unknown type %q; use integer, real, text, boolean, date, timestamp or timestamptz", col.Type)
		}
	}
	if col.RawBounds != nil && !c.resolveBounds(cp+".bounds", col) {
		return
	}
	if _, isTime := TimeKind(col.Type); isTime {
		if len(col.Bounds) > 0 {
			c.add(cp+".bounds", "bounds of a %s column are two ISO strings, e.g. ['2010-01-01', '2011-01-01']", col.Type)
		}
	} else if len(col.Bounds) > 0 || c.p.has(cp+".bounds") {
		c.checkBounds(cp+".bounds", col)
	}
	if col.Domain != nil {
		c.resolveDomain(cp+".domain", col)
	}
}

// resolveBounds reads the bounds as written into Bounds (numbers) or
// TimeBounds (ISO strings of a date or time column), reporting what does
// not fit the column's type. It returns false after a problem.
func (c *checker) resolveBounds(bp string, col *Column) bool {
	kind, isTime := TimeKind(col.Type)
	if !isTime {
		col.Bounds = nil
		for i, b := range col.RawBounds {
			if !b.IsNumber {
				what := "a list or mapping"
				if !b.NotScalar {
					what = strconv.Quote(b.Text)
				}
				hint := ""
				if _, err := ir.ParseTime(ir.KindTimestamp, b.Text); err == nil && !b.NotScalar {
					hint = "; for a date or time column write type: date, timestamp or timestamptz"
				}
				c.add(bp+"."+strconv.Itoa(i), "bounds of a %s column must be numbers, not %s%s", orUntyped(col.Type), what, hint)
				return false
			}
			col.Bounds = append(col.Bounds, b.Num)
		}
		return true
	}
	if len(col.RawBounds) != 2 {
		c.add(bp, "bounds must be two %s values ['lo', 'hi'], not %d", col.Type, len(col.RawBounds))
		return false
	}
	col.TimeBounds = nil
	for i, b := range col.RawBounds {
		if b.IsNumber || b.NotScalar {
			c.add(bp+"."+strconv.Itoa(i), "bounds of a %s column are ISO strings such as %s, not numbers or lists", col.Type, example(kind))
			return false
		}
		v, err := ir.ParseTime(kind, b.Text)
		if err != nil {
			c.add(bp+"."+strconv.Itoa(i), "%q is not a valid %s (%v); write it as %s, years 1 to 9999", b.Text, col.Type, err, example(kind))
			return false
		}
		col.TimeBounds = append(col.TimeBounds, v)
	}
	if lo, hi := col.TimeBounds[0], col.TimeBounds[1]; lo.Int > hi.Int {
		c.add(bp, "bounds are reversed; write ['%s', '%s']", hi.Text(), lo.Text())
		return false
	}
	return true
}

func orUntyped(t string) string {
	if t == "" {
		return "numeric"
	}
	return t
}

func example(k ir.Kind) string {
	switch k {
	case ir.KindDate:
		return "'2010-01-01'"
	case ir.KindTimestamp:
		return "'2010-01-01 00:00:00'"
	}
	return "'2010-01-01 00:00:00+00'"
}

func (c *checker) checkBounds(bp string, col *Column) {
	b := col.Bounds
	switch {
	case col.Type == TypeText || col.Type == TypeBoolean:
		c.add(bp, "bounds only apply to integer, real, date and time columns (they clamp SUM, AVG and computed values); remove them from this %s column", col.Type)
	case len(b) != 2:
		c.add(bp, "bounds must be two numbers [lo, hi], not %d", len(b))
	case !finite(b[0]) || !finite(b[1]):
		c.add(bp, "bounds must be finite numbers")
	case b[0] > b[1]:
		c.add(bp, "bounds are reversed; write [%v, %v]", b[1], b[0])
	case col.Type == TypeInteger && (b[0] != math.Trunc(b[0]) || b[1] != math.Trunc(b[1])):
		c.add(bp, "bounds of an integer column must be whole numbers, not [%v, %v]", b[0], b[1])
	case col.Type == TypeInteger && (math.Abs(b[0]) > maxExactInt || math.Abs(b[1]) > maxExactInt):
		c.add(bp, "bounds of an integer column must be within ±2^53 to be exact")
	}
}
