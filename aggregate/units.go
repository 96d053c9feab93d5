package aggregate

import "strings"

// units is the one list of aggregates: adding one is a file and a line
// here.
var units = []*Unit{Count, Sum, Avg, VarPop, VarSamp, StddevPop, StddevSamp, Min, Max, Median, PercentileCont, PercentileDisc}

// All returns the units in list order.
func All() []*Unit { return append([]*Unit(nil), units...) }

// Lookup finds the unit a client spells name (any case) in dialect d, nil
// when none.
func Lookup(d Dialect, name string) *Unit {
	name = strings.ToLower(name)
	for _, u := range units {
		for _, s := range u.Spellings[d] {
			if s == name {
				return u
			}
		}
	}
	return nil
}

// ByName finds the unit of a canonical name (an ir.AggFunc), nil when none.
func ByName(name string) *Unit {
	for _, u := range units {
		if u.Name == name {
			return u
		}
	}
	return nil
}

// NamesText lists the canonical names for messages: "COUNT, SUM or AVG".
func NamesText() string {
	var b strings.Builder
	for i, u := range units {
		switch {
		case i == 0:
		case i == len(units)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(strings.ToUpper(u.Name))
	}
	return b.String()
}
