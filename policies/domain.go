package policies

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// MaxRangeValues bounds an expanded range domain: every GROUP BY over the
// column outputs (and noises) one row per value, and a huge domain is
// almost always a mistake (a continuous column grouped raw).
const MaxRangeValues = 100000

// resolveDomain checks col.Domain and sets Domain.Resolved from values or
// range. Query domains stay unresolved: the planner runs them on the
// backend.
func (c *checker) resolveDomain(dp string, col *Column) {
	d := col.Domain
	d.Resolved = nil
	var given []string
	if len(d.Values) > 0 || c.p.has(dp+".values") {
		given = append(given, "values")
	}
	if len(d.Range) > 0 || c.p.has(dp+".range") {
		given = append(given, "range")
	}
	if d.Query != "" || c.p.has(dp+".query") {
		given = append(given, "query")
	}
	switch len(given) {
	case 0:
		c.add(dp, "domain is empty; give exactly one of values, range or query")
		return
	case 1:
	default:
		c.add(dp, "domain gives %s; give exactly one of values, range or query", strings.Join(given, " and "))
		return
	}
	switch given[0] {
	case "values":
		c.resolveValues(dp+".values", col)
	case "range":
		c.resolveRange(dp+".range", col)
	case "query":
		c.checkDomainQuery(dp+".query", d.Query)
	}
}

func (c *checker) resolveValues(vp string, col *Column) {
	d := col.Domain
	if len(d.Values) == 0 {
		c.add(vp, "values is empty; list the values the column can take")
		return
	}
	out := make([]ir.Value, 0, len(d.Values))
	first := map[ir.Value]int{}
	ok := true
	for i, raw := range d.Values {
		ip := vp + "." + strconv.Itoa(i)
		v, why := convertValue(raw, col.Type)
		if why != "" {
			c.add(ip, "%s", why)
			ok = false
			continue
		}
		if j, dup := first[v]; dup {
			c.add(ip, "value %s is listed twice (also item %d); remove one", v.SQL(), j)
			ok = false
			continue
		}
		first[v] = i
		out = append(out, v)
	}
	if ok {
		d.Resolved = out
	}
}

// convertValue converts a YAML-decoded domain value to the column's type,
// or says why it cannot. Only lossless conversions are made: an integer
// column refuses 2.5 and a text column refuses an unquoted 7 (YAML read it
// as a number; the DBA must say which is meant).
func convertValue(raw any, typ string) (ir.Value, string) {
	if raw == nil {
		return ir.Value{}, "null is not a domain value; NULL is never a GROUP BY key from a domain, so remove it"
	}
	switch typ {
	case TypeInteger:
		switch x := raw.(type) {
		case int:
			return ir.Int(int64(x)), ""
		case int64:
			return ir.Int(x), ""
		case uint64:
			if x <= math.MaxInt64 {
				return ir.Int(int64(x)), ""
			}
		}
		return ir.Value{}, fmt.Sprintf("%s is not an integer, but the column's type is integer", show(raw))
	case TypeReal:
		switch x := raw.(type) {
		case int:
			return ir.Float(float64(x)), ""
		case int64:
			return ir.Float(float64(x)), ""
		case uint64:
			return ir.Float(float64(x)), ""
		case float64:
			if finite(x) {
				return ir.Float(x), ""
			}
			return ir.Value{}, fmt.Sprintf("%v is not a finite number", x)
		}
		return ir.Value{}, fmt.Sprintf("%s is not a number, but the column's type is real", show(raw))
	case TypeText:
		if s, ok := raw.(string); ok {
			return ir.String(s), ""
		}
		return ir.Value{}, fmt.Sprintf("%s is not text, but the column's type is text; quote it: \"%v\"", show(raw), raw)
	case TypeBoolean:
		if b, ok := raw.(bool); ok {
			return ir.Bool(b), ""
		}
		return ir.Value{}, fmt.Sprintf("%s is not true or false, but the column's type is boolean", show(raw))
	case TypeDate, TypeTimestamp, TypeTimestampTZ:
		k, _ := TimeKind(typ)
		switch x := raw.(type) {
		case string:
			v, err := ir.ParseTime(k, x)
			if err != nil {
				return ir.Value{}, fmt.Sprintf("%s is not a valid %s (%v); write it as %s", show(raw), typ, err, example(k))
			}
			return v, ""
		case time.Time:
			// YAML reads an unquoted 2010-01-01 as a timestamp.
			if x.Year() < 1 || x.Year() > 9999 {
				return ir.Value{}, fmt.Sprintf("%v is outside the years 1 to 9999", x)
			}
			v := ir.TimeValue(k, x)
			if k == ir.KindDate && !v.GoTime().Equal(x.UTC()) {
				return ir.Value{}, fmt.Sprintf("%v is not a date (it has a time of day), but the column's type is date", x)
			}
			return v, ""
		}
		return ir.Value{}, fmt.Sprintf("%s is not a %s; write it as %s", show(raw), typ, example(k))
	}
	return ir.Value{}, fmt.Sprintf("cannot check %s against the column's type %q; fix the type first", show(raw), typ)
}

func show(raw any) string {
	if s, ok := raw.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%v", raw)
}

func (c *checker) resolveRange(rp string, col *Column) {
	r := col.Domain.Range
	switch {
	case col.Type != TypeInteger:
		c.add(rp, "range only applies to integer columns; list the values of this %s column under values instead", col.Type)
	case len(r) != 2:
		c.add(rp, "range must be two integers [lo, hi], not %d", len(r))
	case r[0] > r[1]:
		c.add(rp, "range is reversed; write [%d, %d]", r[1], r[0])
	case float64(r[1])-float64(r[0]) >= MaxRangeValues:
		c.add(rp, "range [%d, %d] has more than %d values; group by a coarser column (e.g. a bucketed one) or use a query domain over a public table", r[0], r[1], MaxRangeValues)
	default:
		out := make([]ir.Value, 0, r[1]-r[0]+1)
		for v := r[0]; ; v++ {
			out = append(out, ir.Int(v))
			if v == r[1] {
				break
			}
		}
		col.Domain.Resolved = out
	}
}

// checkDomainQuery does the cheap checks only; the planner parses the
// query and checks that it reads public tables and returns one column.
func (c *checker) checkDomainQuery(qp, q string) {
	q = strings.TrimSpace(q)
	word := q
	if i := strings.IndexFunc(q, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z') }); i >= 0 {
		word = q[:i]
	}
	if !strings.EqualFold(word, "select") {
		c.add(qp, "a domain query must be a SELECT over a public table returning one column, e.g. SELECT code FROM zip_codes")
		return
	}
	body := strings.TrimSpace(strings.TrimSuffix(q, ";"))
	if strings.Contains(body, ";") {
		c.add(qp, "a domain query must be a single SELECT; remove the ; inside it")
	}
}
