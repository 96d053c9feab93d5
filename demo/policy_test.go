package demo_test

import (
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/xdg-go/scram"

	"github.com/ddp-proxy/ddp-proxy/demo"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

func loadDemoPolicy(t *testing.T, f demo.Files) *policies.Policy {
	t.Helper()
	pol, err := policies.Load(f.Policy)
	if err != nil {
		t.Fatalf("the demo policy does not load:\n%v", err)
	}
	return pol
}

func TestPolicy(t *testing.T) {
	f := buildDemo(t)
	pol := loadDemoPolicy(t, f)

	if len(pol.MissingEnv) != 0 {
		t.Errorf("the demo policy needs environment variables %v; it must need none", pol.MissingEnv)
	}
	if pol.Backend.Driver != "sqlite" || !strings.Contains(pol.Backend.DSN, f.Database) {
		t.Errorf("backend %s %q, want sqlite at %s", pol.Backend.Driver, pol.Backend.DSN, f.Database)
	}
	if pol.Ledger.Path != f.Ledger {
		t.Errorf("ledger %s, want %s", pol.Ledger.Path, f.Ledger)
	}
	if pol.Listen.Postgres != "127.0.0.1:15432" || pol.Listen.MySQL != "127.0.0.1:13306" || pol.Listen.Auth != policies.AuthTrust {
		t.Errorf("listen %+v, want postgres 127.0.0.1:15432, mysql 127.0.0.1:13306, auth trust", pol.Listen)
	}
	u := pol.User(demo.DemoUser)
	if u == nil {
		t.Fatalf("no user %s", demo.DemoUser)
	}
	want := policies.Budget{Epsilon: 10, Delta: 1e-5}
	if u.Budgets["census"] != want || u.Budgets["social"] != want || u.Budgets["social_ddp"] != want {
		t.Errorf("budgets %v, want census, social and social_ddp %v", u.Budgets, want)
	}
	if u.DefaultEpsilon != 0.1 || u.MaxEpsilon != 1 || u.DeltaPerQuery != 1e-6 {
		t.Errorf("default_epsilon %v, max_epsilon %v, delta_per_query %v; want 0.1, 1, 1e-6", u.DefaultEpsilon, u.MaxEpsilon, u.DeltaPerQuery)
	}

	tables := []struct {
		name    string
		dataset string // "" = not queryable
		public  bool
	}{
		{"people", "census", false},
		{"checkins", "social", false},
		{"cells", "social", true},
		{"venue_categories", "social", true},
		{"checkins_ddp", "social_ddp", false},
		{"friendships", "", false},
	}
	for _, tt := range tables {
		ds, tbl := pol.LookupTable("", tt.name)
		switch {
		case tt.dataset == "" && tbl != nil:
			t.Errorf("table %s is in the policy; it must not be queryable", tt.name)
		case tt.dataset != "" && (tbl == nil || ds.Name != tt.dataset || tbl.Public != tt.public):
			t.Errorf("table %s: want dataset %s, public %v", tt.name, tt.dataset, tt.public)
		}
	}
	people := pol.Datasets["census"].Tables["people"]
	if people.Unit != "person_id" || people.MaxRowsPerUnit != 1 || len(people.Columns) != 14 {
		t.Errorf("people: unit %s, k %d, %d columns; want person_id, 1, all 14 besides the unit", people.Unit, people.MaxRowsPerUnit, len(people.Columns))
	}
	checkins := pol.Datasets["social"].Tables["checkins"]
	if checkins.Unit != "user_id" || checkins.MaxRowsPerUnit != 20 {
		t.Errorf("checkins: unit %s, k %d; want user_id, 20", checkins.Unit, checkins.MaxRowsPerUnit)
	}
}

// TestPolicyMatchesData checks every declared column against the
// database: it exists, its values lie within the declared bounds, and its
// non-NULL values are all in the declared domain (a value outside it would
// silently fall out of every GROUP BY).
func TestPolicyMatchesData(t *testing.T) {
	f := buildDemo(t)
	pol := loadDemoPolicy(t, f)
	db := openRO(t, f.Database)
	for _, dn := range pol.DatasetNames {
		ds := pol.Datasets[dn]
		for _, tn := range ds.TableNames {
			tbl := ds.Tables[tn]
			for _, cn := range tbl.ColumnNames {
				col := tbl.Columns[cn]
				t.Run(tn+"."+cn, func(t *testing.T) {
					if n := scalar[int64](t, db, "SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?", tn, cn); n != 1 {
						t.Fatalf("no column %s in table %s", cn, tn)
					}
					if col.HasBounds() {
						q := fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE %s < ? OR %s > ?", tn, cn, cn)
						if n := scalar[int64](t, db, q, col.Lo(), col.Hi()); n != 0 {
							t.Errorf("%d values outside the bounds [%v, %v]", n, col.Lo(), col.Hi())
						}
					}
					if col.Domain == nil {
						return
					}
					dom := map[string]bool{}
					for _, v := range col.Domain.Resolved {
						dom[valueKey(v)] = true
					}
					if col.Domain.Query != "" {
						rows(t, db, col.Domain.Query, func(rs *sql.Rows) error {
							var v any
							err := rs.Scan(&v)
							dom[fmt.Sprint(v)] = true
							return err
						})
					}
					if len(dom) == 0 {
						t.Fatal("empty domain")
					}
					rows(t, db, fmt.Sprintf("SELECT DISTINCT %s FROM %s WHERE %s IS NOT NULL", cn, tn, cn), func(rs *sql.Rows) error {
						var v any
						if err := rs.Scan(&v); err != nil {
							return err
						}
						if !dom[fmt.Sprint(v)] {
							t.Errorf("value %v is not in the declared domain", v)
						}
						return nil
					})
				})
			}
		}
	}
}

func valueKey(v ir.Value) string {
	switch v.Kind {
	case ir.KindInt:
		return fmt.Sprint(v.Int)
	case ir.KindString:
		return v.Str
	}
	return fmt.Sprint(v)
}

// TestAnalystVerifier runs whole SCRAM-SHA-256 exchanges (xdg-go/scram, an
// implementation independent of ours) against the verifier in the demo
// policy: the password "demo" must authenticate and others must not.
func TestAnalystVerifier(t *testing.T) {
	pol := loadDemoPolicy(t, buildDemo(t))
	v := pol.User(demo.DemoUser).SCRAMSHA256
	creds := parseVerifier(t, v)

	tests := []struct {
		name     string
		password string
		wantOK   bool
	}{
		{"demo", demo.DemoPassword, true},
		{"wrong case", "Demo", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scramExchange(t, creds, tt.password); got != tt.wantOK {
				t.Errorf("authenticated = %v, want %v", got, tt.wantOK)
			}
		})
	}
}

func parseVerifier(t *testing.T, v string) scram.StoredCredentials {
	t.Helper()
	var iters int
	var salt64, stored64, server64 string
	rest, ok := strings.CutPrefix(v, "SCRAM-SHA-256$")
	if !ok {
		t.Fatal("verifier does not start with SCRAM-SHA-256$")
	}
	iterSalt, keys, _ := strings.Cut(rest, "$")
	iterS, salt64, _ := strings.Cut(iterSalt, ":")
	stored64, server64, _ = strings.Cut(keys, ":")
	if _, err := fmt.Sscan(iterS, &iters); err != nil || iters != 4096 {
		t.Fatalf("iterations %q, want 4096", iterS)
	}
	dec := func(s string) []byte {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return scram.StoredCredentials{
		KeyFactors: scram.KeyFactors{Salt: string(dec(salt64)), Iters: iters},
		StoredKey:  dec(stored64),
		ServerKey:  dec(server64),
	}
}

// scramExchange reports whether a client with password completes a SCRAM
// conversation with a server holding creds (and the client accepts the
// server's signature).
func scramExchange(t *testing.T, creds scram.StoredCredentials, password string) bool {
	t.Helper()
	srv, err := scram.SHA256.NewServer(func(string) (scram.StoredCredentials, error) { return creds, nil })
	if err != nil {
		t.Fatal(err)
	}
	cli, err := scram.SHA256.NewClient(demo.DemoUser, password, "")
	if err != nil {
		t.Fatal(err)
	}
	sc, cc := srv.NewConversation(), cli.NewConversation()
	msg, err := cc.Step("")
	for err == nil && !sc.Done() {
		if msg, err = sc.Step(msg); err != nil {
			break
		}
		if msg, err = cc.Step(msg); err != nil {
			break
		}
	}
	return err == nil && sc.Valid() && cc.Valid()
}

// TestPolicyHasNoSecretsFromEnv guards the promise that the demo runs on a
// bare machine: the policy file references no environment variable.
func TestPolicyHasNoSecretsFromEnv(t *testing.T) {
	data, err := os.ReadFile(buildDemo(t).Policy)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "${") || strings.Contains(string(data), "password_env") {
		t.Error("the demo policy refers to the environment")
	}
}

// The policy a newcomer reads names the addresses the demo was started
// on, including an IPv6 host and a MySQL front end that is off; addresses
// the file could not name as they are are refused before anything is
// written.
func TestBuildListen(t *testing.T) {
	cases := []struct {
		l           demo.Listen
		wantComment string
	}{
		{demo.Listen{Postgres: "127.0.0.1:25432", MySQL: "[::1]:25306"}, "# mysql -h ::1 -P 25306 -u analyst"},
		{demo.Listen{Postgres: "localhost:6543", MySQL: "off"}, "# The MySQL front end is off"},
	}
	for _, c := range cases {
		f, err := demo.BuildListen(context.Background(), t.TempDir(), c.l)
		if err != nil {
			t.Fatalf("BuildListen(%+v): %v", c.l, err)
		}
		pol := loadDemoPolicy(t, f)
		if pol.Listen.Postgres != c.l.Postgres || pol.Listen.MySQL != c.l.MySQL {
			t.Errorf("listen %q, %q; want %q, %q", pol.Listen.Postgres, pol.Listen.MySQL, c.l.Postgres, c.l.MySQL)
		}
		text, err := os.ReadFile(f.Policy)
		if err != nil {
			t.Fatal(err)
		}
		host, port, _ := strings.Cut(c.l.Postgres, ":")
		for _, want := range []string{"# psql -h " + host + " -p " + port + " -U analyst", c.wantComment} {
			if !strings.Contains(string(text), want) {
				t.Errorf("policy for %+v lacks %q", c.l, want)
			}
		}
	}
	for _, bad := range []demo.Listen{
		{Postgres: "127.0.0.1", MySQL: "off"},                // no port
		{Postgres: "127.0.0.1:1\"x", MySQL: "off"},           // would end the YAML string
		{Postgres: "127.0.0.1:15432", MySQL: "127.0.0.1"},    // no port
		{Postgres: "127.0.0.1:15432", MySQL: "h\\ost:13306"}, // an escape in YAML
	} {
		dir := t.TempDir()
		if _, err := demo.BuildListen(context.Background(), dir, bad); err == nil {
			t.Errorf("BuildListen(%+v) succeeded; want the address refused", bad)
		}
		if _, err := os.Stat(dir + "/" + demo.PolicyFile); err == nil {
			t.Errorf("BuildListen(%+v) wrote a policy before refusing", bad)
		}
	}
}
