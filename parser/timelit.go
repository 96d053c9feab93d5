package parser

import (
	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// The calls BI tools write to spell a constant date or time — Superset's
// time filters TO_TIMESTAMP('2010-01-01 00:00:00.000000', 'YYYY-MM-DD
// HH24:MI:SS.US') and STR_TO_DATE('…', '%Y-%m-%d %H:%i:%s.%f'), Grafana's
// to_timestamp(1262304000) and FROM_UNIXTIME(…) — are constants: they are
// read here as the typed literal they denote (a CAST of the quoted text,
// which the analysis parses at plan time, so a text that is no date is
// refused before any charge), never sent to a backend as calls. Only
// formats whose text is ISO 8601 are read; anything else stays an
// unknown function and is refused.

// isoFormats maps the accepted format strings, per dialect, to whether
// they carry a time of day.
var isoFormats = map[bool]map[string]bool{
	false: { // PostgreSQL's to_timestamp / to_date patterns
		"YYYY-MM-DD":               false,
		"YYYY-MM-DD HH24:MI":       true,
		"YYYY-MM-DD HH24:MI:SS":    true,
		"YYYY-MM-DD HH24:MI:SS.US": true,
		"YYYY-MM-DD HH24:MI:SS.MS": true,
		`YYYY-MM-DD"T"HH24:MI:SS`:  true,
	},
	true: { // MySQL's STR_TO_DATE formats
		"%Y-%m-%d":             false,
		"%Y-%m-%d %H:%i":       true,
		"%Y-%m-%d %H:%i:%s":    true,
		"%Y-%m-%d %H:%i:%s.%f": true,
		"%Y-%m-%d %T":          true,
		"%Y-%m-%dT%H:%i:%s":    true,
	},
}

// timeLiteralCall reads a constant-time call (canonical lower-case name,
// converted arguments) of the dialect (mysql: MySQL) as the literal it
// denotes; ok is false for any other call.
func timeLiteralCall(mysql bool, name string, args []ir.Expr) (e ir.Expr, ok bool) {
	text := func(i int) (string, bool) {
		l, isLit := args[i].(ir.Literal)
		return l.Value.Str, isLit && l.Value.Kind == ir.KindString
	}
	withFormat := func(to ir.CastType, dateTo ir.CastType) (ir.Expr, bool) {
		if len(args) != 2 {
			return nil, false
		}
		s, ok1 := text(0)
		f, ok2 := text(1)
		hasTime, known := isoFormats[mysql][f]
		if !ok1 || !ok2 || !known {
			return nil, false
		}
		if !hasTime {
			to = dateTo
		}
		return ir.Cast{X: ir.Literal{Value: ir.String(s)}, To: to}, true
	}
	epoch := func(kind func(int64) ir.Value) (ir.Expr, bool) {
		if len(args) != 1 {
			return nil, false
		}
		l, isLit := args[0].(ir.Literal)
		const maxSec = 253402300799 // 9999-12-31 23:59:59
		if !isLit || l.Value.Kind != ir.KindInt || l.Value.Int < 0 || l.Value.Int > maxSec {
			return nil, false
		}
		return ir.Literal{Value: kind(l.Value.Int * 1_000_000)}, true
	}
	switch {
	case !mysql && name == "to_timestamp" && len(args) == 2:
		return withFormat(ir.CastTimestampTZ, ir.CastTimestampTZ)
	case !mysql && name == "to_timestamp":
		return epoch(ir.TimestampTZ)
	case !mysql && name == "to_date":
		return withFormat(ir.CastDate, ir.CastDate)
	case mysql && name == "str_to_date":
		return withFormat(ir.CastTimestamp, ir.CastDate)
	case mysql && name == "from_unixtime":
		// In the backend sessions' UTC, as every session of the proxy.
		return epoch(ir.Timestamp)
	case mysql && name == "timestamp" && len(args) == 1:
		if s, isText := text(0); isText {
			return ir.Cast{X: ir.Literal{Value: ir.String(s)}, To: ir.CastTimestamp}, true
		}
	}
	return nil, false
}

// atTimeZone reads t AT TIME ZONE z (PostgreSQL): with z a name of UTC, a
// change between timestamp and timestamptz (exprtype's at_utc); another
// zone is refused, because converting to it needs the time-zone
// database, which the backends do not share.
func atTimeZone(zone, t ir.Expr) (ir.Expr, error) {
	l, ok := zone.(ir.Literal)
	if !ok || l.Value.Kind != ir.KindString || !exprtype.IsUTCZone(l.Value.Str) {
		return nil, notAgg("AT TIME ZONE supports only 'UTC' (every backend session runs in UTC; other zones need a time-zone database the backends do not share)")
	}
	return ir.Func{Name: "at_utc", Args: []ir.Expr{t}}, nil
}

// convertTZ reads MySQL's CONVERT_TZ(t, from, to) between names of UTC:
// t itself.
func convertTZ(args []ir.Expr) (ir.Expr, error) {
	for _, z := range args[1:] {
		l, ok := z.(ir.Literal)
		if !ok || l.Value.Kind != ir.KindString || !exprtype.IsUTCZone(l.Value.Str) {
			return nil, notAgg("CONVERT_TZ supports only 'UTC' and '+00:00' (every backend session runs in UTC; other zones need a time-zone database the backends do not share)")
		}
	}
	return args[0], nil
}
