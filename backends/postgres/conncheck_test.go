package postgres

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lib/pq"
)

// TestConnectionCheckOptional: the server's client connection check is
// a help, not a condition of a session: a server that does not know the
// setting (before 14: 42704) or cannot check on its platform (Windows:
// its check hook refuses any value but 0, 22023) still gets connections.
// Any other failure of the SET fails the connection.
func TestConnectionCheckOptional(t *testing.T) {
	for _, tt := range []struct {
		err      error
		optional bool
	}{
		{&pq.Error{Code: "42704"}, true},
		{&pq.Error{Code: "22023"}, true},
		{fmt.Errorf("wrapped: %w", &pq.Error{Code: "22023"}), true},
		{&pq.Error{Code: "57014"}, false},
		{&pq.Error{Code: "08006"}, false},
		{errors.New("driver: bad connection"), false},
	} {
		if got := connectionCheckUnavailable(tt.err); got != tt.optional {
			t.Errorf("%v: unavailable check %v, want %v", tt.err, got, tt.optional)
		}
	}
}
