package sensitivity

import "fmt"

// Neighbors is the neighbour relation of the dp model: which pairs of
// databases differential privacy must make indistinguishable. Both relations
// work on privacy units (all rows that share a unit value), each of which
// contributes at most k rows to a query after its WHERE clause (the backend
// enforces k with ROW_NUMBER() OVER (PARTITION BY unit) <= k).
type Neighbors uint8

const (
	// Unbounded neighbours differ by adding or removing one unit together
	// with all of its (1 to k) rows. It is the zero value because it is the
	// policy default.
	Unbounded Neighbors = iota
	// Bounded neighbours have the same units; one unit's rows are replaced
	// by other rows. The number of units is public; the number of rows of
	// the replaced unit is not: its 1 to k rows may be replaced by any 1 to
	// k rows, a different number included. This is the weaker assumption (a
	// superset of the fixed-size pairs) and it gives the same closed forms
	// as the fixed-size reading whenever the query may have a WHERE clause
	// or a NULL column, because a row that a predicate filters out
	// contributes exactly what a missing row does. Only an unfiltered
	// COUNT(*) or GROUP BY without WHERE would be cheaper under the
	// fixed-size reading, and this package does not specialise on that.
	Bounded
)

// String returns the policy spelling of n.
func (n Neighbors) String() string {
	switch n {
	case Unbounded:
		return "unbounded"
	case Bounded:
		return "bounded"
	}
	return fmt.Sprintf("Neighbors(%d)", uint8(n))
}

// ParseNeighbors maps the policy spelling ("unbounded" or "bounded") to a
// Neighbors value. Defaults (an absent key) are the policy loader's business.
func ParseNeighbors(s string) (Neighbors, error) {
	switch s {
	case "unbounded":
		return Unbounded, nil
	case "bounded":
		return Bounded, nil
	}
	return 0, fmt.Errorf("sensitivity: unknown neighbour relation %q (want unbounded or bounded): %w", s, ErrInvalid)
}

func (n Neighbors) valid() bool { return n == Unbounded || n == Bounded }
