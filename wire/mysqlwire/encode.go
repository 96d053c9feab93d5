package mysqlwire

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// MySQL column flags (include/mysql_com.h).
const (
	flagNotNull  = 1
	flagBinary   = 128
	flagNum      = 32768
	flagUnsigned = 32
)

func field(c Column) *querypb.Field {
	f := &querypb.Field{Name: c.Name, OrgName: c.Name, Table: c.Table, OrgTable: c.Table}
	switch c.Type {
	case TypeLongLong:
		f.Type, f.Charset, f.ColumnLength, f.Flags = querypb.Type_INT64, mysql.CharacterSetBinary, 20, flagBinary|flagNum
	case TypeDouble:
		f.Type, f.Charset, f.ColumnLength, f.Decimals, f.Flags = querypb.Type_FLOAT64, mysql.CharacterSetBinary, 22, 31, flagBinary|flagNum
	case TypeTiny:
		f.Type, f.Charset, f.ColumnLength, f.Flags = querypb.Type_INT8, mysql.CharacterSetBinary, 1, flagBinary|flagNum
	case TypeDate:
		f.Type, f.Charset, f.ColumnLength, f.Flags = querypb.Type_DATE, mysql.CharacterSetBinary, 10, flagBinary
	case TypeDatetime:
		f.Type, f.Charset, f.ColumnLength, f.Decimals, f.Flags = querypb.Type_DATETIME, mysql.CharacterSetBinary, 26, 6, flagBinary
	default:
		f.Type, f.Charset, f.ColumnLength = querypb.Type_VARCHAR, mysql.CharacterSetUtf8mb4, 1024
	}
	return f
}

func fields(cs []Column) []*querypb.Field {
	out := make([]*querypb.Field, len(cs))
	for i, c := range cs {
		out[i] = field(c)
	}
	return out
}

// value encodes v for a column of type t. A value of another kind than
// the column's (a private count is always an int) is converted so that
// the binary protocol, which trusts the column type, stays well-formed.
func value(v ir.Value, t Type) sqltypes.Value {
	if v.Kind == ir.KindNull {
		return sqltypes.NULL
	}
	switch t {
	case TypeLongLong:
		switch v.Kind {
		case ir.KindInt:
			return sqltypes.NewInt64(v.Int)
		case ir.KindBool:
			return sqltypes.NewInt64(b2i(v.Bool))
		case ir.KindFloat:
			if f := v.Float; f == float64(int64(f)) {
				return sqltypes.NewInt64(int64(f))
			}
		}
		if n, err := strconv.ParseInt(v.Text(), 10, 64); err == nil {
			return sqltypes.NewInt64(n)
		}
		return sqltypes.NULL
	case TypeTiny:
		switch v.Kind {
		case ir.KindBool:
			return sqltypes.MakeTrusted(querypb.Type_INT8, strconv.AppendInt(nil, b2i(v.Bool), 10))
		case ir.KindInt:
			if v.Int >= -128 && v.Int <= 127 {
				return sqltypes.MakeTrusted(querypb.Type_INT8, strconv.AppendInt(nil, v.Int, 10))
			}
		}
		return sqltypes.NULL
	case TypeDouble:
		if f, ok := v.AsFloat(); ok {
			return sqltypes.NewFloat64(f)
		}
		if f, err := strconv.ParseFloat(v.Text(), 64); err == nil {
			return sqltypes.NewFloat64(f)
		}
		return sqltypes.NULL
	case TypeDate:
		if tv := ir.AsTime(v, ir.KindDate); tv.Kind == ir.KindDate {
			return sqltypes.MakeTrusted(querypb.Type_DATE, []byte(tv.Text()))
		}
		return sqltypes.NULL
	case TypeDatetime:
		// MySQL spells DATETIME(6) with six fractional digits; a
		// timestamptz is shown in UTC, the session's time_zone.
		k := v.Kind
		if !v.IsTime() {
			k = ir.KindTimestamp
		}
		if tv := ir.AsTime(v, k); tv.IsTime() {
			text := tv.GoTime().Format("2006-01-02 15:04:05.000000")
			return sqltypes.MakeTrusted(querypb.Type_DATETIME, []byte(text))
		}
		return sqltypes.NULL
	}
	if v.Kind == ir.KindBool {
		// MySQL has no boolean: text columns show 1/0 like the server.
		return sqltypes.NewVarChar(strconv.FormatInt(b2i(v.Bool), 10))
	}
	return sqltypes.NewVarChar(v.Text())
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func toResult(r Result) *sqltypes.Result {
	out := &sqltypes.Result{RowsAffected: r.AffectedRows, Info: r.Info}
	if r.Columns == nil {
		return out
	}
	out.Fields = fields(r.Columns)
	out.Rows = make([][]sqltypes.Value, len(r.Rows))
	for i, row := range r.Rows {
		vals := make([]sqltypes.Value, len(r.Columns))
		for j := range r.Columns {
			if j < len(row) {
				vals[j] = value(row[j], r.Columns[j].Type)
			} else {
				vals[j] = sqltypes.NULL
			}
		}
		out.Rows[i] = vals
	}
	return out
}

// argValue decodes one bound parameter of COM_STMT_EXECUTE.
func argValue(bv *querypb.BindVariable) (ir.Value, error) {
	if bv == nil {
		return ir.Null(), nil
	}
	v, err := sqltypes.BindVariableToValue(bv)
	if err != nil {
		return ir.Value{}, err
	}
	if v.IsNull() {
		return ir.Null(), nil
	}
	raw := string(v.Raw())
	switch {
	case v.IsSigned():
		n, err := strconv.ParseInt(raw, 10, 64)
		return ir.Int(n), err
	case v.IsUnsigned():
		n, err := strconv.ParseUint(raw, 10, 64)
		if err != nil || n > 1<<63-1 {
			f, ferr := strconv.ParseFloat(raw, 64)
			return ir.Float(f), ferr
		}
		return ir.Int(int64(n)), nil
	case v.IsFloat():
		f, err := strconv.ParseFloat(raw, 64)
		return ir.Float(f), err
	case v.Type() == querypb.Type_DATE, v.Type() == querypb.Type_DATETIME, v.Type() == querypb.Type_TIMESTAMP:
		// A typed date parameter; a zero date (0000-00-00) stays text,
		// which the analysis refuses with 22008 where it meets a date.
		k := ir.KindTimestamp
		if v.Type() == querypb.Type_DATE {
			k = ir.KindDate
		}
		if tv, err := ir.ParseTime(k, raw); err == nil {
			return tv, nil
		}
		return ir.String(raw), nil
	case v.Type() == querypb.Type_DECIMAL:
		if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
			return ir.Int(n), nil
		}
		f, err := strconv.ParseFloat(raw, 64)
		return ir.Float(f), err
	}
	return ir.String(raw), nil
}

// sqlError turns any error into the one ERR packet the client gets. An
// error without a sqlerr code is internal: its text (which may quote a
// driver or a value) is not sent.
func sqlError(err error) *mysql.SQLError {
	var se *mysql.SQLError
	if errors.As(err, &se) {
		return se
	}
	e := sqlerr.As(err)
	msg := e.Message
	if e.Hint != "" {
		msg += " (hint: " + e.Hint + ")"
	}
	return mysql.NewSQLError(int(e.Code.MySQLErrno), e.Code.MySQLState, "%s", msg)
}

// errText is what an ERR packet of err says, for logs.
func errText(err error) string {
	se := sqlError(err)
	return fmt.Sprintf("%d (%s)", se.Num, se.State)
}
