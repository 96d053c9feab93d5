package pgwire

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/internal/testlog"
)

// TestLogging: records carry conn_id (and user once known), never the
// query text or parameters, and a client leaving is not an error.
func TestLogging(t *testing.T) {
	var buf testlog.Sink
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ts := startServer(t, Config{Logger: log})
	conn := ts.connect(t, pgx.QueryExecModeCacheStatement)
	const marker = "MARKER-7f3a"
	if _, err := run(conn, "echo text", marker); err != nil {
		t.Fatal(err)
	}
	if _, err := run(conn, "fail 42601 "+marker); err == nil {
		t.Fatal("fail succeeded")
	}
	if _, err := run(conn, "internal "+marker); err == nil {
		t.Fatal("internal succeeded")
	}
	// A cancelled statement is routine: logged, but not as a warning.
	if _, err := run(conn, "cancelled"); err == nil {
		t.Fatal("cancelled succeeded")
	}
	// Leave without Terminate: the server sees EOF.
	_ = conn.PgConn().Conn().Close()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(buf.String(), "client disconnected") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	out := buf.String()
	if strings.Contains(out, marker) {
		t.Errorf("query text or a parameter was logged:\n%s", out)
	}
	sawInternal := false
	for line := range strings.Lines(out) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("bad log line %q: %v", line, err)
		}
		if _, ok := rec["conn_id"]; !ok {
			t.Errorf("record without conn_id: %s", line)
		}
		if rec["user"] != "alice" {
			t.Errorf("record without user: %s", line)
		}
		if rec["level"] == "ERROR" || rec["level"] == "WARN" {
			if rec["sqlstate"] == "XX000" {
				sawInternal = true
				continue
			}
			t.Errorf("unexpected %s record: %s", rec["level"], line)
		}
	}
	if !sawInternal {
		t.Errorf("the internal error was not logged for the operator:\n%s", out)
	}
}
