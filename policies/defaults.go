package policies

import (
	"sort"
	"strconv"
	"strings"
	"time"
)

// Defaults applied to keys the file leaves out. A key written with a zero
// value (max_rows_per_unit: 0) is not defaulted: it is reported, because
// silently turning a DBA's explicit 0 into 1 hides a mistake.
const (
	DefaultListenPostgres   = "127.0.0.1:15432"
	DefaultListenMySQL      = "127.0.0.1:13306"
	DefaultLedgerPath       = "ddp-ledger.db"
	DefaultStatementTimeout = 30 * time.Second
	DefaultConnectTimeout   = 10 * time.Second
	DefaultMaxOpenConns     = 10
	DefaultEpsilon          = 0.1
	DefaultMaxEpsilon       = 1.0
	DefaultMaxRowsPerUnit   = 1
	// DefaultMaxConnections caps concurrent client connections.
	DefaultMaxConnections = 100
	// DefaultMaxQueryBytes caps one client message (statement text or one
	// execute's parameters): BI SQL is small, and the cap bounds what one
	// client can make the proxy hold.
	DefaultMaxQueryBytes         = 4 << 20
	DefaultMaxPreparedStatements = 1000
	// DefaultPreparedStatements is backend.prepared_statements for the
	// postgres driver: statements kept per backend connection, one per
	// shape of private query.
	DefaultPreparedStatements = 256
	DefaultMaxPreparedBytes   = 16 << 20
	// DefaultLedgerLease is ledger.lease for the bbolt ledger: a charge
	// takes 1% of the dataset's budget ahead with one fdatasync, and
	// the charges that fit in it take none.
	DefaultLedgerLease = 0.01
	// Bounds of max_query_bytes: MySQL's own range of max_allowed_packet.
	MinQueryBytes = 1 << 10
	MaxQueryBytes = 1 << 30
	// ListenOff as a listen address disables that front end.
	ListenOff = "off"
)

// has reports whether the file wrote the key at path.
func (p *Policy) has(path string) bool {
	_, ok := p.lines[path]
	return ok
}

// userPath is the path used in messages for user i: users.<name> when the
// name addresses exactly this user (see doc.go), users.<i> otherwise.
func (p *Policy) userPath(i int) string {
	idx := "users." + strconv.Itoa(i)
	u := p.Users[i]
	if u == nil {
		return idx
	}
	name := strings.ToLower(u.Name)
	if name == "" || isDigits(name) {
		return idx
	}
	for j := range i {
		if p.Users[j] != nil && strings.ToLower(p.Users[j].Name) == name {
			return idx
		}
	}
	return "users." + name
}

// normalize lower-cases table and column keys, fills the Name fields and the
// file-order name lists, and applies defaults. It is idempotent, so
// Validate may run it on a policy that was built in Go rather than loaded.
func (p *Policy) normalize(c *checker) {
	if p.Listen.Postgres == "" {
		p.Listen.Postgres = DefaultListenPostgres
	}
	if p.Listen.Auth == "" {
		p.Listen.Auth = AuthPassword
	}
	if p.Listen.MaxConnections == 0 {
		p.Listen.MaxConnections = DefaultMaxConnections
	}
	if p.Listen.Admin == "" {
		p.Listen.Admin = ListenOff
	}
	if p.Listen.MySQL == "" {
		p.Listen.MySQL = DefaultListenMySQL
	}
	if p.Listen.MaxQueryBytes == 0 && !p.has("listen.max_query_bytes") {
		p.Listen.MaxQueryBytes = DefaultMaxQueryBytes
	}
	if p.Listen.MaxPreparedStatements == 0 && !p.has("listen.max_prepared_statements") {
		p.Listen.MaxPreparedStatements = DefaultMaxPreparedStatements
	}
	if p.Listen.MaxPreparedBytes == 0 && !p.has("listen.max_prepared_bytes") {
		p.Listen.MaxPreparedBytes = DefaultMaxPreparedBytes
	}
	if p.Ledger.Path == "" {
		p.Ledger.Path = DefaultLedgerPath
	}
	if p.Ledger.Driver == "" {
		p.Ledger.Driver = LedgerBBolt
	}
	if p.Ledger.Driver == LedgerBBolt && p.Ledger.Lease == 0 && !p.has("ledger.lease") {
		p.Ledger.Lease = DefaultLedgerLease
	}
	if p.Ledger.Driver == LedgerPostgres && p.Ledger.Schema == "" {
		p.Ledger.Schema = DefaultLedgerSchema
	}
	if p.Backend.StatementTimeout.Duration == 0 && !p.has("backend.statement_timeout") {
		p.Backend.StatementTimeout.Duration = DefaultStatementTimeout
	}
	if p.Backend.ConnectTimeout.Duration == 0 && !p.has("backend.connect_timeout") {
		p.Backend.ConnectTimeout.Duration = DefaultConnectTimeout
	}
	if p.Backend.MaxOpenConns == 0 && !p.has("backend.max_open_conns") {
		p.Backend.MaxOpenConns = DefaultMaxOpenConns
	}
	if p.Backend.Driver == "postgres" && p.Backend.PreparedStatements == 0 && !p.has("backend.prepared_statements") {
		p.Backend.PreparedStatements = DefaultPreparedStatements
	}
	for i, u := range p.Users {
		if u == nil {
			continue
		}
		up := p.userPath(i)
		if u.DefaultEpsilon == 0 && !p.has(up+".default_epsilon") {
			u.DefaultEpsilon = DefaultEpsilon
		}
		if u.MaxEpsilon == 0 && !p.has(up+".max_epsilon") {
			u.MaxEpsilon = DefaultMaxEpsilon
		}
	}
	p.DatasetNames = orderedNames(p.DatasetNames, p.Datasets)
	for _, dn := range p.DatasetNames {
		d := p.Datasets[dn]
		if d == nil {
			d = &Dataset{}
			p.Datasets[dn] = d
		}
		d.Name = dn
		dp := joinPath("datasets", dn)
		if d.Model == "" && !p.has(dp+".model") {
			d.Model = ModelDP
		}
		if d.Neighbors == "" && !p.has(dp+".neighbors") {
			d.Neighbors = NeighborsUnbounded
		}
		if d.ClampCounts == nil {
			t := true
			d.ClampCounts = &t
		}
		if d.ShareReleases == nil {
			t := true
			d.ShareReleases = &t
		}
		d.Tables = lowerMap(c, joinPath(dp, "tables"), d.Tables)
		d.TableNames = orderedNames(lowerAll(d.TableNames), d.Tables)
		for _, tn := range d.TableNames {
			t := d.Tables[tn]
			if t == nil {
				t = &Table{}
				d.Tables[tn] = t
			}
			t.Name = tn
			tp := joinPath(dp, "tables."+tn)
			if !t.Public && t.MaxRowsPerUnit == 0 && !p.has(tp+".max_rows_per_unit") {
				t.MaxRowsPerUnit = DefaultMaxRowsPerUnit
			}
			t.Columns = lowerMap(c, joinPath(tp, "columns"), t.Columns)
			t.ColumnNames = orderedNames(lowerAll(t.ColumnNames), t.Columns)
			for _, cn := range t.ColumnNames {
				col := t.Columns[cn]
				if col == nil {
					col = &Column{}
					t.Columns[cn] = col
				}
				col.Name = cn
			}
		}
	}
}

// lowerMap returns m with lower-cased keys, reporting keys that collide.
func lowerMap[V any](c *checker, path string, m map[string]V) map[string]V {
	if m == nil {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]V, len(m))
	for _, k := range keys {
		lk := strings.ToLower(k)
		if _, dup := out[lk]; dup {
			c.add(joinPath(path, lk), "two entries are named %q ignoring case (names are case-insensitive); keep one", lk)
			continue
		}
		out[lk] = m[k]
	}
	return out
}

func lowerAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.ToLower(n)
	}
	return out
}

// orderedNames returns names if it lists exactly the keys of m (the file
// order recorded at load), otherwise the keys of m sorted: a policy built
// in Go has no file order.
func orderedNames[V any](names []string, m map[string]V) []string {
	if len(names) == len(m) {
		ok := true
		for _, n := range names {
			if _, in := m[n]; !in {
				ok = false
				break
			}
		}
		if ok {
			return names
		}
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
