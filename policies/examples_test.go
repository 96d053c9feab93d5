package policies

import (
	"os"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

func exampleEnv(t *testing.T) {
	t.Helper()
	t.Setenv("DDP_PASSWORD_ALICE", "alice-pw")
	t.Setenv("DDP_PASSWORD_CAROL", "carol-pw")
	t.Setenv("DDP_POSTGRES_DSN", "postgres://reader:pw@db:5432/gowalla")
}

func TestExampleCensus(t *testing.T) {
	exampleEnv(t)
	p, err := Load("examples/census.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, people := p.LookupTable("", "people")
	if d == nil || d.Name != "census" || people.Unit != "person_id" || people.MaxRowsPerUnit != 1 || people.Public {
		t.Fatalf("people = %+v", people)
	}
	// Values from adult.names (the public documentation), counted by hand:
	// 8 work classes + "?", 16 education levels, 7 marital statuses, 14
	// occupations + "?", 6 relationships, 5 races, 2 sexes, 41 countries
	// + "?", ages 17..90, hours 1..99, education_num 1..16.
	sizes := map[string]int{
		"workclass": 9, "education": 16, "marital_status": 7, "occupation": 15,
		"relationship": 6, "race": 5, "sex": 2, "native_country": 42, "income": 2,
		"age": 90 - 17 + 1, "hours_per_week": 99, "education_num": 16,
	}
	for col, n := range sizes {
		c := people.Column(col)
		if c == nil || c.Domain == nil || len(c.Domain.Resolved) != n {
			t.Errorf("%s: want a domain of %d values", col, n)
		}
	}
	bounds := map[string][2]float64{
		"age": {17, 90}, "hours_per_week": {1, 99}, "capital_gain": {0, 100000}, "education_num": {1, 16},
	}
	for col, b := range bounds {
		c := people.Column(col)
		if c == nil || c.Type != TypeInteger || !c.HasBounds() || c.Lo() != b[0] || c.Hi() != b[1] {
			t.Errorf("%s: want integer bounds %v", col, b)
		}
	}
	inc := people.Column("income").Domain.Resolved
	if inc[0] != ir.String("<=50K") || inc[1] != ir.String(">50K") {
		t.Errorf("income domain = %v", inc)
	}
	if people.Column("fnlwgt") != nil {
		t.Error("fnlwgt must not be queryable")
	}
	if p.User("alice").Password != "alice-pw" || p.User("bob").SCRAMSHA256 == "" {
		t.Error("users")
	}
	if p.Backend.Driver != "sqlite" {
		t.Errorf("driver = %s", p.Backend.Driver)
	}
}

func TestExampleCheckins(t *testing.T) {
	exampleEnv(t)
	p, err := Load("examples/checkins.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Backend.Driver != "postgres" || p.Backend.DSN != "postgres://reader:pw@db:5432/gowalla" {
		t.Errorf("backend = %+v", p.Backend)
	}
	if p.Listen.MySQL != ListenOff {
		t.Errorf("mysql listen = %q", p.Listen.MySQL)
	}
	_, ck := p.LookupTable("public", "checkins")
	if ck == nil || ck.Unit != "user_id" || ck.MaxRowsPerUnit != 20 {
		t.Fatalf("checkins = %+v", ck)
	}
	lat, lon := ck.Column("latitude"), ck.Column("longitude")
	if lat.Type != TypeReal || lat.Lo() != 40.4774 || lat.Hi() != 40.9176 ||
		lon.Type != TypeReal || lon.Lo() != -74.2589 || lon.Hi() != -73.7004 {
		t.Errorf("coordinates: %v %v", lat.Bounds, lon.Bounds)
	}
	// A timestamptz with time bounds, so date_trunc and extract work on
	// it (declared text, every time query failed at the backend).
	if ct := ck.Column("checkin_time"); ct == nil || ct.Type != TypeTimestampTZ || len(ct.TimeBounds) != 2 {
		t.Errorf("checkin_time = %+v, want timestamptz with bounds", ct)
	}
	if n := len(ck.Column("cell").Domain.Resolved); n != 100 {
		t.Errorf("cell domain has %d values, want 100", n)
	}
	_, v := p.LookupTable("", "venues")
	if v == nil || !v.Public || v.Key != "location_id" || v.Column("category") == nil {
		t.Fatalf("venues = %+v", v)
	}
}

func TestExampleNeedsItsEnvironment(t *testing.T) {
	exampleEnv(t)
	t.Setenv("DDP_POSTGRES_DSN", "")
	t.Setenv("DDP_PASSWORD_CAROL", "")
	_, err := Load("examples/checkins.yaml")
	if err == nil {
		t.Fatal("loaded with an empty password")
	}
}

// TestOfflineLoad loads the examples without their environment, as
// check/explain/budget do, and lists what serve would need.
func TestOfflineLoad(t *testing.T) {
	for _, v := range []string{"DDP_POSTGRES_DSN", "DDP_PASSWORD_CAROL", "DDP_PASSWORD_ALICE"} {
		if old, ok := os.LookupEnv(v); ok {
			t.Cleanup(func() { os.Setenv(v, old) })
			os.Unsetenv(v)
		}
	}
	if _, err := Load("examples/checkins.yaml"); err == nil {
		t.Fatal("a strict load succeeded without the environment")
	}
	p, err := LoadWith("examples/checkins.yaml", LoadOptions{Offline: true})
	if err != nil {
		t.Fatalf("offline load: %v", err)
	}
	// Each variable is listed with the setting that refers to it, so that
	// a message about one setting names only its own.
	for setting, want := range map[string]string{
		"backend.dsn":                "DDP_POSTGRES_DSN",
		"users.carol.password_env":   "DDP_PASSWORD_CAROL",
		"ledger.dsn":                 "",
		"users.dave.password_env":    "",
		"users.unknown.password_env": "",
	} {
		if got := strings.Join(p.MissingEnvOf(setting), ","); got != want {
			t.Errorf("MissingEnvOf(%s) = %q, want %q (MissingEnv %v)", setting, got, want, p.MissingEnv)
		}
	}
}
