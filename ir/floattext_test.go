package ir_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/internal/mysqltest"
	"github.com/ddp-proxy/ddp-proxy/internal/pgtest"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// The spellings below were read off PostgreSQL 15 (SELECT x::float8) and
// MariaDB 10.11 (SELECT xe0) for the same doubles.
var tenth, fifth = 0.1, 0.2

var floatTextCases = []struct {
	f      float64
	pg, my string
}{
	{1262476800, "1262476800", "1262476800"},
	{218623720.5, "218623720.5", "218623720.5"},
	{12.5, "12.5", "12.5"},
	{tenth + fifth, "0.30000000000000004", "0.30000000000000004"},
	// PostgreSQL avoids a decimal exactly halfway to the next double.
	{6.886e21, "6.886000000000001e+21", "6.886e21"},
	{9.37e18, "9.37e+18", "9.37e18"},
	{1000000000000000.1, "1.0000000000000001e+15", "1000000000000000.1"},
	{-1000000000000000.2, "-1.0000000000000002e+15", "-1000000000000000.2"},
	{1234567.125, "1234567.125", "1234567.125"},
	{123456789012345, "123456789012345", "123456789012345"},
	{999999999999999.9, "999999999999999.9", "999999999999999.9"},
	{1e15, "1e+15", "1e15"},
	{-1e15, "-1e+15", "-1e15"},
	{1.5e15, "1.5e+15", "1.5e15"},
	{1e16, "1e+16", "1e16"},
	{1.2345678901234568e17, "1.2345678901234568e+17", "1.2345678901234568e17"},
	{1e22, "1e+22", "1e22"},
	{1e300, "1e+300", "1e300"},
	{1.7976931348623157e308, "1.7976931348623157e+308", "1.7976931348623157e308"},
	{0.0001, "0.0001", "0.0001"},
	{0.00001, "1e-05", "0.00001"},
	{1.5e-7, "1.5e-07", "0.00000015"},
	{1e-10, "1e-10", "0.0000000001"},
	{1e-15, "1e-15", "0.000000000000001"},
	{-1e-15, "-1e-15", "-0.000000000000001"},
	{1.2345e-15, "1.2345e-15", "0.0000000000000012345"},
	{1e-16, "1e-16", "1e-16"},
	{1.2345e-16, "1.2345e-16", "1.2345e-16"},
	{5e-324, "5e-324", "5e-324"},
	{0, "0", "0"},
	{math.Copysign(0, -1), "-0", "0"},
	{math.Inf(1), "Infinity", "Infinity"},
	{math.Inf(-1), "-Infinity", "-Infinity"},
	{math.NaN(), "NaN", "NaN"},
}

func TestFloatText(t *testing.T) {
	for _, c := range floatTextCases {
		if got := string(ir.AppendFloatPG([]byte("x"), c.f)); got != "x"+c.pg {
			t.Errorf("AppendFloatPG(%v) = %q, want %q", c.f, got[1:], c.pg)
		}
		if got := string(ir.AppendFloatMySQL([]byte("x"), c.f)); got != "x"+c.my {
			t.Errorf("AppendFloatMySQL(%v) = %q, want %q", c.f, got[1:], c.my)
		}
		if got := ir.Float(c.f).Text(); got != c.pg {
			t.Errorf("Float(%v).Text() = %q, want PostgreSQL's %q", c.f, got, c.pg)
		}
	}
}

// TestFloatKeyUnchanged: keys of stored releases hold reals in SQL(); a
// new display spelling must not change them (a repeated query would be
// charged again after an upgrade).
func TestFloatKeyUnchanged(t *testing.T) {
	for _, c := range floatTextCases {
		want := strconv.FormatFloat(c.f, 'g', -1, 64)
		if math.IsInf(c.f, 1) {
			want = "Infinity"
		} else if math.IsInf(c.f, -1) {
			want = "-Infinity"
		}
		v := ir.Float(c.f)
		if got := v.SQL(); got != want {
			t.Errorf("Float(%v).SQL() = %q, want %q", c.f, got, want)
		}
		if got := string(v.AppendSQL(nil)); got != want {
			t.Errorf("Float(%v).AppendSQL = %q, want %q", c.f, got, want)
		}
	}
}

// floatSamples draws doubles of every magnitude, a third of them next to
// the thresholds where a spelling changes notation (1e-15, 1e-4, 1e15)
// and a few random bit patterns (subnormals, the extremes).
func floatSamples(rng *rand.Rand, n int) []float64 {
	out := append(make([]float64, 0, n), 0, math.Copysign(0, -1))
	for len(out) < n {
		var f float64
		switch rng.IntN(6) {
		case 0, 1:
			f = math.Float64frombits(rng.Uint64())
		case 2, 3:
			f = (1 + rng.Float64()*9) * math.Pow(10, float64(rng.IntN(60)-30))
			if rng.IntN(3) == 0 {
				// Few digits, like most real results.
				f, _ = strconv.ParseFloat(strconv.FormatFloat(f, 'g', 1+rng.IntN(5), 64), 64)
			}
		default:
			edge := []float64{1e-15, 1e-4, 1e15}[rng.IntN(3)]
			f = edge
			for k := rng.IntN(4); k > 0; k-- {
				if rng.IntN(2) == 0 {
					f = math.Nextafter(f, 0)
				} else {
					f = math.Nextafter(f, math.Inf(1))
				}
			}
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			continue
		}
		if rng.IntN(2) == 0 {
			f = -f
		}
		out = append(out, f)
	}
	return out
}

// TestFloatTextPostgresOracle: the proxy's spelling of random doubles
// against PostgreSQL's own (float8out, through ::text, which is the same
// function its text output uses). Each double is sent bit-exact as a
// binary float8 parameter.
func TestFloatTextPostgresOracle(t *testing.T) {
	db := pgtest.OpenDB(t, pgtest.DSN(t, "the float text oracle"))
	samples := floatSamples(rand.New(rand.NewPCG(11, 12)), 3000)
	// pgx sends a []float64 as a binary float8[]: every bit arrives.
	rows, err := db.Query("SELECT x::text FROM unnest($1::float8[]) WITH ORDINALITY AS u(x, i) ORDER BY i", samples)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i, bad := 0, 0
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		if got := string(ir.AppendFloatPG(nil, samples[i])); got != s && bad < 20 {
			t.Errorf("%016x: proxy %q, PostgreSQL %q", math.Float64bits(samples[i]), got, s)
			bad++
		}
		i++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if i != len(samples) {
		t.Fatalf("PostgreSQL returned %d of %d values", i, len(samples))
	}
}

// TestFloatTextMariaDBOracle: the same against MariaDB's text protocol.
// The doubles go into a DOUBLE column through a prepared statement
// (binary parameters: every bit arrives) and come back as text; not as
// literals in the select list, whose text MariaDB may echo as written
// (SELECT 1e+15 gives 1e+15, a DOUBLE column holding it 1e15).
func TestFloatTextMariaDBOracle(t *testing.T) {
	db := mysqltest.Open(t, mysqltest.DSN(t, "the float text oracle"))
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "CREATE TEMPORARY TABLE float_text (i INT PRIMARY KEY, x DOUBLE)"); err != nil {
		t.Fatal(err)
	}
	samples := floatSamples(rand.New(rand.NewPCG(13, 14)), 3000)
	ins, err := conn.PrepareContext(ctx, "INSERT INTO float_text VALUES (?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range samples {
		if _, err := ins.ExecContext(ctx, i, f); err != nil {
			t.Fatal(err)
		}
	}
	ins.Close()
	// go-sql-driver parses a DOUBLE cell into a float64 (its text would
	// be lost), so the cells are read as CAST(… AS CHAR): the same text
	// the text protocol carries (checked with the mariadb client on 25,000
	// random doubles), both for a column and for an expression.
	rows, err := conn.QueryContext(ctx, "SELECT i, CAST(x AS CHAR), CAST(x * 1 AS CHAR) FROM float_text ORDER BY i")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n, bad := 0, 0
	for rows.Next() {
		var i int
		var col, expr []byte
		if err := rows.Scan(&i, &col, &expr); err != nil {
			t.Fatal(err)
		}
		got := string(ir.AppendFloatMySQL(nil, samples[i]))
		for _, want := range [][]byte{col, expr} {
			if got != string(want) && bad < 20 {
				t.Errorf("%016x: proxy %q, MariaDB %q", math.Float64bits(samples[i]), got, want)
				bad++
			}
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(samples) {
		t.Fatalf("MariaDB returned %d of %d values", n, len(samples))
	}
}
