package ir

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	us := func(s string) int64 {
		tm, err := time.Parse("2006-01-02 15:04:05.999999Z07:00", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixMicro()
	}
	cases := []struct {
		k    Kind
		in   string
		want int64
		err  error
	}{
		{KindDate, "1970-01-01", 0, nil},
		{KindDate, " 2010-06-01 ", 14761, nil}, // 40 years incl. 10 leap days + 151 days
		{KindDate, "1969-12-31", -1, nil},
		{KindDate, "0001-01-01", MinDate, nil},
		{KindDate, "9999-12-31", MaxDate, nil},
		{KindDate, "2012-02-29", 15399, nil},
		{KindDate, "2011-02-29", 0, ErrTimeRange},
		{KindDate, "2010-13-45", 0, ErrTimeRange},
		{KindDate, "0000-01-01", 0, ErrTimeRange},
		{KindDate, "2010-6-1", 0, ErrTimeFormat},
		{KindDate, "2010-06-01 00:00", 0, ErrTimeFormat},
		{KindDate, "tomorrow", 0, ErrTimeFormat},
		{KindTimestamp, "2010-06-01", us("2010-06-01 00:00:00Z"), nil},
		{KindTimestamp, "2010-06-01 12:30", us("2010-06-01 12:30:00Z"), nil},
		{KindTimestamp, "2010-06-01T12:30:15.25", us("2010-06-01 12:30:15.25Z"), nil},
		{KindTimestamp, "2010-06-01 12:30:15.123456", us("2010-06-01 12:30:15.123456Z"), nil},
		{KindTimestamp, "2010-06-01 12:30:15.1234567", 0, ErrTimeFormat},
		{KindTimestamp, "2010-06-01 24:00:00", 0, ErrTimeRange},
		{KindTimestamp, "2010-06-01 12:00:00+02", us("2010-06-01 12:00:00Z"), nil}, // the zone is ignored
		{KindTimestamp, "2010-06-01 12:00:00.5Z", us("2010-06-01 12:00:00.5Z"), nil},
		{KindTimestamp, "2010-06-01 12:00:00 +2", 0, ErrTimeFormat},
		{KindTimestampTZ, "2010-06-01 12:00:00+02", us("2010-06-01 10:00:00Z"), nil},
		{KindTimestampTZ, "2010-06-01 12:00:00-05:30", us("2010-06-01 17:30:00Z"), nil},
		{KindTimestampTZ, "2010-06-01 12:00:00Z", us("2010-06-01 12:00:00Z"), nil},
		{KindTimestampTZ, "2010-06-01 12:00:00", us("2010-06-01 12:00:00Z"), nil},
		{KindTimestampTZ, "0001-01-01 00:30:00+01", 0, ErrTimeRange},
		{KindTimestampTZ, "2010-06-01 12:00:00 CEST", 0, ErrTimeFormat},
	}
	for _, c := range cases {
		v, err := ParseTime(c.k, c.in)
		if !errors.Is(err, c.err) {
			t.Errorf("ParseTime(%s, %q) error %v, want %v", c.k, c.in, err, c.err)
			continue
		}
		if err == nil && (v.Kind != c.k || v.Int != c.want) {
			t.Errorf("ParseTime(%s, %q) = %v, want %d", c.k, c.in, v, c.want)
		}
	}
}

// TestTimeTextRoundTrip: formatting then parsing is the identity, the
// text is what time.Format gives, and CanonicalText orders as the values.
func TestTimeTextRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var prev Value
	for i := range 20000 {
		k := []Kind{KindDate, KindTimestamp, KindTimestampTZ}[i%3]
		var v Value
		if k == KindDate {
			v = Date(MinDate + rng.Int64N(MaxDate-MinDate+1))
		} else {
			n := MinTimestamp + rng.Int64N(MaxTimestamp-MinTimestamp+1)
			if rng.IntN(2) == 0 {
				n -= n % MicrosPerSecond // whole seconds are common
			}
			v = Value{Kind: k, Int: n}
		}
		got, err := ParseTime(k, v.Text())
		if err != nil || got != v {
			t.Fatalf("%s %d: text %q parses to %v, %v", k, v.Int, v.Text(), got, err)
		}
		if k == KindDate {
			if want := v.GoTime().Format("2006-01-02"); v.Text() != want {
				t.Fatalf("date text %q, want %q", v.Text(), want)
			}
		}
		if i%3 == 1 && prev.Kind == KindTimestamp {
			a, b := CanonicalText(k, prev.Int), CanonicalText(k, v.Int)
			if (a < b) != (prev.Int < v.Int) || (a == b) != (prev.Int == v.Int) {
				t.Fatalf("canonical text order %q vs %q disagrees with %d vs %d", a, b, prev.Int, v.Int)
			}
		}
		if k == KindTimestamp {
			prev = v
		}
		if back := TimeValue(k, v.GoTime()); back != v {
			t.Fatalf("TimeValue(GoTime(%v)) = %v", v, back)
		}
	}
}

func TestAsTime(t *testing.T) {
	day := Date(14761) // 2010-06-01
	noon := Timestamp(14761*MicrosPerDay + 12*3600*MicrosPerSecond)
	cases := []struct {
		in   Value
		k    Kind
		want Value
	}{
		{String("2010-06-01"), KindDate, day},
		{String("2010-06-01T00:00:00Z"), KindDate, day},
		{String("2010-06-01 00:00:00"), KindDate, day},
		{String("2010-06-01T12:00:00+02:00"), KindTimestamp, noon}, // a wall clock keeps its reading
		{String("2010-06-01T12:00:00+02:00"), KindTimestampTZ, TimestampTZ(noon.Int - 2*3600*MicrosPerSecond)},
		{String("2010-06-01 12:00:00"), KindTimestamp, noon},
		{String("2010-06-01 12:00:00.000000"), KindTimestamp, noon},
		{noon, KindTimestampTZ, TimestampTZ(noon.Int)},
		{noon, KindDate, noon}, // not a midnight: unchanged
		{day, KindTimestamp, Timestamp(14761 * MicrosPerDay)},
		{Null(), KindDate, Null()},
		{String("soon"), KindDate, String("soon")},
	}
	for _, c := range cases {
		if got := AsTime(c.in, c.k); got != c.want {
			t.Errorf("AsTime(%v, %s) = %v, want %v", c.in, c.k, got, c.want)
		}
	}
}
