package backends

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// DecodeValue turns a value scanned by a database/sql driver into an
// ir.Value. BackendQuery carries no column types, so the Go type decides:
// int64 → Int, float64 → Float, string and []byte → String, bool → Bool,
// nil → Null, time.Time → String in ISO 8601 (2006-01-02 for a DATE
// column, RFC 3339 with fractional seconds otherwise). Two refinements use
// the driver's column type name dbType: NUMERIC/DECIMAL text (lib/pq
// returns it as []byte) becomes Int when written without a fraction ("12",
// scale 0, fits int64) and Float otherwise ("12.00"), so every key of one
// column has the same kind; and SQLite BOOLEAN columns already arrive as bool from the
// ncruces driver, while booleans computed by SQLite expressions stay 0/1
// integers.
func DecodeValue(v any, dbType string) (ir.Value, error) {
	switch x := v.(type) {
	case nil:
		return ir.Null(), nil
	case int64:
		return ir.Int(x), nil
	case float64:
		return ir.Float(x), nil
	case bool:
		return ir.Bool(x), nil
	case string:
		return decodeText(x, dbType), nil
	case []byte:
		return decodeText(string(x), dbType), nil
	case time.Time:
		if strings.EqualFold(dbType, "DATE") {
			return ir.String(x.Format(time.DateOnly)), nil
		}
		return ir.String(x.Format(time.RFC3339Nano)), nil
	case int32:
		return ir.Int(int64(x)), nil
	case uint64: // go-sql-driver/mysql: BIGINT UNSIGNED
		if x <= math.MaxInt64 {
			return ir.Int(int64(x)), nil
		}
		return ir.String(strconv.FormatUint(x, 10)), nil
	case float32:
		return ir.Float(float64(x)), nil
	}
	return ir.Value{}, fmt.Errorf("backends: cannot decode driver value of type %T", v)
}

func decodeText(s, dbType string) ir.Value {
	switch strings.ToUpper(dbType) {
	case "NUMERIC", "DECIMAL":
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return ir.Int(i)
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return ir.Float(f)
		}
	}
	return ir.String(s)
}

// DecodeInt turns a scanned aggregate into an exact int64. Integer text
// (MySQL's DECIMAL sums) is parsed; a float is accepted only when it is an
// integer within ±2^53, where it is exact. Anything else, including a
// value that overflows int64, is an error.
//
// PRIVACY: an aggregate is the exact value of private rows, and these
// errors are logged (as the cause of a backend failure): they name the
// kind of value, never the value (strconv's errors quote their input).
func DecodeInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case []byte:
		return parseAggregate(string(x))
	case string:
		return parseAggregate(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) <= 1<<53 {
			return int64(x), nil
		}
		return 0, errors.New("backends: a floating-point aggregate is not an exact integer within ±2^53")
	case nil:
		return 0, fmt.Errorf("backends: aggregate is NULL")
	}
	return 0, fmt.Errorf("backends: cannot decode aggregate of type %T", v)
}

// parseAggregate parses integer text without quoting it in its error.
func parseAggregate(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		if ne.Err == strconv.ErrRange {
			return 0, errors.New("backends: an integer aggregate overflows int64")
		}
		return 0, fmt.Errorf("backends: an aggregate of %d bytes is not integer text", len(s))
	}
	return n, err
}

// ResultType maps a backend's type name to a result type; anything
// unknown is sent as text, which every client can display.
func ResultType(name string) ir.ColType {
	switch strings.ToUpper(name) {
	case "INT8", "BIGINT", "INTEGER":
		return ir.TypeInt8
	case "INT4", "INT", "INT2", "SMALLINT":
		return ir.TypeInt4
	case "FLOAT8", "FLOAT4", "REAL", "DOUBLE", "DOUBLE PRECISION":
		return ir.TypeFloat8
	case "BOOL", "BOOLEAN":
		return ir.TypeBool
	case "NAME":
		return ir.TypeName
	case "OID":
		return ir.TypeOID
	case "DATE":
		return ir.TypeDate
	case "TIMESTAMP", "DATETIME":
		return ir.TypeTimestamp
	case "TIMESTAMPTZ":
		return ir.TypeTimestampTZ
	}
	return ir.TypeText
}
