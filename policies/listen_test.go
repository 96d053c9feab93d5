package policies

import (
	"strings"
	"testing"
	"time"
)

// listenBase is a minimal valid policy the listen tests add a listen
// section to (with DDP_TEST_PASSWORD set).
const listenBase = `version: 1
backend: {driver: sqlite, dsn: x.db}
users: [{name: a, password_env: DDP_TEST_PASSWORD, budgets: {d: {epsilon: 1}}}]
datasets: {d: {tables: {t: {unit: id, columns: {x: {type: integer}}}}}}
`

func TestListenSettings(t *testing.T) {
	t.Setenv("DDP_TEST_PASSWORD", "pw")
	base := listenBase
	p, err := LoadBytes("/etc/ddp/p.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if p.Listen.Auth != AuthPassword || p.Listen.MaxConnections != 100 {
		t.Fatalf("defaults: %+v", p.Listen)
	}
	p, err = LoadBytes("/etc/ddp/p.yaml", []byte(base+"listen: {auth: trust, tls_cert: c.pem, tls_key: /k.pem}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Listen.Auth != AuthTrust || p.Listen.TLSCert != "/etc/ddp/c.pem" || p.Listen.TLSKey != "/k.pem" {
		t.Fatalf("explicit: %+v", p.Listen)
	}
	_, err = LoadBytes("p.yaml", []byte(base+"listen: {auth: md5, tls_cert: c.pem}\n"))
	if err == nil || !strings.Contains(err.Error(), "p.yaml:5: listen.auth: auth must be password, cleartext or trust") ||
		!strings.Contains(err.Error(), "tls_cert and tls_key go together") {
		t.Fatalf("bad listen settings: %v", err)
	}
	// cleartext is only allowed with TLS.
	_, err = LoadBytes("p.yaml", []byte(base+"listen: {auth: cleartext}\n"))
	if err == nil || !strings.Contains(err.Error(), "only allowed over TLS") {
		t.Fatalf("cleartext without TLS: %v", err)
	}
	p, err = LoadBytes("/etc/ddp/p.yaml", []byte(base+"listen: {auth: cleartext, tls_cert: c.pem, tls_key: k.pem}\n"))
	if err != nil || p.Listen.Auth != AuthCleartext {
		t.Fatalf("cleartext with TLS: %v", err)
	}
}

// TestLimits: the size limits of the front ends and the backend connect
// timeout have defaults, take explicit values, and refuse nonsense at
// their line.
func TestLimits(t *testing.T) {
	t.Setenv("DDP_TEST_PASSWORD", "pw")
	base := `version: 1
users: [{name: a, password_env: DDP_TEST_PASSWORD, budgets: {d: {epsilon: 1}}}]
datasets: {d: {tables: {t: {unit: id, columns: {x: {type: integer}}}}}}
`
	p, err := LoadBytes("p.yaml", []byte(base+"backend: {driver: sqlite, dsn: x.db}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Listen.MaxQueryBytes != 4<<20 || p.Listen.MaxPreparedStatements != 1000 || p.Listen.MaxPreparedBytes != 16<<20 ||
		p.Backend.ConnectTimeout.Duration != 10*time.Second {
		t.Fatalf("defaults: %+v %+v", p.Listen, p.Backend)
	}
	p, err = LoadBytes("p.yaml", []byte(base+`backend: {driver: sqlite, dsn: x.db, connect_timeout: 3s}
listen: {max_query_bytes: 65536, max_prepared_statements: 5, max_prepared_bytes: 100000}
`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Listen.MaxQueryBytes != 65536 || p.Listen.MaxPreparedStatements != 5 || p.Listen.MaxPreparedBytes != 100000 ||
		p.Backend.ConnectTimeout.Duration != 3*time.Second {
		t.Fatalf("explicit: %+v %+v", p.Listen, p.Backend)
	}
	_, err = LoadBytes("p.yaml", []byte(base+`backend: {driver: sqlite, dsn: x.db, connect_timeout: 0s}
listen: {max_query_bytes: 100, max_prepared_statements: 0, max_prepared_bytes: 0}
`))
	for _, want := range []string{
		"p.yaml:4: backend.connect_timeout: connect_timeout must be positive",
		"p.yaml:5: listen.max_query_bytes: max_query_bytes must be between 1024 and 1073741824",
		"p.yaml:5: listen.max_prepared_statements: max_prepared_statements must be at least 1",
		"p.yaml:5: listen.max_prepared_bytes: max_prepared_bytes must be at least 1024",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad limits: %v; want %q", err, want)
		}
	}
}

func TestMinResponseRange(t *testing.T) {
	t.Setenv("DDP_TEST_PASSWORD", "pw")
	base := listenBase
	for _, tt := range []struct {
		value   string
		wantErr bool
	}{{"0", false}, {"1500", false}, {"3600000", false}, {"-1", true}, {"3600001", true}} {
		_, err := LoadBytes("p.yaml", []byte(base+"listen: {min_response_ms: "+tt.value+"}\n"))
		if (err != nil) != tt.wantErr {
			t.Errorf("min_response_ms: %s: error %v, want error %v", tt.value, err, tt.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "p.yaml:5: listen.min_response_ms: min_response_ms must be between 0") {
			t.Errorf("min_response_ms: %s: %v", tt.value, err)
		}
	}
}

// TestAdminListener: the admin listener is off unless configured, takes a
// host:port, and refuses a bad address or one a front end already uses,
// at its line; metrics.per_user defaults to false.
func TestAdminListener(t *testing.T) {
	t.Setenv("DDP_TEST_PASSWORD", "pw")
	base := listenBase
	p, err := LoadBytes("p.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if p.Listen.Admin != ListenOff || p.Metrics.PerUser {
		t.Fatalf("defaults: admin %q, per_user %v", p.Listen.Admin, p.Metrics.PerUser)
	}
	p, err = LoadBytes("p.yaml", []byte(base+"listen: {admin: 127.0.0.1:9187}\nmetrics: {per_user: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Listen.Admin != "127.0.0.1:9187" || !p.Metrics.PerUser {
		t.Fatalf("explicit: admin %q, per_user %v", p.Listen.Admin, p.Metrics.PerUser)
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"not an address", "listen: {admin: localhost}\n", `p.yaml:5: listen.admin: "localhost" is not a host:port address`},
		{"front end's port", "listen: {admin: 127.0.0.1:15432}\n", "p.yaml:5: listen.admin: the admin listener and a front end both listen on 127.0.0.1:15432"},
		{"unknown metrics key", "metrics: {per_dataset: true}\n", "per_dataset"},
	} {
		_, err := LoadBytes("p.yaml", []byte(base+tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestPeers: listen.peer_id numbers the replica among listen.peers (the
// replicas' PostgreSQL listen addresses); both are checked at their line.
func TestPeers(t *testing.T) {
	t.Setenv("DDP_TEST_PASSWORD", "pw")
	t.Setenv("DDP_TEST_PEER_SECRET", "0123456789abcdef0123")
	t.Setenv("DDP_TEST_SHORT_SECRET", "short")
	base := listenBase
	p, err := LoadBytes("p.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if p.Listen.PeerID != 0 || len(p.Listen.Peers) != 0 {
		t.Fatalf("defaults: peer_id %d, peers %v", p.Listen.PeerID, p.Listen.Peers)
	}
	p, err = LoadBytes("p.yaml", []byte(base+"listen:\n  peer_id: 2\n  peers: {1: 10.0.0.1:15432, 2: '10.0.0.2:15432', 255: \"[fd00::3]:15432\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Listen.PeerID != 2 || len(p.Listen.Peers) != 3 || p.Listen.Peers[1] != "10.0.0.1:15432" || p.Listen.Peers[255] != "[fd00::3]:15432" {
		t.Fatalf("explicit: peer_id %d, peers %v", p.Listen.PeerID, p.Listen.Peers)
	}
	p, err = LoadBytes("p.yaml", []byte(base+"listen: {peer_id: 1, peers: {2: 10.0.0.2:15432}, peer_secret_env: DDP_TEST_PEER_SECRET}\n"))
	if err != nil || p.Listen.PeerSecret != "0123456789abcdef0123" {
		t.Fatalf("peer_secret_env: %v, secret %q", err, p.Listen.PeerSecret)
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"peers without peer_id", "listen: {peers: {1: 10.0.0.1:15432}}\n", "listen.peer_id: listen.peers is set but peer_id is not"},
		{"peer_id too large", "listen: {peer_id: 256}\n", "peer_id must be between 1 and 255 (0: no peers), not 256"},
		{"negative peer_id", "listen: {peer_id: -1}\n", "not -1"},
		{"peer number 0", "listen: {peer_id: 1, peers: {0: 10.0.0.1:15432}}\n", "listen.peers.0: a peer's number must be between 1 and 255, not 0"},
		{"not an address", "listen: {peer_id: 1, peers: {2: replica2}}\n", `listen.peers.2: "replica2" is not a host:port address`},
		{"port 0", "listen: {peer_id: 1, peers: {2: 10.0.0.2:0}}\n", "listen.peers.2: port 0 is any free port"},
		{"off", "listen: {peer_id: 1, peers: {2: off}}\n", "listen.peers.2: a peer's address is where its PostgreSQL front end listens"},
		{"not a number", "listen: {peer_id: 1, peers: {two: 10.0.0.2:15432}}\n", "two"},
		{"secret without peers", "listen: {peer_secret_env: DDP_TEST_PEER_SECRET}\n", "listen.peer_secret_env: a peer secret is for replicas that are peers"},
		{"secret not set", "listen: {peer_id: 1, peers: {2: 10.0.0.2:15432}, peer_secret_env: DDP_TEST_NO_SUCH_SECRET}\n", "environment variable DDP_TEST_NO_SUCH_SECRET is not set"},
		{"secret too short", "listen: {peer_id: 1, peers: {2: 10.0.0.2:15432}, peer_secret_env: DDP_TEST_SHORT_SECRET}\n", "holds 5 bytes; the replicas' shared secret needs at least 16"},
	} {
		_, err := LoadBytes("p.yaml", []byte(base+tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}
