package policies

import (
	"fmt"
	"math"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// maxPreparedStatements bounds backend.prepared_statements: each is a
// plan held in a PostgreSQL session's memory.
const maxPreparedStatements = 10000

// checker collects problems, each located by the line of its path (or of
// the nearest ancestor the file wrote, for a key that is missing).
type checker struct {
	p  *Policy
	ps Problems
}

func (c *checker) add(path, format string, args ...any) {
	line := c.p.nearestLine(path)
	if line == 0 && c.p.lines != nil {
		// A top-level key the file left out (version:): point at the
		// start of the file rather than nowhere.
		line = 1
	}
	c.ps = append(c.ps, Problem{
		File:    c.p.Source,
		Line:    line,
		Path:    path,
		Message: prefixPath(path, fmt.Sprintf(format, args...)),
	})
}

// Validate completes the policy (lower-cased names, defaults, resolved
// domains, fingerprints) and checks it. It returns nil or Problems listing
// every problem found. Load calls it; call it again after changing a
// policy in Go.
func (p *Policy) Validate() error {
	c := &checker{p: p}
	p.normalize(c)
	p.checkTop(c)
	p.checkUsers(c)
	p.checkDatasets(c)
	return sortProblems(c.ps).err()
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*$`)

// checkIdent reports a name that the backends could not render as a plain
// identifier. Requiring plain identifiers means the dialect renderers never
// need to quote (and the same name works in PostgreSQL, MySQL and SQLite).
func (c *checker) checkIdent(path, what, s string) bool {
	switch {
	case !identRE.MatchString(s):
		c.add(path, "%s %q is not a legal identifier: use a letter or _ followed by letters, digits, _ or $", what, s)
	case len(s) > 63:
		c.add(path, "%s %q is %d bytes long; identifiers are at most 63 bytes (PostgreSQL truncates longer ones)", what, s[:20]+"...", len(s))
	default:
		return true
	}
	return false
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func (p *Policy) checkTop(c *checker) {
	if p.Version != 1 {
		c.add("version", "version must be 1 (write version: 1 at the top of the file), not %d", p.Version)
	}
	switch p.Backend.Driver {
	case "postgres", "mysql", "sqlite":
	case "":
		c.add("backend.driver", "missing; set it to postgres, mysql or sqlite")
	default:
		c.add("backend.driver", "unknown driver %q; use postgres, mysql or sqlite", p.Backend.Driver)
	}
	if strings.TrimSpace(p.Backend.DSN) == "" {
		c.add("backend.dsn", "empty; give the connection string (for example ${DDP_POSTGRES_DSN} to read it from the environment)")
	}
	if d := p.Backend.StatementTimeout.Duration; d <= 0 {
		c.add("backend.statement_timeout", "statement_timeout must be positive (e.g. 30s), not %s", d)
	}
	if d := p.Backend.ConnectTimeout.Duration; d <= 0 {
		c.add("backend.connect_timeout", "connect_timeout must be positive (e.g. 10s), not %s", d)
	}
	if p.Backend.MaxOpenConns < 1 {
		c.add("backend.max_open_conns", "max_open_conns must be at least 1, not %d", p.Backend.MaxOpenConns)
	}
	switch n := p.Backend.PreparedStatements; {
	case n < 0 || n > maxPreparedStatements:
		c.add("backend.prepared_statements", "prepared_statements must be 0 (off) to %d, not %d", maxPreparedStatements, n)
	case n > 0 && p.Backend.Driver != "postgres":
		c.add("backend.prepared_statements", "prepared_statements applies to the postgres driver only; remove it for %s", p.Backend.Driver)
	}
	p.checkLedger(c)
	if p.Listen.Auth != AuthPassword && p.Listen.Auth != AuthCleartext && p.Listen.Auth != AuthTrust {
		c.add("listen.auth", "auth must be password, cleartext or trust, not %q", p.Listen.Auth)
	}
	if p.Listen.Auth == AuthCleartext && p.Listen.TLSCert == "" {
		c.add("listen.auth", "auth: cleartext sends passwords in cleartext and is only allowed over TLS: set tls_cert and tls_key, or use auth: password (SCRAM)")
	}
	if (p.Listen.TLSCert == "") != (p.Listen.TLSKey == "") {
		c.add("listen", "tls_cert and tls_key go together: set both or neither")
	}
	if p.Listen.MaxConnections < 0 {
		c.add("listen.max_connections", "max_connections must be positive, not %d", p.Listen.MaxConnections)
	}
	if n := p.Listen.MaxQueryBytes; n < MinQueryBytes || n > MaxQueryBytes {
		c.add("listen.max_query_bytes", "max_query_bytes must be between %d and %d (1 GiB), not %d", MinQueryBytes, MaxQueryBytes, n)
	}
	if n := p.Listen.MaxPreparedStatements; n < 1 {
		c.add("listen.max_prepared_statements", "max_prepared_statements must be at least 1, not %d", n)
	}
	if n := p.Listen.MaxPreparedBytes; n < MinQueryBytes {
		c.add("listen.max_prepared_bytes", "max_prepared_bytes must be at least %d, not %d", MinQueryBytes, n)
	}
	if r := p.Ledger.Retention; r.MaxAgeHours < 0 || r.MaxMegabytes < 0 {
		c.add("ledger.retention", "retention limits must be ≥ 0 (0: no limit), not max_age_hours %d, max_megabytes %d", r.MaxAgeHours, r.MaxMegabytes)
	}
	if m := p.Listen.MinResponseMS; m < 0 || m > MaxMinResponseMS {
		c.add("listen.min_response_ms", "min_response_ms must be between 0 (no padding) and %d milliseconds, not %d", MaxMinResponseMS, m)
	}
	c.checkListen("listen.postgres", p.Listen.Postgres)
	c.checkListen("listen.mysql", p.Listen.MySQL)
	if p.Listen.Postgres != ListenOff && p.Listen.Postgres == p.Listen.MySQL {
		c.add("listen.mysql", "the MySQL and PostgreSQL front ends both listen on %s; give them different ports or set one to off", p.Listen.MySQL)
	}
	c.checkListen("listen.admin", p.Listen.Admin)
	if a := p.Listen.Admin; a != ListenOff && (a == p.Listen.Postgres || a == p.Listen.MySQL) {
		c.add("listen.admin", "the admin listener and a front end both listen on %s; give the admin listener its own port", a)
	}
	p.checkPeers(c)
}

// checkPeers checks listen.peer_id and listen.peers: replica numbers from
// 1 to MaxPeerID, each with the address of its PostgreSQL listener.
func (p *Policy) checkPeers(c *checker) {
	l := p.Listen
	if l.PeerID < 0 || l.PeerID > MaxPeerID {
		c.add("listen.peer_id", "peer_id must be between 1 and %d (0: no peers), not %d", MaxPeerID, l.PeerID)
	}
	if l.PeerSecretEnv != "" && (l.PeerID == 0 || len(l.Peers) == 0) {
		c.add("listen.peer_secret_env", "a peer secret is for replicas that are peers: set listen.peer_id and listen.peers too")
	}
	if len(l.Peers) > 0 && l.PeerID == 0 {
		c.add("listen.peer_id", "listen.peers is set but peer_id is not: give this replica its own number, one of the peers' keys")
	}
	ids := make([]int, 0, len(l.Peers))
	for id := range l.Peers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		path := fmt.Sprintf("listen.peers.%d", id)
		if id < 1 || id > MaxPeerID {
			c.add(path, "a peer's number must be between 1 and %d, not %d", MaxPeerID, id)
		}
		addr := l.Peers[id]
		if addr == ListenOff {
			c.add(path, "a peer's address is where its PostgreSQL front end listens (host:port), not off")
			continue
		}
		if c.checkAddr(path, addr, ": give the peer's listen.postgres (e.g. 10.0.0.2:15432)") && Port(addr) == 0 {
			c.add(path, "port 0 is any free port, which another replica cannot reach; give the peer's listen.postgres port")
		}
	}
}

func (c *checker) checkListen(path, addr string) {
	if addr == ListenOff {
		return
	}
	c.checkAddr(path, addr, " (e.g. 127.0.0.1:15432); write off to disable it")
}

// checkAddr checks that addr is host:port with a port number, saying so
// with hint after the address when it is not; it reports whether it is.
func (c *checker) checkAddr(path, addr, hint string) bool {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		c.add(path, "%q is not a host:port address"+hint, addr)
		return false
	}
	if Port(addr) < 0 {
		c.add(path, "port %q is not a number between 0 and 65535", port)
		return false
	}
	return true
}

// Port is the port number of a listen address (host:port), or -1 when it
// names none (off, not host:port, not a number from 0 to 65535).
func Port(addr string) int {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return -1
	}
	return n
}

// checkLedger checks the ledger section: a bbolt file, or a PostgreSQL
// database shared by replicas.
func (p *Policy) checkLedger(c *checker) {
	l := p.Ledger
	switch l.Driver {
	case LedgerBBolt:
		if l.DSN != "" {
			c.add("ledger.dsn", "dsn is for driver: postgres; a bbolt ledger is the file at ledger.path")
		}
		if l.Schema != "" {
			c.add("ledger.schema", "schema is for driver: postgres")
		}
		if !(l.Lease >= 0 && l.Lease <= 1) {
			c.add("ledger.lease", "%v is not a share of the budget between 0 (no leases) and 1; the default is %v", l.Lease, DefaultLedgerLease)
		}
	case LedgerPostgres:
		if strings.TrimSpace(l.DSN) == "" {
			c.add("ledger.dsn", "empty; a postgres ledger needs the connection string of its database (for example ${DDP_LEDGER_DSN})")
		}
		if p.has("ledger.path") {
			c.add("ledger.path", "path is for driver: bbolt; a postgres ledger lives in the database at ledger.dsn")
		}
		if p.has("ledger.lease") {
			c.add("ledger.lease", "lease is for driver: bbolt; a postgres ledger charges each query in one conditional UPDATE; remove ledger.lease")
		}
		if r := l.Retention; r.MaxAgeHours != 0 || r.MaxMegabytes != 0 {
			// Silently ignored, it would let the DBA believe releases
			// (noisy answers, keyed by their queries) are deleted.
			c.add("ledger.retention", "retention is for driver: bbolt; a postgres ledger keeps every release; remove ledger.retention")
		}
		if !ledgerSchemaRE.MatchString(l.Schema) {
			c.add("ledger.schema", "%q is not a plain lower-case identifier of at most 63 bytes (letters a-z, digits, _)", l.Schema)
		}
	default:
		c.add("ledger.driver", "unknown driver %q; use bbolt (one proxy, the default) or postgres (replicas sharing one ledger)", l.Driver)
	}
}

var ledgerSchemaRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)
