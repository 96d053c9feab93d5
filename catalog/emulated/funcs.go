package emulated

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ncruces/go-sqlite3"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// registerFunctions installs the PostgreSQL functions the rewritten
// queries call. They read only the catalog's own maps and the session's
// Env; none touches the backend.
func (c *Catalog) registerFunctions() error {
	det := sqlite3.DETERMINISTIC | sqlite3.INNOCUOUS
	scalar := map[string]struct {
		n    int
		flag sqlite3.FunctionFlag
		fn   sqlite3.ScalarFunction
	}{
		"pg_regex":             {3, det, c.fnRegex},
		"pg_like":              {-1, det, c.fnLike},
		"format_type":          {2, det, fnFormatType},
		"pg_table_is_visible":  {1, det, c.fnTableIsVisible},
		"pg_true":              {-1, det, func(ctx sqlite3.Context, _ ...sqlite3.Value) { ctx.ResultBool(true) }},
		"pg_false":             {-1, det, func(ctx sqlite3.Context, _ ...sqlite3.Value) { ctx.ResultBool(false) }},
		"pg_null":              {-1, det, func(ctx sqlite3.Context, _ ...sqlite3.Value) { ctx.ResultNull() }},
		"pg_zero":              {-1, det, func(ctx sqlite3.Context, _ ...sqlite3.Value) { ctx.ResultInt64(0) }},
		"pg_empty":             {-1, det, func(ctx sqlite3.Context, _ ...sqlite3.Value) { ctx.ResultText("") }},
		"pg_get_userbyid":      {1, det, fnUserByID},
		"pg_encoding_to_char":  {1, det, fnEncodingToChar},
		"pg_char_to_encoding":  {1, det, fnCharToEncoding},
		"array_to_string":      {-1, det, fnArrayToString},
		"array_upper":          {2, det, fnArrayUpper},
		"array_lower":          {2, det, fnArrayLower},
		"array_length":         {2, det, fnArrayUpper},
		"cardinality":          {1, det, fnArrayUpper},
		"array_position":       {2, det, fnArrayPosition},
		"current_database":     {0, 0, c.fnCurrentDatabase},
		"current_schema":       {0, det, func(ctx sqlite3.Context, _ ...sqlite3.Value) { ctx.ResultText("public") }},
		"current_schemas":      {1, det, fnCurrentSchemas},
		"pg_current_user":      {0, 0, c.fnCurrentUser},
		"current_setting":      {-1, 0, c.fnCurrentSetting},
		"pg_version":           {0, 0, c.fnVersion},
		"quote_ident":          {1, det, func(ctx sqlite3.Context, a ...sqlite3.Value) { textFn(ctx, a[0], quoteIdentIfNeeded) }},
		"pg_left":              {2, det, fnLeft},
		"pg_right":             {2, det, fnRight},
		"split_part":           {3, det, fnSplitPart},
		"pg_position":          {2, det, fnPosition},
		"regexp_replace":       {-1, det, c.fnRegexpReplace},
		"to_regclass":          {1, 0, c.fnToRegclass},
		"pg_json_array":        {-1, det, fnJSONArray},
		"pg_array_elem":        {2, det, fnArrayElem},
		"pg_array_from_json":   {1, det, fnArrayFromJSON},
		"pg_field":             {2, det, fnField},
		"pg_series_json":       {-1, det, c.fnSeriesJSON},
		"pg_subscripts_json":   {2, det, fnSubscriptsJSON},
		"pg_regclass":          {1, 0, c.regLookup("regclass", false)},
		"pg_regclass_name":     {1, 0, c.regLookup("regclass", true)},
		"pg_regtype":           {1, 0, c.regLookup("regtype", false)},
		"pg_regtype_name":      {1, 0, c.regLookup("regtype", true)},
		"pg_regnamespace":      {1, 0, c.regLookup("regnamespace", false)},
		"pg_regnamespace_name": {1, 0, c.regLookup("regnamespace", true)},
		"pg_regrole":           {1, 0, c.regLookup("regrole", false)},
		"pg_regrole_name":      {1, 0, c.regLookup("regrole", true)},
		"pg_cast_text":         {1, det, fnCastText},
		"pg_cast_int":          {1, det, c.fnCastInt},
		"pg_cast_float":        {1, det, c.fnCastFloat},
		"pg_cast_bool":         {1, det, c.fnCastBool},
		"pg_array_in":          {1, det, c.fnArrayIn},
		"pg_client_encoding":   {0, det, func(ctx sqlite3.Context, _ ...sqlite3.Value) { ctx.ResultText("UTF8") }},
		"pg_now":               {0, 0, c.fnNow(timestampTZLayout)},
		"pg_localtimestamp":    {0, 0, c.fnNow(timestampLayout)},
		"pg_current_date":      {0, 0, c.fnNow(dateLayout)},
		"pg_set_config":        {3, 0, c.fnSetConfig},
		"greatest":             {-1, det, func(ctx sqlite3.Context, a ...sqlite3.Value) { extreme(ctx, a, 1) }},
		"least":                {-1, det, func(ctx sqlite3.Context, a ...sqlite3.Value) { extreme(ctx, a, -1) }},
	}
	for srf := range setReturning {
		name := srf
		scalar["pg_srf_"+srf] = struct {
			n    int
			flag sqlite3.FunctionFlag
			fn   sqlite3.ScalarFunction
		}{-1, 0, func(ctx sqlite3.Context, _ ...sqlite3.Value) {
			c.raise(ctx, c.unavailable(fmt.Sprintf("the set-returning function %s() outside FROM", name)))
		}}
	}
	for name, f := range scalar {
		if err := c.conn.CreateFunction(name, f.n, f.flag, f.fn); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// raise reports err from inside a function; Query returns it as is.
func (c *Catalog) raise(ctx sqlite3.Context, err error) {
	if c.funcErr == nil {
		c.funcErr = err
	}
	ctx.ResultError(err)
}

func textFn(ctx sqlite3.Context, v sqlite3.Value, f func(string) string) {
	if v.Type() == sqlite3.NULL {
		ctx.ResultNull()
		return
	}
	ctx.ResultText(f(v.Text()))
}

func anyNull(a []sqlite3.Value) bool {
	for _, v := range a {
		if v.Type() == sqlite3.NULL {
			return true
		}
	}
	return false
}

// compileRegex compiles a PostgreSQL regular expression (the common ARE
// subset RE2 shares), caching it per statement.
func (c *Catalog) compileRegex(ctx sqlite3.Context, pat string, ci bool) (*regexp.Regexp, bool) {
	if ci {
		pat = "(?i)" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		c.raise(ctx, sqlerr.New(sqlerr.InvalidParameterValue, "invalid regular expression: %v", err))
		return nil, false
	}
	return re, true
}

func (c *Catalog) fnRegex(ctx sqlite3.Context, a ...sqlite3.Value) {
	if anyNull(a[:2]) {
		ctx.ResultNull()
		return
	}
	re, ok := c.compileRegex(ctx, a[1].Text(), a[2].Bool())
	if !ok {
		return
	}
	ctx.ResultBool(re.MatchString(a[0].Text()))
}

func (c *Catalog) fnRegexpReplace(ctx sqlite3.Context, a ...sqlite3.Value) {
	if len(a) < 3 || len(a) > 4 {
		c.raise(ctx, c.unavailable("regexp_replace with this many arguments"))
		return
	}
	if anyNull(a) {
		ctx.ResultNull()
		return
	}
	flags := ""
	if len(a) == 4 {
		flags = a[3].Text()
	}
	re, ok := c.compileRegex(ctx, a[1].Text(), strings.Contains(flags, "i"))
	if !ok {
		return
	}
	rep := regexp.MustCompile(`\\([0-9&])`).ReplaceAllStringFunc(strings.ReplaceAll(a[2].Text(), "$", "$$"), func(m string) string {
		if m[1] == '&' {
			return "${0}"
		}
		return "${" + m[1:] + "}"
	})
	if strings.Contains(flags, "g") {
		ctx.ResultText(re.ReplaceAllString(a[0].Text(), rep))
		return
	}
	s := a[0].Text()
	loc := re.FindStringSubmatchIndex(s)
	if loc == nil {
		ctx.ResultText(s)
		return
	}
	var out []byte
	out = re.ExpandString(out, rep, s, loc)
	ctx.ResultText(s[:loc[0]] + string(out) + s[loc[1]:])
}

// fnLike is PostgreSQL's LIKE: % and _ wildcards, backslash escapes by
// default (pgjdbc escapes _ in names as \_), case-sensitive unless ILIKE.
func (c *Catalog) fnLike(ctx sqlite3.Context, a ...sqlite3.Value) {
	if len(a) < 3 {
		ctx.ResultNull()
		return
	}
	if anyNull(a[:2]) {
		ctx.ResultNull()
		return
	}
	esc := `\`
	if len(a) == 4 {
		esc = a[3].Text()
	}
	s, pat := a[0].Text(), a[1].Text()
	if a[2].Bool() {
		s, pat = strings.ToLower(s), strings.ToLower(pat)
	}
	var b strings.Builder
	b.WriteString("(?s)^")
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case esc != "" && string(r) == esc && i+1 < len(rs):
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case r == '%':
			b.WriteString(".*")
		case r == '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		c.raise(ctx, sqlerr.New(sqlerr.InvalidParameterValue, "invalid LIKE pattern %q", a[1].Text()))
		return
	}
	ctx.ResultBool(re.MatchString(s))
}

func fnFormatType(ctx sqlite3.Context, a ...sqlite3.Value) {
	if a[0].Type() == sqlite3.NULL {
		ctx.ResultNull()
		return
	}
	mod := int64(-1)
	if a[1].Type() != sqlite3.NULL {
		mod = a[1].Int64()
	}
	ctx.ResultText(formatType(a[0].Int64(), mod))
}

func (c *Catalog) fnTableIsVisible(ctx sqlite3.Context, a ...sqlite3.Value) {
	if a[0].Type() == sqlite3.NULL {
		ctx.ResultNull()
		return
	}
	ns, ok := c.nsOfRel[a[0].Int64()]
	ctx.ResultBool(ok && (ns == nsPublic || ns == nsCatalog))
}

func fnUserByID(ctx sqlite3.Context, a ...sqlite3.Value) {
	if a[0].Type() == sqlite3.NULL {
		ctx.ResultNull()
		return
	}
	if a[0].Int64() == ownerOID {
		ctx.ResultText(Owner)
		return
	}
	ctx.ResultText(fmt.Sprintf("unknown (OID=%d)", a[0].Int64()))
}

var encodings = map[int64]string{0: "SQL_ASCII", 6: "UTF8"}

func fnEncodingToChar(ctx sqlite3.Context, a ...sqlite3.Value) {
	if a[0].Type() == sqlite3.NULL {
		ctx.ResultNull()
		return
	}
	ctx.ResultText(encodings[a[0].Int64()])
}

func fnCharToEncoding(ctx sqlite3.Context, a ...sqlite3.Value) {
	for k, v := range encodings {
		if strings.EqualFold(v, a[0].Text()) {
			ctx.ResultInt64(k)
			return
		}
	}
	ctx.ResultInt64(-1)
}

// jsonArray reads an array value: JSON text (how the catalog stores
// arrays) or PostgreSQL's array literal (how ARRAY[...] and ARRAY(...)
// produce them, so that they print as PostgreSQL prints them). ok is false
// for NULL or a non-array.
func jsonArray(v sqlite3.Value) ([]any, bool) {
	if v.Type() == sqlite3.NULL {
		return nil, false
	}
	s := strings.TrimSpace(v.Text())
	if strings.HasPrefix(s, "{") {
		xs, err := parsePGArray(s)
		return xs, err == nil
	}
	var xs []any
	if err := json.Unmarshal([]byte(s), &xs); err != nil {
		return nil, false
	}
	return xs, true
}

// parsePGArray parses a one-dimensional PostgreSQL array literal.
// Unquoted numbers become int64; unquoted NULL is nil.
func parsePGArray(s string) ([]any, error) {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, fmt.Errorf("malformed array literal")
	}
	body := s[1 : len(s)-1]
	var out []any
	if strings.TrimSpace(body) == "" {
		return []any{}, nil
	}
	for i := 0; i <= len(body); {
		for i < len(body) && body[i] == ' ' {
			i++
		}
		var item strings.Builder
		quoted := false
		if i < len(body) && body[i] == '"' {
			quoted = true
			i++
			for ; i < len(body) && body[i] != '"'; i++ {
				if body[i] == '\\' && i+1 < len(body) {
					i++
				}
				item.WriteByte(body[i])
			}
			if i >= len(body) {
				return nil, fmt.Errorf("malformed array literal")
			}
			i++
		} else {
			for ; i < len(body) && body[i] != ','; i++ {
				if body[i] == '{' || body[i] == '"' {
					return nil, fmt.Errorf("nested or malformed array literal")
				}
				if body[i] == '\\' && i+1 < len(body) {
					i++
				}
				item.WriteByte(body[i])
			}
		}
		for i < len(body) && body[i] == ' ' {
			i++
		}
		it := item.String()
		switch {
		case quoted:
			out = append(out, it)
		case strings.EqualFold(strings.TrimSpace(it), "NULL"):
			out = append(out, nil)
		default:
			it = strings.TrimSpace(it)
			if n, err := strconv.ParseInt(it, 10, 64); err == nil {
				out = append(out, n)
			} else {
				out = append(out, it)
			}
		}
		if i < len(body) && body[i] != ',' {
			return nil, fmt.Errorf("malformed array literal")
		}
		i++
	}
	return out, nil
}

// formatPGArray prints values as PostgreSQL's array literal.
func formatPGArray(xs []any) string {
	b, _ := json.Marshal(xs)
	return arrayOut(string(b), false)
}

func fnArrayFromJSON(ctx sqlite3.Context, a ...sqlite3.Value) {
	xs, ok := jsonArray(a[0])
	if !ok {
		ctx.ResultNull()
		return
	}
	ctx.ResultText(formatPGArray(xs))
}

func fnArrayToString(ctx sqlite3.Context, a ...sqlite3.Value) {
	if len(a) < 2 || anyNull(a[:2]) {
		ctx.ResultNull()
		return
	}
	xs, ok := jsonArray(a[0])
	if !ok {
		ctx.ResultNull()
		return
	}
	var parts []string
	for _, x := range xs {
		if x == nil {
			if len(a) > 2 && a[2].Type() != sqlite3.NULL {
				parts = append(parts, a[2].Text())
			}
			continue
		}
		parts = append(parts, fmt.Sprint(x))
	}
	ctx.ResultText(strings.Join(parts, a[1].Text()))
}

func fnArrayUpper(ctx sqlite3.Context, a ...sqlite3.Value) {
	xs, ok := jsonArray(a[0])
	if !ok || len(xs) == 0 {
		ctx.ResultNull()
		return
	}
	ctx.ResultInt64(int64(len(xs)))
}

func fnArrayLower(ctx sqlite3.Context, a ...sqlite3.Value) {
	xs, ok := jsonArray(a[0])
	if !ok || len(xs) == 0 {
		ctx.ResultNull()
		return
	}
	ctx.ResultInt64(1)
}

func fnArrayPosition(ctx sqlite3.Context, a ...sqlite3.Value) {
	xs, ok := jsonArray(a[0])
	if !ok || a[1].Type() == sqlite3.NULL {
		ctx.ResultNull()
		return
	}
	for i, x := range xs {
		if fmt.Sprint(x) == a[1].Text() {
			ctx.ResultInt64(int64(i + 1))
			return
		}
	}
	ctx.ResultNull()
}

func fnArrayElem(ctx sqlite3.Context, a ...sqlite3.Value) {
	xs, ok := jsonArray(a[0])
	if !ok || a[1].Type() == sqlite3.NULL {
		ctx.ResultNull()
		return
	}
	i := a[1].Int64()
	if i < 1 || i > int64(len(xs)) {
		ctx.ResultNull()
		return
	}
	resultAny(ctx, xs[i-1])
}

func resultAny(ctx sqlite3.Context, x any) {
	switch v := x.(type) {
	case nil:
		ctx.ResultNull()
	case float64:
		if v == float64(int64(v)) {
			ctx.ResultInt64(int64(v))
		} else {
			ctx.ResultFloat(v)
		}
	case bool:
		ctx.ResultBool(v)
	case string:
		ctx.ResultText(v)
	default:
		b, _ := json.Marshal(v)
		ctx.ResultText(string(b))
	}
}

func valueAny(v sqlite3.Value) any {
	switch v.Type() {
	case sqlite3.NULL:
		return nil
	case sqlite3.INTEGER:
		return v.Int64()
	case sqlite3.FLOAT:
		return v.Float()
	}
	return v.Text()
}

// fnJSONArray is ARRAY[...]: PostgreSQL's array literal of its arguments.
func fnJSONArray(ctx sqlite3.Context, a ...sqlite3.Value) {
	xs := make([]any, len(a))
	for i, v := range a {
		xs[i] = valueAny(v)
	}
	ctx.ResultText(formatPGArray(xs))
}

// fnSeriesJSON is generate_series(a, b[, step]) as a JSON array, for
// json_each in FROM. It refuses more than a million values.
func (c *Catalog) fnSeriesJSON(ctx sqlite3.Context, a ...sqlite3.Value) {
	if len(a) < 2 || len(a) > 3 {
		c.raise(ctx, c.unavailable("generate_series with this many arguments"))
		return
	}
	if anyNull(a) {
		ctx.ResultText("[]")
		return
	}
	lo, hi, step := a[0].Int64(), a[1].Int64(), int64(1)
	if len(a) == 3 {
		step = a[2].Int64()
	}
	// In float64: hi-lo overflows int64 for extreme bounds, and a Go loop
	// here cannot be interrupted by the query's deadline.
	if step == 0 || (float64(hi)-float64(lo))/float64(step) > 1_000_000 {
		c.raise(ctx, sqlerr.New(sqlerr.InvalidParameterValue, "generate_series: step size cannot equal zero or the series is too long"))
		return
	}
	xs := []int64{}
	for i := lo; step > 0 && i <= hi || step < 0 && i >= hi; i += step {
		xs = append(xs, i)
	}
	b, _ := json.Marshal(xs)
	ctx.ResultText(string(b))
}

func fnSubscriptsJSON(ctx sqlite3.Context, a ...sqlite3.Value) {
	xs, _ := jsonArray(a[0])
	out := make([]int, len(xs))
	for i := range out {
		out[i] = i + 1
	}
	b, _ := json.Marshal(out)
	ctx.ResultText(string(b))
}

func (c *Catalog) fnCurrentDatabase(ctx sqlite3.Context, _ ...sqlite3.Value) {
	if c.env.Database == "" {
		ctx.ResultText(defaultDBName)
		return
	}
	ctx.ResultText(c.env.Database)
}

func fnCurrentSchemas(ctx sqlite3.Context, a ...sqlite3.Value) {
	if a[0].Bool() {
		ctx.ResultText(`["pg_catalog","public"]`)
		return
	}
	ctx.ResultText(`["public"]`)
}

func (c *Catalog) fnCurrentUser(ctx sqlite3.Context, _ ...sqlite3.Value) {
	ctx.ResultText(c.env.User)
}

func (c *Catalog) fnCurrentSetting(ctx sqlite3.Context, a ...sqlite3.Value) {
	if len(a) == 0 || a[0].Type() == sqlite3.NULL {
		ctx.ResultNull()
		return
	}
	name := strings.ToLower(a[0].Text())
	if c.env.Setting != nil {
		if v, ok := c.env.Setting(name); ok {
			ctx.ResultText(v)
			return
		}
	}
	if name == "search_path" {
		ctx.ResultText(`"$user", public`)
		return
	}
	if len(a) > 1 && a[1].Bool() {
		ctx.ResultNull()
		return
	}
	c.raise(ctx, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name))
}

// PostgreSQL's output formats for the clock's types (DateStyle ISO); the
// session's time zone is UTC.
const (
	timestampTZLayout = "2006-01-02 15:04:05.999999-07"
	timestampLayout   = "2006-01-02 15:04:05.999999"
	dateLayout        = "2006-01-02"
)

// fnNow answers now(), current_timestamp and their kin with the time the
// query started (PostgreSQL's transaction time; one value per statement).
func (c *Catalog) fnNow(layout string) sqlite3.ScalarFunction {
	return func(ctx sqlite3.Context, _ ...sqlite3.Value) {
		ctx.ResultText(c.now.UTC().Format(layout))
	}
}

// fnSetConfig is set_config(name, value, is_local): it sets the session
// setting as SET would (and is refused where SET is) and returns the value.
func (c *Catalog) fnSetConfig(ctx sqlite3.Context, a ...sqlite3.Value) {
	if a[0].Type() == sqlite3.NULL {
		c.raise(ctx, sqlerr.New(sqlerr.InvalidParameterValue, "set_config: the setting name must not be NULL"))
		return
	}
	name, value := a[0].Text(), a[1].Text()
	if c.env.Set == nil {
		c.raise(ctx, c.unavailable("set_config()"))
		return
	}
	if err := c.env.Set(name, value); err != nil {
		c.raise(ctx, err)
		return
	}
	if v, ok := c.env.Setting(strings.ToLower(name)); ok {
		value = v
	}
	ctx.ResultText(value)
}

func (c *Catalog) fnVersion(ctx sqlite3.Context, _ ...sqlite3.Value) {
	v := "15.0"
	if c.env.Setting != nil {
		if s, ok := c.env.Setting("server_version"); ok {
			v = s
		}
	}
	ctx.ResultText("PostgreSQL " + v + " (ddp-proxy privacy proxy, catalog emulated on " + c.backend + ")")
}

func fnLeft(ctx sqlite3.Context, a ...sqlite3.Value)  { leftOrRight(ctx, a, false) }
func fnRight(ctx sqlite3.Context, a ...sqlite3.Value) { leftOrRight(ctx, a, true) }

// leftOrRight is left(s, n) or right(s, n): the first or last n
// characters; a negative n drops that many from the other end.
func leftOrRight(ctx sqlite3.Context, a []sqlite3.Value, right bool) {
	if anyNull(a) {
		ctx.ResultNull()
		return
	}
	r, n := []rune(a[0].Text()), int(a[1].Int64())
	if n < 0 {
		n = max(len(r)+n, 0)
	}
	n = min(n, len(r))
	if right {
		ctx.ResultText(string(r[len(r)-n:]))
		return
	}
	ctx.ResultText(string(r[:n]))
}

func fnSplitPart(ctx sqlite3.Context, a ...sqlite3.Value) {
	if anyNull(a) {
		ctx.ResultNull()
		return
	}
	parts := strings.Split(a[0].Text(), a[1].Text())
	n := int(a[2].Int64())
	switch {
	case n > 0 && n <= len(parts):
		ctx.ResultText(parts[n-1])
	case n < 0 && -n <= len(parts):
		ctx.ResultText(parts[len(parts)+n])
	default:
		ctx.ResultText("")
	}
}

func fnPosition(ctx sqlite3.Context, a ...sqlite3.Value) {
	if anyNull(a) {
		ctx.ResultNull()
		return
	}
	i := strings.Index(a[0].Text(), a[1].Text())
	if i < 0 {
		ctx.ResultInt64(0)
		return
	}
	ctx.ResultInt64(int64(len([]rune(a[0].Text()[:i])) + 1))
}

// regLookup implements casts to regclass, regtype, regnamespace and
// regrole: a number stays an OID, a name is looked up (PostgreSQL raises
// an error for unknown names). asName renders the OID as its name.
func (c *Catalog) regLookup(kind string, asName bool) sqlite3.ScalarFunction {
	return func(ctx sqlite3.Context, a ...sqlite3.Value) {
		v := a[0]
		if v.Type() == sqlite3.NULL {
			ctx.ResultNull()
			return
		}
		var oid int64
		if v.Type() == sqlite3.INTEGER {
			oid = v.Int64()
		} else if n, err := strconv.ParseInt(strings.TrimSpace(v.Text()), 10, 64); err == nil {
			oid = n
		} else {
			var ok bool
			oid, ok = c.lookupName(kind, v.Text())
			if !ok {
				what := map[string]string{"regclass": "relation", "regtype": "type", "regnamespace": "schema", "regrole": "role"}[kind]
				code := map[string]sqlerr.Code{"regclass": sqlerr.UndefinedTable}[kind]
				if code.SQLState == "" {
					code = sqlerr.UndefinedObject
				}
				c.raise(ctx, sqlerr.New(code, "%s %q does not exist", what, v.Text()))
				return
			}
		}
		if !asName {
			ctx.ResultInt64(oid)
			return
		}
		ctx.ResultText(c.oidName(kind, oid))
	}
}

func (c *Catalog) lookupName(kind, name string) (int64, bool) {
	parts := splitQualified(name)
	switch kind {
	case "regclass":
		if len(parts) == 2 {
			oid, ok := c.relByName[parts[0]+"."+parts[1]]
			return oid, ok
		}
		for _, s := range []string{"pg_catalog", "public"} {
			if oid, ok := c.relByName[s+"."+parts[0]]; ok {
				return oid, true
			}
		}
	case "regtype":
		if t, ok := typeByName(parts[len(parts)-1]); ok {
			return t.oid, true
		}
	case "regnamespace":
		oid, ok := c.nsByName[parts[0]]
		return oid, ok
	case "regrole":
		if parts[0] == Owner {
			return ownerOID, true
		}
	}
	return 0, false
}

func (c *Catalog) oidName(kind string, oid int64) string {
	switch kind {
	case "regclass":
		if n, ok := c.relName[oid]; ok {
			return n
		}
	case "regtype":
		if t, ok := typeByOID(oid); ok {
			return t.display
		}
	case "regnamespace":
		if n, ok := c.nsName[oid]; ok {
			return quoteIdentIfNeeded(n)
		}
	case "regrole":
		if oid == ownerOID {
			return Owner
		}
	}
	return strconv.FormatInt(oid, 10)
}

// splitQualified splits a possibly quoted, possibly schema-qualified name,
// folding unquoted parts to lower case as PostgreSQL does.
func splitQualified(s string) []string {
	var parts []string
	var cur strings.Builder
	quoted, wasQuoted := false, false
	flush := func() {
		p := cur.String()
		if !wasQuoted {
			p = strings.ToLower(strings.TrimSpace(p))
		}
		parts = append(parts, p)
		cur.Reset()
		wasQuoted = false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quoted && ch == '"' && i+1 < len(s) && s[i+1] == '"':
			cur.WriteByte('"')
			i++
		case ch == '"':
			quoted = !quoted
			wasQuoted = true
		case !quoted && ch == '.':
			flush()
		default:
			cur.WriteByte(ch)
		}
	}
	flush()
	return parts
}

func (c *Catalog) fnToRegclass(ctx sqlite3.Context, a ...sqlite3.Value) {
	if a[0].Type() == sqlite3.NULL {
		ctx.ResultNull()
		return
	}
	if oid, ok := c.lookupName("regclass", a[0].Text()); ok {
		ctx.ResultInt64(oid)
		return
	}
	ctx.ResultNull()
}

func fnCastText(ctx sqlite3.Context, a ...sqlite3.Value) {
	switch a[0].Type() {
	case sqlite3.NULL:
		ctx.ResultNull()
	default:
		ctx.ResultText(a[0].Text())
	}
}

func (c *Catalog) fnCastInt(ctx sqlite3.Context, a ...sqlite3.Value) {
	v := a[0]
	switch v.Type() {
	case sqlite3.NULL:
		ctx.ResultNull()
	case sqlite3.INTEGER:
		ctx.ResultInt64(v.Int64())
	case sqlite3.FLOAT:
		ctx.ResultInt64(int64(v.Float() + 0.5))
	default:
		castText(c, ctx, v, "integer", func(s string) (int64, error) { return strconv.ParseInt(strings.TrimSpace(s), 10, 64) }, ctx.ResultInt64)
	}
}

// castText casts a text value with parse and hands it to result, or
// raises PostgreSQL's error for text that is not a value of type typ.
func castText[T any](c *Catalog, ctx sqlite3.Context, v sqlite3.Value, typ string, parse func(string) (T, error), result func(T)) {
	x, err := parse(v.Text())
	if err != nil {
		c.raise(ctx, sqlerr.New(sqlerr.InvalidParameterValue, "invalid input syntax for type %s: %q", typ, v.Text()))
		return
	}
	result(x)
}

func (c *Catalog) fnCastFloat(ctx sqlite3.Context, a ...sqlite3.Value) {
	v := a[0]
	switch v.Type() {
	case sqlite3.NULL:
		ctx.ResultNull()
	case sqlite3.INTEGER, sqlite3.FLOAT:
		ctx.ResultFloat(v.Float())
	default:
		castText(c, ctx, v, "double precision", func(s string) (float64, error) { return strconv.ParseFloat(strings.TrimSpace(s), 64) }, ctx.ResultFloat)
	}
}

func (c *Catalog) fnCastBool(ctx sqlite3.Context, a ...sqlite3.Value) {
	v := a[0]
	switch v.Type() {
	case sqlite3.NULL:
		ctx.ResultNull()
	case sqlite3.INTEGER:
		ctx.ResultBool(v.Int64() != 0)
	default:
		castText(c, ctx, v, "boolean", func(s string) (bool, error) {
			b, ok := parseBool(s)
			if !ok {
				return false, errors.New("not a boolean")
			}
			return b, nil
		}, ctx.ResultBool)
	}
}

// fnArrayIn turns an array literal ('{a,b}' or int2vector's '1 2') into
// the JSON arrays the catalog stores.
func (c *Catalog) fnArrayIn(ctx sqlite3.Context, a ...sqlite3.Value) {
	v := a[0]
	if v.Type() == sqlite3.NULL {
		ctx.ResultNull()
		return
	}
	s := strings.TrimSpace(v.Text())
	if strings.HasPrefix(s, "[") {
		ctx.ResultText(s)
		return
	}
	var xs []any
	if strings.HasPrefix(s, "{") {
		var err error
		if xs, err = parsePGArray(s); err != nil {
			c.raise(ctx, c.unavailable("this array literal ("+err.Error()+")"))
			return
		}
	} else {
		for _, it := range strings.Fields(s) { // int2vector, oidvector
			if n, err := strconv.ParseInt(it, 10, 64); err == nil {
				xs = append(xs, n)
			} else {
				xs = append(xs, it)
			}
		}
	}
	if xs == nil {
		xs = []any{}
	}
	b, _ := json.Marshal(xs)
	ctx.ResultText(string(b))
}

// extreme is GREATEST/LEAST: NULLs are ignored, NULL only if all are.
func extreme(ctx sqlite3.Context, a []sqlite3.Value, sign int) {
	var best *sqlite3.Value
	for i := range a {
		v := a[i]
		if v.Type() == sqlite3.NULL {
			continue
		}
		if best == nil || compareValues(v, *best)*sign > 0 {
			best = &a[i]
		}
	}
	if best == nil {
		ctx.ResultNull()
		return
	}
	ctx.ResultValue(*best)
}

func compareValues(x, y sqlite3.Value) int {
	if x.Type() != sqlite3.TEXT && y.Type() != sqlite3.TEXT {
		switch {
		case x.Float() < y.Float():
			return -1
		case x.Float() > y.Float():
			return 1
		}
		return 0
	}
	return strings.Compare(x.Text(), y.Text())
}

// fnField reads a field of a composite value (a JSON object).
func fnField(ctx sqlite3.Context, a ...sqlite3.Value) {
	if a[0].Type() == sqlite3.NULL {
		ctx.ResultNull()
		return
	}
	var m map[string]any
	if json.Unmarshal([]byte(a[0].Text()), &m) != nil {
		ctx.ResultError(fmt.Errorf("not a composite value"))
		return
	}
	resultAny(ctx, m[a[1].Text()])
}
