package backends

import (
	"strings"
	"testing"
)

// TestDecodeIntErrorsHoldNoValue: an aggregate the proxy cannot take
// exactly (an int64 overflow, a float beyond 2^53, a fraction) fails, and
// the failure's cause, which the front ends log at warn, must not carry
// the exact aggregate of the private rows.
func TestDecodeIntErrorsHoldNoValue(t *testing.T) {
	for _, c := range []struct {
		v      any
		secret string
	}{
		{[]byte("98765432109876543210"), "98765432109876543210"},
		{"-98765432109876543211", "98765432109876543211"},
		{"12345.5", "12345.5"},
		{float64(123456789012345678), "1.2345678901234568e+17"},
		{1234.25, "1234.25"},
	} {
		_, err := DecodeInt(c.v)
		if err == nil {
			t.Errorf("DecodeInt(%v) succeeded", c.v)
			continue
		}
		if strings.Contains(err.Error(), c.secret) || strings.Contains(err.Error(), "98765") {
			t.Errorf("DecodeInt(%v): error %q quotes the aggregate", c.v, err)
		}
	}
	if n, err := DecodeInt([]byte("-42")); err != nil || n != -42 {
		t.Errorf("DecodeInt(-42) = %d, %v", n, err)
	}
}
