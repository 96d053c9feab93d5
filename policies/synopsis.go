package policies

import (
	"math"
	"strconv"
	"strings"
)

// Synopsis declares a range-count synopsis on an ordinal column of a
// blowfish dataset with distance secrets on that column:
//
//	synopses:
//	  - {table: people, column: salary, mechanism: ordered_hierarchical, fanout: 16}
//
// The proxy releases it once per (table, column, ε) — the ordered
// mechanism (θ = 1) or the ordered hierarchical mechanism (Blowfish §7) —
// and answers every later COUNT(*) whose only predicate is a range on the
// column from it, without further charge (package synopsis).
type Synopsis struct {
	Table  string `yaml:"table" json:"table"`
	Column string `yaml:"column" json:"column"`
	// Mechanism is ordered (θ must be 1) or ordered_hierarchical; the
	// default is ordered for θ = 1, ordered_hierarchical otherwise.
	Mechanism string `yaml:"mechanism" json:"mechanism"`
	// Fanout is the fan-out f of the hierarchical trees (default 16, the
	// paper's choice; ignored by ordered).
	Fanout int `yaml:"fanout" json:"fanout"`

	// Theta is the integer distance threshold derived from the dataset's
	// secrets (⌊θ⌋: values of an integer column are at most θ apart iff
	// at most ⌊θ⌋ apart). Lo and Hi are the column's declared range.
	Theta int64 `yaml:"-" json:"theta"`
	Lo    int64 `yaml:"-" json:"lo"`
	Hi    int64 `yaml:"-" json:"hi"`
}

// Synopsis mechanisms (the names package synopsis uses).
const (
	SynopsisOrdered             = "ordered"
	SynopsisOrderedHierarchical = "ordered_hierarchical"
)

// DefaultSynopsisFanout is Blowfish §7.3's f = 16.
const DefaultSynopsisFanout = 16

// maxSynopsisFanout keeps trees meaningful: beyond it a level is as wide
// as the domains we allow.
const maxSynopsisFanout = 1024

// SynopsisFor returns the synopsis declared on table.column, or nil.
func (d *Dataset) SynopsisFor(table, column string) *Synopsis {
	for _, s := range d.Synopses {
		if s != nil && strings.EqualFold(s.Table, table) && strings.EqualFold(s.Column, column) {
			return s
		}
	}
	return nil
}

// checkSynopses validates a dataset's synopses. It runs before the
// dataset's tables are checked, so it reads the raw column declarations
// (Domain.Range, not the resolved domain) and compares the secrets column
// case-insensitively.
func (c *checker) checkSynopses(dp string, d *Dataset) {
	seen := map[string]string{}
	for i, s := range d.Synopses {
		sp := dp + ".synopses." + strconv.Itoa(i)
		if s == nil {
			c.add(sp, "empty synopsis; write {table: t, column: c, mechanism: ordered_hierarchical}")
			continue
		}
		s.Table = strings.ToLower(s.Table)
		s.Column = strings.ToLower(s.Column)
		if d.Model != ModelBlowfish {
			c.add(sp, "range synopses need model: blowfish with secrets: {distance: {column: %s, theta: θ}}; under model %s they have no calibrated sensitivity", s.Column, modelName(d.Model))
			continue
		}
		if len(d.Constraints) > 0 {
			c.add(sp, "range synopses are calibrated to distance secrets without published constraints (a neighbour moves one value by at most θ); with constraints a neighbour may move several tuples, so remove the synopsis or the constraints")
			continue
		}
		sec := d.Secrets
		if sec == nil || sec.Kind != SecretsDistance {
			c.add(sp, "range synopses need secrets: {distance: {column: %s, theta: θ}} on the synopsis column", s.Column)
			continue
		}
		if !strings.EqualFold(sec.Column, s.Column) {
			c.add(sp+".column", "the synopsis is on %s but the distance secrets protect %s; a synopsis is only calibrated for the secrets' column", s.Column, strings.ToLower(sec.Column))
			continue
		}
		if s.Table == "" {
			c.add(sp+".table", "table is required: the private table that holds %s", s.Column)
			continue
		}
		t := d.Tables[s.Table]
		switch {
		case t == nil:
			c.add(sp+".table", "table %q is not declared in this dataset", s.Table)
			continue
		case t.Public:
			c.add(sp+".table", "table %s is public: its counts are exact already, a synopsis protects a private table", s.Table)
			continue
		}
		if prev, dup := seen[s.Table+"."+s.Column]; dup {
			c.add(sp, "a synopsis on %s.%s is already declared at %s", s.Table, s.Column, c.p.Position(prev))
			continue
		}
		seen[s.Table+"."+s.Column] = sp
		col := t.Column(s.Column)
		switch {
		case col == nil:
			c.add(sp+".column", "column %q is not declared in table %s", s.Column, s.Table)
			continue
		case col.Type != TypeInteger:
			c.add(sp+".column", "a range synopsis needs an ordinal integer column; %s is %s", s.Column, col.Type)
			continue
		case col.Domain == nil || len(col.Domain.Range) != 2 || len(col.Domain.Values) > 0 || col.Domain.Query != "":
			c.add(sp+".column", "a range synopsis needs the column's integer range: declare domain: {range: [lo, hi]} on %s.%s", s.Table, s.Column)
			continue
		}
		s.Lo, s.Hi = col.Domain.Range[0], col.Domain.Range[1]
		if s.Lo > s.Hi || uint64(s.Hi)-uint64(s.Lo) >= MaxRangeValues {
			c.add(sp+".column", "the range of %s must be [lo, hi] with lo ≤ hi and at most %d values", s.Column, MaxRangeValues)
			continue
		}
		if !finite(sec.Theta) || sec.Theta < 1 {
			c.add(sp, "distance secrets with θ = %v < 1 relate no two values of an integer column: every range count is exact under this policy, so a synopsis has nothing to protect; remove it or raise θ", sec.Theta)
			continue
		}
		s.Theta = int64(min(math.Floor(sec.Theta), float64(s.Hi-s.Lo+1)))
		switch s.Mechanism {
		case "":
			s.Mechanism = SynopsisOrderedHierarchical
			if s.Theta == 1 {
				s.Mechanism = SynopsisOrdered
			}
		case SynopsisOrdered:
			if s.Theta != 1 {
				c.add(sp+".mechanism", "the ordered mechanism is for θ = 1 (adjacent values); θ is %v here, so use ordered_hierarchical", sec.Theta)
			}
		case SynopsisOrderedHierarchical:
		default:
			c.add(sp+".mechanism", "unknown mechanism %q; use ordered (θ = 1) or ordered_hierarchical", s.Mechanism)
		}
		switch {
		case s.Fanout == 0 && !c.p.has(sp+".fanout"):
			s.Fanout = DefaultSynopsisFanout
		case s.Fanout < 2 || s.Fanout > maxSynopsisFanout:
			c.add(sp+".fanout", "fanout must be between 2 and %d, not %d", maxSynopsisFanout, s.Fanout)
		}
	}
}

func modelName(m string) string {
	if m == "" {
		return ModelDP
	}
	return m
}
