package main

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPgcliCompletion drives pgcli (Debian's package) in a tmux pane
// against the demo and checks that it completes a table name and a column
// name. pgcli learns both at connect from the catalog: the search path
// (SELECT * FROM unnest(current_schemas(true))), tables, columns,
// functions (pg_depend), data types. .ci/run installs pgcli and tmux.
func TestPgcliCompletion(t *testing.T) {
	pgcli, errP := exec.LookPath("pgcli")
	tmux, errT := exec.LookPath("tmux")
	if errP != nil || errT != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI: pgcli and tmux must be installed by .ci/run (%v, %v)", errP, errT)
		}
		t.Skip("pgcli or tmux is not installed (apt-get install pgcli tmux)")
	}
	pgAddr, _ := startDemoBoth(t)
	host, port, _ := strings.Cut(pgAddr, ":")
	home := t.TempDir()
	var rnd [6]byte
	rand.Read(rnd[:])
	socket := "ddp-pgcli-" + hex.EncodeToString(rnd[:]) // a tmux server of our own
	tm := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-L", socket}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	dsn := "postgresql://analyst:demo@" + host + ":" + port + "/demo?sslmode=disable"
	tm("new-session", "-d", "-s", "pg", "-x", "200", "-y", "50",
		"env HOME="+home+" XDG_CONFIG_HOME="+home+" "+pgcli+" --less-chatty '"+dsn+"'")
	t.Cleanup(func() { exec.Command(tmux, "-L", socket, "kill-server").Run() })

	// wait polls the pane until one of its lines other than the input
	// line satisfies ok (the completion menu is drawn below the prompt).
	// With input, the line is typed again every few seconds: pgcli loads
	// its completions in a background thread after connecting, and a line
	// typed before they arrive shows no menu until the next keystroke.
	wait := func(what, input string, ok func(line string) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		var pane string
		for n := 0; time.Now().Before(deadline); n++ {
			if input != "" && n%15 == 0 {
				tm("send-keys", "-t", "pg", "C-u")
				tm("send-keys", "-t", "pg", "-l", input)
			}
			pane = tm("capture-pane", "-p", "-t", "pg")
			for _, line := range strings.Split(pane, "\n") {
				if !strings.Contains(line, "demo>") && ok(line) {
					return
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
		log, _ := os.ReadFile(filepath.Join(home, "pgcli", "log"))
		t.Fatalf("pgcli did not show %s; pane:\n%s\npgcli log:\n%s", what, pane, log)
	}
	wait("its prompt", "", func(string) bool { return strings.Contains(tm("capture-pane", "-p", "-t", "pg"), "demo>") })
	fields := func(line string) []string { return strings.Fields(line) }
	wait("the table people in its completion menu", "SELECT * FROM peo", func(l string) bool {
		f := fields(l)
		return len(f) == 2 && f[0] == "people" && f[1] == "table"
	})
	wait("the column hours_per_week in its completion menu", "SELECT * FROM people WHERE hours_p", func(l string) bool {
		f := fields(l)
		return len(f) == 2 && f[0] == "hours_per_week" && f[1] == "column"
	})
	// The catalog queries pgcli ran at connect all succeeded.
	if log, err := os.ReadFile(filepath.Join(home, "pgcli", "log")); err == nil {
		if s := string(log); strings.Contains(s, "Traceback") || strings.Contains(s, " ERROR ") {
			t.Errorf("pgcli logged errors:\n%s", s)
		}
	}
}
