package oracle

import (
	"fmt"
	"slices"
	"strings"
)

// maxDatabases caps the enumeration so that a mistyped Space fails fast
// instead of exhausting the test machine.
const maxDatabases = 2_000_000

// Space describes the databases the oracle enumerates.
type Space struct {
	// Domain is the number of possible row values; a row is an int in
	// [0, Domain). Queries interpret values (predicates, groups, numbers).
	Domain int
	// MaxUnits is the largest number of units in a database; every size
	// from 0 to MaxUnits is enumerated. With RowsPerUnit 1 a unit is a
	// tuple.
	MaxUnits int
	// RowsPerUnit is the contribution bound k: every unit owns 1 to k
	// rows.
	RowsPerUnit int
	// Satisfies keeps only databases that meet published constraints; nil
	// keeps every database. It must not depend on the order of units or of
	// rows within a unit (the oracle enumerates one representative of each
	// reordering).
	Satisfies func(Database) bool
}

// Unit is the multiset of rows one privacy unit owns, sorted in canonical
// form.
type Unit []int

// Database is a multiset of units; in canonical form every unit is sorted
// and the units are in slices.Compare order. Databases are read-only once
// built: neighbour relations must build new slices rather than modify one
// in place (they may share Unit slices).
type Database []Unit

// Rows returns every row of d, unit after unit.
func (d Database) Rows() []int {
	var rows []int
	for _, u := range d {
		rows = append(rows, u...)
	}
	return rows
}

// Canonical returns d in canonical form, copying only what must be
// reordered.
func (d Database) Canonical() Database {
	c := make(Database, len(d))
	for i, u := range d {
		if !slices.IsSorted(u) {
			u = slices.Clone(u)
			slices.Sort(u)
		}
		c[i] = u
	}
	slices.SortFunc(c, slices.Compare)
	return c
}

// String formats d as {[rows of unit 1] [rows of unit 2] ...} for test
// failure messages.
func (d Database) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, u := range d {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, []int(u))
	}
	b.WriteByte('}')
	return b.String()
}

// Universe is a Space enumerated: every unit and every database satisfying
// the constraint, each database once in canonical form. Neighbour
// relations receive it to look up units and to ask whether a candidate
// database is in the space (Contains), which relations defined by
// minimality (Blowfish, induced neighbours) need.
type Universe struct {
	Space Space
	// Units holds every unit (1 to RowsPerUnit rows), sorted.
	Units []Unit
	// DBs holds every database in the space, canonical, without
	// duplicates.
	DBs   []Database
	index map[string]int
}

// NewUniverse validates s and enumerates it.
func NewUniverse(s Space) (*Universe, error) {
	switch {
	case s.Domain < 1 || s.Domain > 64:
		return nil, fmt.Errorf("oracle: domain size %d, want 1..64", s.Domain)
	case s.MaxUnits < 0:
		return nil, fmt.Errorf("oracle: max units %d, want >= 0", s.MaxUnits)
	case s.RowsPerUnit < 1:
		return nil, fmt.Errorf("oracle: rows per unit %d, want >= 1", s.RowsPerUnit)
	}
	u := &Universe{Space: s, index: make(map[string]int)}
	var cur Unit
	var units func(from int)
	units = func(from int) {
		if len(cur) > 0 {
			u.Units = append(u.Units, slices.Clone(cur))
		}
		if len(cur) == s.RowsPerUnit {
			return
		}
		for v := from; v < s.Domain; v++ {
			cur = append(cur, v)
			units(v)
			cur = cur[:len(cur)-1]
		}
	}
	units(0)
	slices.SortFunc(u.Units, slices.Compare)
	if n := multisets(len(u.Units), s.MaxUnits); n > maxDatabases {
		return nil, fmt.Errorf("oracle: space has more than %d databases (%d units, up to %d each); shrink it", maxDatabases, len(u.Units), s.MaxUnits)
	}
	// Non-decreasing sequences of unit indices are exactly the canonical
	// databases, because Units is sorted by the same order Canonical uses.
	var db Database
	var dbs func(from int)
	dbs = func(from int) {
		if s.Satisfies == nil || s.Satisfies(db) {
			d := slices.Clone(db)
			u.index[key(d)] = len(u.DBs)
			u.DBs = append(u.DBs, d)
		}
		if len(db) == s.MaxUnits {
			return
		}
		for i := from; i < len(u.Units); i++ {
			db = append(db, u.Units[i])
			dbs(i)
			db = db[:len(db)-1]
		}
	}
	dbs(0)
	return u, nil
}

// Index returns the position in DBs of d (in any order) and whether d is in
// the space at all.
func (u *Universe) Index(d Database) (int, bool) {
	i, ok := u.index[key(d.Canonical())]
	return i, ok
}

// Contains reports whether d (in any order) is a database of the space:
// within its size limits and satisfying its constraint.
func (u *Universe) Contains(d Database) bool {
	_, ok := u.Index(d)
	return ok
}

// key encodes a canonical database: rows as bytes (Domain ≤ 64), each unit
// closed by 0xFF.
func key(d Database) string {
	var b []byte
	for _, un := range d {
		for _, r := range un {
			b = append(b, byte(r))
		}
		b = append(b, 0xFF)
	}
	return string(b)
}

// multisets is the number of multisets of size 0..n over m kinds,
// C(m+n, n), saturating at maxDatabases+1.
func multisets(m, n int) int {
	c := 1
	for i := 1; i <= n; i++ {
		c = c * (m + i) / i // exact: a product of i consecutive integers is divisible by i!
		if c > maxDatabases {
			return maxDatabases + 1
		}
	}
	return c
}
