package policies

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// fingerprintVersion changes whenever the canonical form below changes, so
// that releases cached under an older encoding are never reused.
const fingerprintVersion = 1

// The canonical form of a dataset: every privacy-relevant field after
// defaults, with maps turned into name-sorted lists and domains into sorted
// typed values, so the hash depends on meaning, not on YAML layout.
//
// share_releases is left out on purpose: it decides whether the user is
// part of a release's cache key (planner), not what a release is. Hashing
// it would give every shared query a fresh draw each time the DBA switched
// sharing off and on again — an average for free.
type canonDataset struct {
	Version     int          `json:"v"`
	Name        string       `json:"name"`
	Model       string       `json:"model"`
	Neighbors   string       `json:"neighbors"`
	ClampCounts bool         `json:"clamp_counts"`
	Tables      []canonTable `json:"tables"`
	// Model-specific configuration, omitted when absent so that dp
	// fingerprints do not change.
	Secrets      *Secrets      `json:"secrets,omitempty"`
	Constraints  []*Constraint `json:"constraints,omitempty"`
	Compensation string        `json:"compensation,omitempty"`
	Synopses     []*Synopsis   `json:"synopses,omitempty"`
	Dependence   *Dependence   `json:"dependence,omitempty"`
}

type canonTable struct {
	Name           string        `json:"name"`
	Schema         string        `json:"schema"`
	Public         bool          `json:"public"`
	Key            string        `json:"key"`
	Unit           string        `json:"unit"`
	MaxRowsPerUnit int           `json:"k"`
	AllColumns     bool          `json:"all_columns"`
	Columns        []canonColumn `json:"columns"`
}

type canonColumn struct {
	Name   string    `json:"name"`
	Type   string    `json:"type"`
	Bounds []float64 `json:"bounds,omitempty"`
	// TimeBounds are written as typed literals (date and time columns).
	TimeBounds []string `json:"time_bounds,omitempty"`
	Domain     []string `json:"domain,omitempty"`
	Query      string   `json:"query,omitempty"`
}

// fingerprint hashes the canonical form of d (see Dataset.Fingerprint).
func (d *Dataset) fingerprint() string {
	cd := canonDataset{
		Version:     fingerprintVersion,
		Name:        d.Name,
		Model:       d.Model,
		Neighbors:   d.Neighbors,
		ClampCounts: d.ClampCountsAtZero(),

		Secrets:      d.Secrets,
		Constraints:  d.Constraints,
		Compensation: d.Compensation,
		Synopses:     d.Synopses,
		Dependence:   d.Dependence,
	}
	for _, tn := range sortedKeys(d.Tables) {
		t := d.Tables[tn]
		ct := canonTable{
			Name: tn, Schema: strings.ToLower(t.Schema), Public: t.Public,
			Key: strings.ToLower(t.Key), Unit: strings.ToLower(t.Unit), MaxRowsPerUnit: t.MaxRowsPerUnit,
			AllColumns: t.Public && len(t.Columns) == 0,
		}
		for _, cn := range sortedKeys(t.Columns) {
			col := t.Columns[cn]
			cc := canonColumn{Name: cn, Type: col.Type, Bounds: col.Bounds}
			for _, b := range col.TimeBounds {
				cc.TimeBounds = append(cc.TimeBounds, b.SQL())
			}
			if col.Domain != nil {
				cc.Domain = canonValues(col.Domain.Resolved)
				cc.Query = strings.TrimSpace(col.Domain.Query)
			}
			ct.Columns = append(ct.Columns, cc)
		}
		cd.Tables = append(cd.Tables, ct)
	}
	b, err := json.Marshal(cd)
	if err != nil {
		// Only NaN/Inf bounds fail to encode, and Validate reports those;
		// hash the error text so the fingerprint is still deterministic.
		b = []byte(err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// canonValues renders a domain as a sorted set of typed literals: the
// domain is a set, so listing its values in another order is no change.
func canonValues(vs []ir.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Kind.String() + ":" + v.SQL()
	}
	sort.Strings(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
