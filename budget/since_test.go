package budget

import (
	"strings"
	"testing"
	"time"
)

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		{"2026-11-27T09:30:00Z", time.Date(2026, 11, 27, 9, 30, 0, 0, time.UTC), false},
		{"2026-11-27T09:30:00.25+01:00", time.Date(2026, 11, 27, 8, 30, 0, 250e6, time.UTC), false},
		{"2026-11-20", time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), false},
		{"90m", time.Date(2026, 11, 27, 8, 30, 0, 0, time.UTC), false},
		{"0s", now, false},
		{"-1h", time.Time{}, true},
		{"yesterday", time.Time{}, true},
		{"", time.Time{}, true},
	}
	for _, tt := range tests {
		got, err := ParseSince(tt.in, now)
		if (err != nil) != tt.wantErr || !got.Equal(tt.want) {
			t.Errorf("ParseSince(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.wantErr)
		}
		// The error is what an operator reads: it names every form.
		if err != nil {
			for _, form := range []string{"RFC 3339", "date", "duration"} {
				if !strings.Contains(err.Error(), form) {
					t.Errorf("ParseSince(%q) error %q does not mention %s", tt.in, err, form)
				}
			}
		}
	}
}
