package demo

// publishedTable is census_published: the same 5,000 Adult people as the
// people table (person_id, age, sex, race, relationship, income), for the
// census_release dataset, whose policy declares that the sex × race
// table's row and column sums were already published exactly (as a census
// bureau publishes one-way tables). A table belongs to one dataset, so the
// induced model gets its own copy.
func publishedTable(people [][]any) table {
	keep := []string{"age", "sex", "race", "relationship", "income"}
	idx := make([]int, len(keep))
	for k, name := range keep {
		for i, c := range peopleColumns() {
			if c.name == name {
				idx[k] = 1 + i // people rows start with person_id
			}
		}
	}
	return table{
		name: "census_published",
		create: "CREATE TABLE census_published (person_id INTEGER PRIMARY KEY, age INTEGER, sex TEXT, race TEXT, " +
			"relationship TEXT, income TEXT)",
		cols: 1 + len(keep),
		rows: len(people),
		row: func(i int, dst []any) {
			dst[0] = people[i][0]
			for k, j := range idx {
				dst[1+k] = people[i][j]
			}
		},
	}
}
