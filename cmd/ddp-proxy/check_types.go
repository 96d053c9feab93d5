package main

import (
	"fmt"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// backendTypeFits reports whether a backend column of type backendType
// (PostgreSQL's or MySQL's information_schema data_type, SQLite's
// declared type) can hold the values of a column declared with the
// policy type declared, and if not, which backend types would. The
// proxy compares, clamps and computes with the declared type; a text
// column declared integer, or a timestamp declared date, would make the
// backend fail or compare differently, and only on some rows.
func backendTypeFits(driver, declared, backendType string) (bool, string) {
	bt := strings.ToLower(strings.TrimSpace(backendType))
	if i := strings.IndexByte(bt, '('); i >= 0 {
		bt = strings.TrimSpace(bt[:i]) // varchar(20), datetime(6)
	}
	bt = strings.TrimSuffix(bt, " unsigned")
	want := map[string]map[string][]string{
		"postgres": {
			policies.TypeInteger:     {"bigint", "integer", "smallint"},
			policies.TypeReal:        {"double precision", "real", "numeric", "bigint", "integer", "smallint"},
			policies.TypeText:        {"text", "character varying", "character", "name", "citext"},
			policies.TypeBoolean:     {"boolean"},
			policies.TypeDate:        {"date"},
			policies.TypeTimestamp:   {"timestamp without time zone"},
			policies.TypeTimestampTZ: {"timestamp with time zone"},
		},
		"mysql": {
			policies.TypeInteger:     {"bigint", "int", "integer", "mediumint", "smallint", "tinyint"},
			policies.TypeReal:        {"double", "float", "decimal", "bigint", "int", "integer", "mediumint", "smallint", "tinyint"},
			policies.TypeText:        {"varchar", "char", "text", "tinytext", "mediumtext", "longtext", "enum"},
			policies.TypeBoolean:     {"tinyint", "bit"},
			policies.TypeDate:        {"date"},
			policies.TypeTimestamp:   {"datetime"},
			policies.TypeTimestampTZ: {"timestamp"},
		},
	}
	if driver == "sqlite" {
		return sqliteTypeFits(declared, bt)
	}
	allowed, ok := want[driver][declared]
	if !ok {
		return true, "" // an unknown driver or type: nothing to compare
	}
	for _, a := range allowed {
		if bt == a {
			return true, ""
		}
	}
	return false, strings.Join(allowed, ", ")
}

// sqliteTypeFits reads a declared SQLite type by its affinity (SQLite's
// rules, section 3.1 of its datatype page); dates and times are stored
// as text (see backends/sqlite), in a column declared DATE, DATETIME,
// TIMESTAMP or TEXT.
func sqliteTypeFits(declared, bt string) (bool, string) {
	has := func(s ...string) bool {
		for _, x := range s {
			if strings.Contains(bt, x) {
				return true
			}
		}
		return false
	}
	switch declared {
	case policies.TypeInteger:
		return has("int"), "INTEGER"
	case policies.TypeReal:
		return has("int", "real", "floa", "doub", "numeric", "decimal"), "REAL"
	case policies.TypeText:
		return has("char", "clob", "text"), "TEXT"
	case policies.TypeBoolean:
		return has("bool", "int"), "BOOLEAN or INTEGER"
	case policies.TypeDate:
		return bt == "date" || has("text"), "DATE (or TEXT), holding YYYY-MM-DD"
	case policies.TypeTimestamp, policies.TypeTimestampTZ:
		return bt == "timestamp" || bt == "datetime" || has("text"), "TIMESTAMP (or TEXT), holding YYYY-MM-DD HH:MM:SS[.ffffff]"
	}
	return true, ""
}

// unboundedNotes lists the numeric and date columns declared without
// bounds, saying what that means, as the planner decides it
// (planner.ColumnClamp, planner.SumClamp): not an error (comparisons and
// counts work), but without a static domain whose extent serves as bounds
// the analyst will be refused sums, averages and arithmetic. A column
// whose domain's extent serves is noted too: values outside it are
// clamped to it.
func unboundedNotes(pol *policies.Policy) []string {
	var out []string
	for _, dn := range pol.DatasetNames {
		ds := pol.Datasets[dn]
		for _, tn := range ds.TableNames {
			t := ds.Tables[strings.ToLower(tn)]
			if t == nil || t.Public {
				continue
			}
			for _, cn := range t.ColumnNames {
				c := t.Columns[cn]
				path := "datasets." + dn + ".tables." + t.Name + ".columns." + cn
				lo, hi, computable := planner.ColumnClamp(c)
				var what string
				switch c.Type {
				case policies.TypeInteger, policies.TypeReal:
					_, _, summable := planner.SumClamp(c)
					switch {
					case c.HasBounds():
						continue
					case summable:
						what = fmt.Sprintf("its domain's extent [%s, %s] serves as bounds: SUM, AVG and arithmetic clamp values to it", lo.Text(), hi.Text())
					case computable:
						what = "SUM and AVG of it are refused (its domain's extent is beyond ±2^53; comparisons, counts and arithmetic work); declare bounds: [lo, hi]"
					default:
						what = "SUM and AVG of it are refused, and so is arithmetic with it (x + 1, x / 10, abs(x)) (comparisons and counts work); declare bounds: [lo, hi]"
					}
				case policies.TypeDate, policies.TypeTimestamp, policies.TypeTimestampTZ:
					if computable {
						continue
					}
					what = "date_trunc, extract and intervals on it are refused (comparisons and counts work); declare bounds: [lo, hi]"
				default:
					continue
				}
				out = append(out, fmt.Sprintf("note: %s: %s: %s column without bounds: %s", pol.Position(path), path, c.Type, what))
			}
		}
	}
	return out
}
