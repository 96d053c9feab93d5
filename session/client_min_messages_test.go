package session

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// client_min_messages above notice silences the cost notice, as
// PostgreSQL sends no NOTICE then; the answer is still charged, and the
// notice comes back with RESET or a level at or below notice.
func TestClientMinMessagesSilencesCostNotice(t *testing.T) {
	f := sqliteFixture(t)
	if rs := mustQuery(t, f.s, "SHOW client_min_messages"); rs[0].Rows[0][0].Str != "notice" {
		t.Fatalf("default client_min_messages %v, want notice", rs[0].Rows)
	}
	rs := mustQuery(t, f.s, "SET client_min_messages = WARNING; SHOW client_min_messages; SELECT COUNT(*) FROM people")
	if got := rs[1].Rows[0][0].Str; got != "warning" {
		t.Errorf("SHOW after SET WARNING = %q, want warning", got)
	}
	if len(rs[2].Rows) != 1 || len(rs[2].Notices) != 0 {
		t.Fatalf("at warning: %d rows, notices %q; want 1 row and no notice", len(rs[2].Rows), rs[2].Notices)
	}
	if spent, _ := f.led.Spent("alice", "census"); spent.Epsilon != 0.1 {
		t.Fatalf("the silent answer spent %+v, want ε 0.1: silence must not skip the charge", spent)
	}
	for _, c := range []struct {
		set    string
		notice bool
	}{
		{"SET client_min_messages = error", false},
		{"SET client_min_messages TO 'notice'", true},
		{"SET client_min_messages = debug", true}, // debug2
		{"SET client_min_messages = log", true},
		{"SET client_min_messages = warning", false},
		{"RESET client_min_messages", true},
	} {
		// A new literal each time: a fresh answer, not a repeat.
		rs := mustQuery(t, f.s, c.set+"; SELECT COUNT(*) FROM people WHERE age > "+strings.Repeat("1", len(c.set)%7+1))
		if got := len(rs[1].Notices) == 1; got != c.notice {
			t.Errorf("%s: notices %q, want a notice: %v", c.set, rs[1].Notices, c.notice)
		}
	}
	_, err := query(f.s, context.Background(), "SET client_min_messages = loud")
	var se *sqlerr.Error
	if !sqlerr.HasCode(err, sqlerr.InvalidParameterValue) || !strings.Contains(err.Error(), `"loud"`) {
		t.Fatalf("SET client_min_messages = loud: %v, want 22023 naming the value", err)
	} else if errors.As(err, &se) && !strings.Contains(se.Hint, "warning") {
		t.Errorf("hint %q does not list the values", se.Hint)
	}
	if rs := mustQuery(t, f.s, "SHOW client_min_messages"); rs[0].Rows[0][0].Str != "notice" {
		t.Errorf("a refused SET changed the level to %v", rs[0].Rows)
	}
}

// The level's ranks are PostgreSQL's order for client_min_messages, and
// noticeLevel is NOTICE's.
func TestMessageLevels(t *testing.T) {
	if messageLevels[noticeLevel] != "notice" {
		t.Fatalf("noticeLevel %d is %q", noticeLevel, messageLevels[noticeLevel])
	}
	order := []string{"debug5", "debug1", "log", "notice", "warning", "error"}
	for i := 1; i < len(order); i++ {
		a, _, _ := messageLevel(order[i-1])
		b, _, _ := messageLevel(order[i])
		if a >= b {
			t.Errorf("%s ranks %d, not below %s (%d)", order[i-1], a, order[i], b)
		}
	}
	if _, v, err := messageLevel("'DEBUG'"); err != nil || v != "debug2" {
		t.Errorf("debug = %q, %v; want debug2", v, err)
	}
}

// Startup settings: client_min_messages as its own startup parameter and
// -c/-- settings in options (libpq's PGOPTIONS) apply as SET would; a
// switch that is not a setting, or a bad value, refuses the session.
func TestStartupSettings(t *testing.T) {
	cases := []struct {
		params map[string]string
		want   [][2]string
		code   sqlerr.Code // zero: no error
	}{
		{map[string]string{"client_min_messages": "warning"}, [][2]string{{"client_min_messages", "warning"}}, sqlerr.Code{}},
		{map[string]string{"options": "-c client_min_messages=error  --application-name=etl\t-cstatement_timeout=5s"},
			[][2]string{{"client_min_messages", "error"}, {"application_name", "etl"}, {"statement_timeout", "5s"}}, sqlerr.Code{}},
		{map[string]string{"options": `-c search_path=a\ b`}, [][2]string{{"search_path", "a b"}}, sqlerr.Code{}},
		{map[string]string{"options": "-d 5"}, nil, sqlerr.FeatureNotSupported},
		{map[string]string{"options": "-c client_min_messages"}, nil, sqlerr.SyntaxError},
		{map[string]string{}, nil, sqlerr.Code{}},
	}
	for _, c := range cases {
		got, err := startupSettings(c.params)
		if c.code != (sqlerr.Code{}) {
			if !sqlerr.HasCode(err, c.code) {
				t.Errorf("%v: error %v, want %s", c.params, err, c.code.SQLState)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%v: %q, %v; want %q", c.params, got, err, c.want)
		}
	}

	p, _, _ := groupsFixture(t)
	h := p.PGHandler()
	ctx := context.Background()
	ps, err := h.NewSession(ctx, "alice", map[string]string{"options": "-c client_min_messages=warning"})
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	w := &recorder{t: t}
	if err := ps.Query(ctx, "SELECT COUNT(*) FROM visits", w); err != nil || len(w.rows) != 1 {
		t.Fatalf("query: %v, %d rows", err, len(w.rows))
	}
	if n := w.done[0].Cost.Notices; len(n) != 0 || !w.done[0].Cost.Private || w.done[0].Cost.Epsilon <= 0 {
		t.Errorf("with -c client_min_messages=warning: cost %+v; want charged, no notice", w.done[0].Cost)
	}
	// A BI tool that cannot run SET gives ε in its connection options
	// (pgjdbc's options property, libpq's options= or PGOPTIONS).
	eps, err := h.NewSession(ctx, "alice", map[string]string{"options": "-c ddp.epsilon=0.5"})
	if err != nil {
		t.Fatal(err)
	}
	defer eps.Close()
	w = &recorder{t: t}
	if err := eps.Query(ctx, "SELECT COUNT(*) FROM visits WHERE k > 5", w); err != nil || w.done[0].Cost.Epsilon != 0.5 {
		t.Errorf("with -c ddp.epsilon=0.5: %v, cost %+v; want ε 0.5 charged", err, w.done)
	}
	for _, params := range []map[string]string{
		{"client_min_messages": "shouting"},
		{"options": "-c server_version=1"},
		{"options": "-c ddp.epsilon=2"}, // above alice's max_epsilon 1
	} {
		if s, err := h.NewSession(ctx, "alice", params); err == nil {
			s.Close()
			t.Errorf("startup %v accepted", params)
		}
	}
}
