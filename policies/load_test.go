package policies

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// mustLoad loads an inline policy named name.
func mustLoad(t *testing.T, name, src string) *Policy {
	t.Helper()
	p, err := LoadBytes(name, []byte(src))
	if err != nil {
		t.Fatalf("LoadBytes: %v", err)
	}
	return p
}

// problemsOf loads src and returns its problems (failing if it loads).
func problemsOf(t *testing.T, src string) Problems {
	t.Helper()
	_, err := LoadBytes("p.yaml", []byte(src))
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("want Problems, got %v", err)
	}
	return ps
}

func TestDefaults(t *testing.T) {
	fixtureEnv(t)
	p, err := Load("testdata/policies/minimal.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Expected values are the documented defaults, written out by hand.
	checks := []struct {
		name      string
		got, want any
	}{
		{"listen.postgres", p.Listen.Postgres, "127.0.0.1:15432"},
		{"listen.mysql", p.Listen.MySQL, "127.0.0.1:13306"},
		{"ledger.path", p.Ledger.Path, filepath.Join("testdata", "policies", "ddp-ledger.db")},
		{"backend.dsn (sqlite, relative)", p.Backend.DSN, filepath.Join("testdata", "policies", "data.db")},
		{"statement_timeout", p.Backend.StatementTimeout.Duration, 30 * time.Second},
		{"max_open_conns", p.Backend.MaxOpenConns, 10},
		{"default_epsilon", p.Users[0].DefaultEpsilon, 0.1},
		{"max_epsilon", p.Users[0].MaxEpsilon, 1.0},
		{"delta_per_query", p.Users[0].DeltaPerQuery, 0.0},
		{"password", p.Users[0].Password, "pw"},
		{"model", p.Datasets["shop"].Model, "dp"},
		{"neighbors", p.Datasets["shop"].Neighbors, "unbounded"},
		{"clamp", p.Datasets["shop"].ClampCountsAtZero(), true},
		{"share_releases", p.Datasets["shop"].SharesReleases(), true},
		{"min_response_ms", p.Listen.MinResponseMS, 0},
		{"k", p.Datasets["shop"].Tables["orders"].MaxRowsPerUnit, 1},
		{"table key lower-cased", p.Datasets["shop"].TableNames, []string{"orders"}},
		{"column key lower-cased", p.Datasets["shop"].Tables["orders"].ColumnNames, []string{"amount"}},
		{"table name", p.Datasets["shop"].Tables["orders"].Name, "orders"},
		{"column name", p.Datasets["shop"].Tables["orders"].Columns["amount"].Name, "amount"},
		{"dataset name", p.Datasets["shop"].Name, "shop"},
		// The unit keeps its case: it is a column reference, not a key.
		{"unit", p.Datasets["shop"].Tables["orders"].Unit, "Customer_ID"},
	}
	for _, c := range checks {
		if !equalAny(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func equalAny(a, b any) bool {
	as, ok1 := a.([]string)
	bs, ok2 := b.([]string)
	if ok1 && ok2 {
		return strings.Join(as, ",") == strings.Join(bs, ",")
	}
	return a == b
}

func TestExplicitValuesKept(t *testing.T) {
	fixtureEnv(t)
	p, err := Load("testdata/policies/full.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	shop := p.Datasets["shop"]
	if p.Listen.MySQL != ListenOff || p.Listen.Postgres != "0.0.0.0:5433" {
		t.Errorf("listen = %+v", p.Listen)
	}
	if p.Ledger.Path != "/var/lib/ddp/ledger.db" {
		t.Errorf("absolute ledger path changed to %q", p.Ledger.Path)
	}
	if p.Backend.DSN != "postgres://reader@db.example:5432/shop" {
		t.Errorf("dsn = %q", p.Backend.DSN)
	}
	if p.Backend.StatementTimeout.Duration != 90*time.Second || p.Backend.MaxOpenConns != 3 {
		t.Errorf("backend = %+v", p.Backend)
	}
	if shop.Neighbors != NeighborsBounded || shop.ClampCountsAtZero() || shop.SharesReleases() {
		t.Errorf("shop = %s clamp %v share %v", shop.Neighbors, shop.ClampCountsAtZero(), shop.SharesReleases())
	}
	if p.Listen.MinResponseMS != 250 || p.Listen.MinResponse() != 250*time.Millisecond {
		t.Errorf("min_response_ms = %d", p.Listen.MinResponseMS)
	}
	if k := shop.Tables["orders"].MaxRowsPerUnit; k != 10000 {
		t.Errorf("k = %d", k)
	}
	if u := p.User("ANN"); u == nil || u.DefaultEpsilon != 0.25 || u.MaxEpsilon != 0.25 || u.DeltaPerQuery != 1e-6 {
		t.Errorf("ann = %+v", u)
	}
	if got := strings.Join(p.DatasetNames, ","); got != "shop,hr" {
		t.Errorf("DatasetNames = %s, want file order shop,hr", got)
	}
	if got := strings.Join(shop.Tables["orders"].ColumnNames, ","); got != "amount,items,paid,country,weight" {
		t.Errorf("ColumnNames = %s, want file order", got)
	}
	// A public table gets no k.
	if k := shop.Tables["countries"].MaxRowsPerUnit; k != 0 {
		t.Errorf("public table k = %d, want 0", k)
	}
}

func TestEnvExpansion(t *testing.T) {
	t.Setenv("DDP_T_USER", "u")
	t.Setenv("DDP_T_PW", "p$w")
	t.Setenv("DDP_T_EMPTY", "")
	tests := []struct {
		name, dsn, want, wantErr string
	}{
		{"several", "postgres://${DDP_T_USER}:${DDP_T_PW}@h/db", "postgres://u:p$w@h/db", ""},
		{"bare dollar kept", "postgres://u:pa$$word@h/$db", "postgres://u:pa$$word@h/$db", ""},
		{"set but empty", "x${DDP_T_EMPTY}y", "xy", ""},
		{"missing named", "${DDP_T_USER}@${DDP_T_NOPE_1}/${DDP_T_NOPE_2}", "", "environment variables DDP_T_NOPE_1, DDP_T_NOPE_2 are not set"},
		{"unterminated", "x${DDP_T_USER", "", "unterminated ${"},
		{"bad name", "x${1A}", "", "${1A} is not a valid environment reference"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := "version: 1\nbackend: {driver: postgres, dsn: '" + tc.dsn + "'}\ndatasets: {d: {tables: {t: {unit: id}}}}\n"
			p, err := LoadBytes("p.yaml", []byte(src))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), "p.yaml:2: backend.dsn: ") || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want p.yaml:2: backend.dsn: ...%s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Backend.DSN != tc.want {
				t.Errorf("dsn = %q, want %q", p.Backend.DSN, tc.want)
			}
		})
	}
}

func TestRelativePaths(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, ledger, dsn, wantLedger, wantDSN string
	}{
		{"plain", "l.db", "data.db", filepath.Join(dir, "l.db"), filepath.Join(dir, "data.db")},
		{"subdir", "state/l.db", "file:db/data.db?mode=ro", filepath.Join(dir, "state/l.db"), "file:" + filepath.Join(dir, "db/data.db") + "?mode=ro"},
		{"absolute", "/abs/l.db", "file:/abs/data.db", "/abs/l.db", "file:/abs/data.db"},
		{"memory", "", ":memory:", filepath.Join(dir, "ddp-ledger.db"), ":memory:"},
		{"memory uri", "", "file:x?mode=memory", filepath.Join(dir, "ddp-ledger.db"), "file:x?mode=memory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := "version: 1\nbackend: {driver: sqlite, dsn: '" + tc.dsn + "'}\n"
			if tc.ledger != "" {
				src += "ledger: {path: '" + tc.ledger + "'}\n"
			}
			src += "datasets: {d: {tables: {t: {unit: id}}}}\n"
			path := filepath.Join(dir, "policy.yaml")
			if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
			p, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if p.Ledger.Path != tc.wantLedger || p.Backend.DSN != tc.wantDSN {
				t.Errorf("ledger %q dsn %q, want %q %q", p.Ledger.Path, p.Backend.DSN, tc.wantLedger, tc.wantDSN)
			}
		})
	}
	// LoadBytes without a name keeps relative paths relative (to the
	// working directory).
	p := mustLoad(t, "", "version: 1\nbackend: {driver: sqlite, dsn: d.db}\ndatasets: {d: {tables: {t: {unit: id}}}}\n")
	if p.Ledger.Path != "ddp-ledger.db" || p.Backend.DSN != "d.db" {
		t.Errorf("unnamed: ledger %q dsn %q", p.Ledger.Path, p.Backend.DSN)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want ErrNotExist", err)
	}
}

func TestEmptyFile(t *testing.T) {
	for _, src := range []string{"", "# only a comment\n"} {
		ps := problemsOf(t, src)
		if len(ps) != 1 || !strings.Contains(ps[0].Message, "the policy file is empty") {
			t.Errorf("%q: %v", src, ps)
		}
	}
}

func TestDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"2m30s", 150 * time.Second, false},
		{"500ms", 500 * time.Millisecond, false},
		{"30", 0, true},
		{"soon", 0, true},
		{"[1]", 0, true},
	}
	for _, tc := range tests {
		var v struct {
			D Duration `yaml:"d"`
		}
		err := yaml.Unmarshal([]byte("d: "+tc.in), &v)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err = %v, wantErr %v", tc.in, err, tc.wantErr)
		}
		if err == nil && v.D.Duration != tc.want {
			t.Errorf("%s = %v, want %v", tc.in, v.D.Duration, tc.want)
		}
		if tc.wantErr && err != nil && !strings.Contains(err.Error(), "line 1:") {
			t.Errorf("%s: error %q lacks the line", tc.in, err)
		}
	}
	out, err := yaml.Marshal(struct {
		D Duration `yaml:"d"`
	}{Duration{90 * time.Second}})
	if err != nil || strings.TrimSpace(string(out)) != "d: 1m30s" {
		t.Errorf("marshal = %q, %v", out, err)
	}
}
