package policies

import (
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// Policy is a loaded, validated policy file. The yaml tags are the file
// schema (see README.md, "Policy reference"); fields without a yaml tag are
// derived at load time.
type Policy struct {
	Version  int                 `yaml:"version"`
	Backend  Backend             `yaml:"backend"`
	Listen   Listen              `yaml:"listen"`
	Ledger   Ledger              `yaml:"ledger"`
	Metrics  Metrics             `yaml:"metrics"`
	Users    []*User             `yaml:"users"`
	Datasets map[string]*Dataset `yaml:"datasets"`

	// Source is the file the policy was loaded from ("" for LoadBytes
	// without a name).
	Source string `yaml:"-"`
	// DatasetNames lists the datasets in file order.
	DatasetNames []string `yaml:"-"`
	// MissingEnv lists the environment variables an offline load found
	// unset (see LoadOptions.Offline), each with the setting that refers
	// to it, so that a message about one setting names only its own
	// variables (MissingEnvOf).
	MissingEnv []EnvRef `yaml:"-"`
	lines      map[string]int
}

// Backend says where the real data lives.
type Backend struct {
	// Driver is postgres, mysql or sqlite.
	Driver string `yaml:"driver"`
	// DSN is the driver's connection string; ${VAR} is expanded from the
	// environment at load time.
	DSN string `yaml:"dsn"`
	// StatementTimeout bounds every backend statement (default 30s). The
	// proxy gives up on a backend that does not answer at all shortly after
	// it (backends.ClientTimeout).
	StatementTimeout Duration `yaml:"statement_timeout"`
	// ConnectTimeout bounds opening one backend connection (default 10s).
	ConnectTimeout Duration `yaml:"connect_timeout"`
	// MaxOpenConns is the connection pool size (default 10).
	MaxOpenConns int `yaml:"max_open_conns"`
	// PreparedStatements, when > 0, keeps up to that many prepared
	// statements per PostgreSQL connection for private queries (one per
	// query shape): PostgreSQL then binds and runs them without parsing
	// and planning each. Default DefaultPreparedStatements for postgres;
	// 0 turns it off. Connections behind a pooler never cache them
	// (backends/postgres.ownSession).
	PreparedStatements int `yaml:"prepared_statements"`
}

// Listen configures the wire front ends.
type Listen struct {
	Postgres string `yaml:"postgres"` // default 127.0.0.1:15432; "off" disables
	MySQL    string `yaml:"mysql"`    // default 127.0.0.1:13306; "off" disables
	// Auth is password (default: SCRAM-SHA-256 for PostgreSQL clients,
	// cleartext only over TLS), cleartext (PostgreSQL clients on TLS
	// connections send the password in cleartext, for clients without
	// SCRAM; connections without TLS still use SCRAM; needs tls_cert) or
	// trust (any password is accepted for a known user: for the demo on a
	// laptop only).
	Auth string `yaml:"auth"`
	// TLSCert and TLSKey are PEM files; when both are set the front ends
	// offer TLS (relative paths are relative to the policy file).
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
	// MaxConnections caps concurrent client connections (default 100).
	MaxConnections int `yaml:"max_connections"`
	// MaxQueryBytes caps one client message: a statement's text, or one
	// execute's bound parameters (default 4 MiB). It is the MySQL front
	// end's max_allowed_packet.
	MaxQueryBytes int `yaml:"max_query_bytes"`
	// MaxPreparedStatements and MaxPreparedBytes cap what one connection
	// may keep prepared: the number of statements (default 1000) and the
	// total size of their text (default 16 MiB).
	MaxPreparedStatements int `yaml:"max_prepared_statements"`
	MaxPreparedBytes      int `yaml:"max_prepared_bytes"`
	// MinResponseMS pads every private answer (fresh or cached, an error
	// too) to take at least this many milliseconds from the statement's
	// receipt (default 0: no padding), to hide how long the backend took
	// (README, "Timing"). Applied by session, so both front ends get it.
	MinResponseMS int `yaml:"min_response_ms"`
	// Admin is the operators' HTTP listener (Prometheus /metrics, /healthz,
	// /readyz, the budget page): host:port, or off (the default). It is
	// not authenticated: bind it to a private address.
	Admin string `yaml:"admin"`
	// PeerID (1 to 255) numbers this replica among Peers, the replicas'
	// PostgreSQL listen addresses by number, so that a PostgreSQL cancel
	// request the load balancer gives to another replica reaches the one
	// holding the query (pgwire.Config.PeerID), and MySQL connection ids
	// are unique across replicas (mysqlwire.Config.PeerID). 0, the
	// default: off.
	PeerID int            `yaml:"peer_id"`
	Peers  map[int]string `yaml:"peers"`
	// PeerSecretEnv names the environment variable holding a secret the
	// replicas share, which lets a MySQL KILL typed on one replica reach
	// the connection on another (mysqlwire.Config.PeerSecret): the
	// forwarded request is keyed with it and the killer's user name.
	PeerSecretEnv string `yaml:"peer_secret_env"`
	// PeerSecret is PeerSecretEnv's value, read at load.
	PeerSecret string `yaml:"-"`
}

// MinPeerSecret is the shortest listen.peer_secret_env value accepted: it
// keys the requests replicas forward to one another.
const MinPeerSecret = 16

// MaxPeerID is the largest listen.peer_id (pgwire.MaxPeerID).
const MaxPeerID = 255

// Metrics configures what the admin listener's /metrics exports.
type Metrics struct {
	// PerUser labels the ε-spent counter with the user as well as the
	// dataset (default false: who queries how much is itself something
	// a DBA may not want in a monitoring system).
	PerUser bool `yaml:"per_user"`
}

// MaxMinResponseMS bounds listen.min_response_ms (one hour): a larger value
// is a typo, not a policy.
const MaxMinResponseMS = 3_600_000

// MinResponse is listen.min_response_ms as a duration.
func (l Listen) MinResponse() time.Duration { return time.Duration(l.MinResponseMS) * time.Millisecond }

// Authentication modes of Listen.Auth.
const (
	AuthPassword  = "password"
	AuthCleartext = "cleartext"
	AuthTrust     = "trust"
)

// Ledger configures the durable budget ledger.
type Ledger struct {
	// Driver is bbolt (the default: one embedded file at Path, for one
	// proxy) or postgres (tables in a PostgreSQL database at DSN, shared
	// by several proxy replicas).
	Driver string `yaml:"driver"`
	// Path of the bbolt file (default ddp-ledger.db, relative paths are
	// relative to the policy file's directory).
	Path string `yaml:"path"`
	// DSN of the PostgreSQL ledger database (driver postgres); ${VAR} is
	// expanded from the environment at load time.
	DSN string `yaml:"dsn"`
	// Schema holds the PostgreSQL ledger's tables (default ddp_ledger).
	Schema string `yaml:"schema"`
	// Replica names this serving process in the audit history and in its
	// pending reservations (default: hostname-pid).
	Replica string `yaml:"replica"`
	// Retention bounds the stored releases (none by default: kept
	// forever). An evicted release is charged again when repeated.
	Retention Retention `yaml:"retention"`
	// Lease (bbolt only; default DefaultLedgerLease, 0 turns it off) is
	// the share of a dataset's budget a charge takes ahead for the
	// charges after it, so that they need no fdatasync of their own. A
	// crash or power loss leaves up to that much per user and dataset
	// charged but unused; a clean stop returns it.
	Lease float64 `yaml:"lease"`
}

// Retention is ledger.retention: releases older than MaxAgeHours, and the
// oldest ones while all take more than MaxMegabytes, are evicted (0: no
// limit). Budgets and the audit history are never evicted.
type Retention struct {
	MaxAgeHours  int `yaml:"max_age_hours"`
	MaxMegabytes int `yaml:"max_megabytes"`
}

// Ledger drivers.
const (
	LedgerBBolt    = "bbolt"
	LedgerPostgres = "postgres"
	// DefaultLedgerSchema is the PostgreSQL schema of the ledger tables.
	DefaultLedgerSchema = "ddp_ledger"
)

// User is an analyst allowed to connect.
type User struct {
	Name string `yaml:"name"`
	// Exactly one way of checking the password:
	PasswordEnv string `yaml:"password_env"` // the cleartext password is in this environment variable
	// SCRAMSHA256 is a PostgreSQL-format verifier:
	// SCRAM-SHA-256$<iterations>:<salt b64>$<StoredKey b64>:<ServerKey b64>.
	SCRAMSHA256 string `yaml:"scram_sha_256"`
	// MySQLNativePassword is "*" + 40 hex digits (SHA1(SHA1(password))).
	MySQLNativePassword string `yaml:"mysql_native_password"`

	// Budgets is the total budget per dataset name. A user without an entry
	// for a dataset cannot query it.
	Budgets map[string]Budget `yaml:"budgets"`
	// DefaultEpsilon is the ε of one query when the session sets none
	// (default 0.1); MaxEpsilon caps what a session may set (default 1).
	DefaultEpsilon float64 `yaml:"default_epsilon"`
	MaxEpsilon     float64 `yaml:"max_epsilon"`
	// DeltaPerQuery is the δ one query may spend on threshold key selection
	// (GROUP BY without a declared domain); 0 forbids it.
	DeltaPerQuery float64 `yaml:"delta_per_query"`

	// Password is the cleartext read from PasswordEnv at load time.
	Password string `yaml:"-"`
}

// Budget is an (ε, δ) pair (budget.Budget: the ledger and the release
// step use it without importing policies).
type Budget = budget.Budget

// Model names.
const (
	ModelDP       = "dp"
	ModelBlowfish = "blowfish"
	ModelInduced  = "induced"
	ModelDDP      = "ddp"
)

// Neighbour models of ModelDP.
const (
	NeighborsUnbounded = "unbounded" // add or remove one unit (default)
	NeighborsBounded   = "bounded"   // replace one unit's rows; the number of units is public
)

// Dataset is a set of tables about the same individuals, under one privacy
// model and one budget per user.
type Dataset struct {
	// Model is dp (default), blowfish, induced or ddp.
	Model string `yaml:"model"`
	// Neighbors is unbounded (default) or bounded.
	Neighbors string `yaml:"neighbors"`
	// ClampCounts clamps noisy counts at 0 (default true).
	ClampCounts *bool `yaml:"clamp_counts"`
	// ShareReleases serves a release made for one user to every user who
	// asks the identical query, free (default true). false keys releases
	// by user too: nobody learns that someone else asked a query, but N
	// users who pool their answers average N independent draws. Not part
	// of the fingerprint (see fingerprint.go).
	ShareReleases *bool             `yaml:"share_releases"`
	Tables        map[string]*Table `yaml:"tables"`

	// Blowfish and induced models (policies/blowfish.go): the secret graph,
	// published count constraints and their reading.
	Secrets      *Secrets      `yaml:"secrets"`
	Constraints  []*Constraint `yaml:"constraints"`
	Compensation string        `yaml:"compensation"`
	// Analysis is the load-time analysis of secrets and constraints
	// (policies/analysis.go); nil for other models.
	Analysis *Analysis `yaml:"-"`
	// Synopses are range-count synopses released once and answered from
	// (policies/synopsis.go).
	Synopses []*Synopsis `yaml:"synopses"`

	// Dependence is the ddp model's declared dependence between records
	// (policies/dependence.go).
	Dependence *Dependence `yaml:"dependence"`

	// Name is the dataset's key in the file.
	Name string `yaml:"-"`
	// Fingerprint identifies this dataset's privacy-relevant configuration
	// (a hash of its resolved form). Cached releases are keyed by it, so
	// changing the policy of a dataset never serves an answer computed under
	// the old one.
	Fingerprint string `yaml:"-"`
	// TableNames lists the tables in file order.
	TableNames []string `yaml:"-"`
}

// Table is a backend table exposed by the policy. Names are matched
// case-insensitively (keys are stored lower-case).
type Table struct {
	// Schema is the backend schema ("" = the backend's default).
	Schema string `yaml:"schema"`
	// Public tables are returned exactly and may be joined many-to-one on
	// Key. They need no unit.
	Public bool   `yaml:"public"`
	Key    string `yaml:"key"`
	// Unit is the privacy unit column of a private table (a person, a
	// user, a household): the thing DP protects.
	Unit string `yaml:"unit"`
	// MaxRowsPerUnit is the contribution bound k (default 1), enforced in
	// the backend SQL.
	MaxRowsPerUnit int `yaml:"max_rows_per_unit"`
	// Columns lists the queryable columns. Columns that are not listed
	// cannot be used anywhere in a query on a private table. A public table
	// without columns exposes all of its columns.
	Columns map[string]*Column `yaml:"columns"`

	// Name is the table's key in the file (lower-case).
	Name string `yaml:"-"`
	// ColumnNames lists the columns in file order.
	ColumnNames []string `yaml:"-"`
	// UnitUnique is set when the backend's schema guarantees at most one
	// row per unit (the unit column is NOT NULL with a unique index); the
	// backend then needs no per-unit bounding window. Set by
	// prepare.MarkUniqueUnits at startup, never from the policy file.
	UnitUnique bool `yaml:"-"`
}

// Column types.
const (
	TypeInteger = "integer"
	TypeReal    = "real"
	TypeText    = "text"
	TypeBoolean = "boolean"
	// Dates and times (see ir.KindDate): bounds are ISO strings.
	TypeDate        = "date"
	TypeTimestamp   = "timestamp"
	TypeTimestampTZ = "timestamptz"
)

// ResultType is the type the proxy sends a column of policy type t in
// (text for anything else): the one mapping from policy types, which the
// private answers, parameter inference and both emulated catalogs follow.
func ResultType(t string) ir.ColType {
	if rt, ok := resultTypes[t]; ok {
		return rt
	}
	return ir.TypeText
}

var resultTypes = map[string]ir.ColType{
	TypeInteger: ir.TypeInt8, TypeReal: ir.TypeFloat8, TypeBoolean: ir.TypeBool,
	TypeDate: ir.TypeDate, TypeTimestamp: ir.TypeTimestamp, TypeTimestampTZ: ir.TypeTimestampTZ,
}

// Column describes one queryable column.
type Column struct {
	// Type is integer, real, text, boolean, date, timestamp or
	// timestamptz.
	Type string `yaml:"type"`
	// RawBounds is the bounds list as written: numbers for integer and
	// real columns, ISO strings for dates and times. Validation resolves
	// it into Bounds or TimeBounds.
	RawBounds []Bound `yaml:"bounds"`
	// Bounds [lo, hi] of a numeric column clamp its values in SUM, AVG
	// and computations, in the backend; without them the extent of a
	// static Domain serves (the planner's clampBounds), else those are
	// refused.
	Bounds []float64 `yaml:"-"`
	// TimeBounds [lo, hi] of a date or time column (ir values of the
	// column's kind) are required to compute with it (date_trunc,
	// extract, intervals): values are clamped to them as they enter a
	// computation.
	TimeBounds []ir.Value `yaml:"-"`
	// Domain is required to GROUP BY the column (unless threshold key
	// selection with δ > 0 is allowed).
	Domain *Domain `yaml:"domain"`

	// Name is the column's key in the file (lower-case).
	Name string `yaml:"-"`
}

// Bound is one end of a column's bounds as written in the file.
type Bound struct {
	// IsNumber is set for a YAML number (Num); otherwise Text holds the
	// scalar as written (an ISO date or timestamp, quoted or not), and
	// NotScalar is set for a list or mapping.
	IsNumber  bool
	Num       float64
	Text      string
	NotScalar bool
}

// UnmarshalYAML reads a number or keeps the scalar's text; what it must
// be depends on the column's type, which validation checks.
func (b *Bound) UnmarshalYAML(n *yaml.Node) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.ScalarNode {
		b.NotScalar = true
		return nil
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		if err := n.Decode(&b.Num); err == nil {
			b.IsNumber = true
			return nil
		}
	}
	b.Text = n.Value
	return nil
}

// Domain is the public set of values a column can take.
type Domain struct {
	// Values lists the values (of the column's type).
	Values []any `yaml:"values"`
	// Range [lo, hi] is an inclusive integer range.
	Range []int64 `yaml:"range"`
	// Query is a SQL query over a public table returning one column.
	Query string `yaml:"query"`

	// Resolved holds Values or the expanded Range as typed values (empty
	// for Query domains, which the planner evaluates on the backend).
	Resolved []ir.Value `yaml:"-"`
}

// Duration is a time.Duration written as "30s", "2m" in YAML.
type Duration struct{ time.Duration }
