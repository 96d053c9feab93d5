package sqlerr

import (
	"errors"
	"fmt"
	"testing"
)

func TestCodesMapToBothVocabularies(t *testing.T) {
	names := map[string]bool{}
	for _, c := range All {
		if len(c.SQLState) != 5 || len(c.MySQLState) != 5 {
			t.Errorf("%s: SQLSTATEs must have 5 characters: %q %q", c.Name, c.SQLState, c.MySQLState)
		}
		if c.MySQLErrno < 1000 {
			t.Errorf("%s: MySQL errno %d is not a server error number", c.Name, c.MySQLErrno)
		}
		if names[c.Name] {
			t.Errorf("duplicate code name %q", c.Name)
		}
		names[c.Name] = true
	}
}

func TestAsNeverLeaksUnknownErrors(t *testing.T) {
	secret := errors.New(`pq: invalid input syntax for type integer: "alice-42"`)
	e := As(fmt.Errorf("running query: %w", secret))
	if e.Code != Internal || e.Message != "internal error" {
		t.Fatalf("unknown error mapped to %+v", e)
	}
	if !errors.Is(e, secret) {
		t.Fatal("cause lost for logging")
	}
	typed := Wrap(BackendFailed, secret, "the backend failed while running the query")
	got := As(fmt.Errorf("outer: %w", typed))
	if got != typed || !HasCode(got, BackendFailed) {
		t.Fatalf("typed error not found in chain: %+v", got)
	}
	if got.Error() != "the backend failed while running the query" {
		t.Fatalf("client message carries the cause: %q", got.Error())
	}
}
