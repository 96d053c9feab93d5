package demo

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"
)

// Shape of the synthetic check-in data (see generateSocial).
const (
	numUsers       = 1500
	numCommunities = 75   // groups of ~20 users living near each other
	numFriendships = 6000 // undirected edges
	maxCheckins    = 200  // per user
	// pInCommunity is the chance a new friendship stays inside the first
	// user's community.
	pInCommunity = 0.8
	// Where a check-in happens: near home, near a friend's home, or near a
	// random landmark (the rest).
	pNearHome   = 0.55
	pNearFriend = 0.30
	// pFavourite is the chance a check-in is in the user's favourite venue
	// category rather than one drawn from the overall mix.
	pFavourite = 0.35
)

// The seed of the generator: the Gowalla years. Changing it changes every
// generated row.
const socialSeed1, socialSeed2 = 2009, 2010

// checkinPeriod is [start, end) of the check-in times, as in the Gowalla
// data (Feb 2009 – Oct 2010).
func checkinPeriod() (start, end time.Time) {
	return time.Date(2009, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC)
}

// landmark is a neighbourhood center around which people live and go out.
type landmark struct {
	lat, lon float64
	weight   float64
}

// landmarks are public coordinates of busy New York neighbourhoods
// (Manhattan weighted up, as in Gowalla's NYC check-ins).
func landmarks() []landmark {
	return []landmark{
		{40.754, -73.984, 5}, // Midtown
		{40.709, -74.010, 3}, // Financial District
		{40.726, -73.984, 3}, // East Village
		{40.787, -73.975, 2}, // Upper West Side
		{40.811, -73.946, 1}, // Harlem
		{40.714, -73.957, 2}, // Williamsburg
		{40.693, -73.990, 1}, // Downtown Brooklyn
		{40.671, -73.978, 1}, // Park Slope
		{40.694, -73.921, 1}, // Bushwick
		{40.641, -73.960, 1}, // Flatbush
		{40.764, -73.923, 1}, // Astoria
		{40.744, -73.949, 1}, // Long Island City
		{40.759, -73.830, 1}, // Flushing
		{40.702, -73.789, 1}, // Jamaica
		{40.641, -73.778, 1}, // JFK airport
		{40.861, -73.890, 1}, // Fordham, the Bronx
		{40.643, -74.077, 1}, // St. George, Staten Island
		{40.744, -74.032, 1}, // Hoboken
		{40.718, -74.043, 1}, // Jersey City
	}
}

// checkin is one row of the checkins table.
type checkin struct {
	user     int
	at       time.Time
	lat, lon float64 // rounded to 6 decimals
	cell     int     // cellOf(lat, lon)
	category string
}

// friendship is one undirected edge, stored once with a < b.
type friendship struct{ a, b int }

type socialData struct {
	checkins    []checkin // by user, then time; checkin_id is index+1
	friendships []friendship
}

// user is the generator's hidden state of one user (never stored).
type user struct {
	community int
	homeLat   float64
	homeLon   float64
	checkins  int
	favourite string
	friends   []int
}

// generateSocial draws the synthetic social data set. Users (ids 1..1500)
// belong to communities around landmarks; each has a home near their
// community's center and a heavy-tailed number of check-ins (log-normal,
// median about 10, clipped to 1..200). Friendships connect users mostly
// within a community, and more active users have more friends. Check-ins
// happen near home, near a friend's home, or near a random landmark, so a
// user's locations depend on their friends' — the dependence DDP models.
func generateSocial() socialData {
	r := rand.New(rand.NewPCG(socialSeed1, socialSeed2))
	marks := landmarks()
	markPick := newPicker(len(marks), func(i int) float64 { return marks[i].weight })
	cats := venueCategories()
	catPick := newPicker(len(cats), func(i int) float64 { return cats[i].weight })

	type center struct{ lat, lon float64 }
	centers := make([]center, numCommunities)
	for i := range centers {
		m := marks[markPick.pick(r)]
		centers[i] = center{m.lat + 0.008*r.NormFloat64(), m.lon + 0.008*r.NormFloat64()}
	}

	users := make([]user, numUsers+1) // index 0 unused: ids start at 1
	members := make([][]int, numCommunities)
	for id := 1; id <= numUsers; id++ {
		c := r.IntN(numCommunities)
		n := int(math.Round(math.Exp(2.3 + 1.25*r.NormFloat64())))
		users[id] = user{
			community: c,
			homeLat:   centers[c].lat + 0.005*r.NormFloat64(),
			homeLon:   centers[c].lon + 0.005*r.NormFloat64(),
			checkins:  min(max(n, 1), maxCheckins),
			favourite: cats[catPick.pick(r)].code,
		}
		members[c] = append(members[c], id)
	}

	// Friendships: the first end is drawn in proportion to sqrt(activity),
	// the second likewise, within the community with probability
	// pInCommunity. Self-loops and repeated edges are redrawn.
	sociability := func(id int) float64 { return math.Sqrt(float64(users[id].checkins)) }
	everyone := newPicker(numUsers, func(i int) float64 { return sociability(i + 1) })
	inCommunity := make([]picker, numCommunities)
	for c, ms := range members {
		inCommunity[c] = newPicker(len(ms), func(i int) float64 { return sociability(ms[i]) })
	}
	seen := map[friendship]bool{}
	edges := make([]friendship, 0, numFriendships)
	for len(edges) < numFriendships {
		a := everyone.pick(r) + 1
		var b int
		if c := users[a].community; r.Float64() < pInCommunity && len(members[c]) > 1 {
			b = members[c][inCommunity[c].pick(r)]
		} else {
			b = everyone.pick(r) + 1
		}
		e := friendship{min(a, b), max(a, b)}
		if a == b || seen[e] {
			continue
		}
		seen[e] = true
		edges = append(edges, e)
		users[a].friends = append(users[a].friends, b)
		users[b].friends = append(users[b].friends, a)
	}
	slices.SortFunc(edges, func(x, y friendship) int {
		if x.a != y.a {
			return x.a - y.a
		}
		return x.b - y.b
	})

	start, end := checkinPeriod()
	span := end.Unix() - start.Unix()
	var cks []checkin
	for id := 1; id <= numUsers; id++ {
		u := &users[id]
		first := len(cks)
		for range u.checkins {
			var lat, lon, sd float64
			switch p := r.Float64(); {
			case p < pNearHome || (p < pNearHome+pNearFriend && len(u.friends) == 0):
				lat, lon, sd = u.homeLat, u.homeLon, 0.008
			case p < pNearHome+pNearFriend:
				f := &users[u.friends[r.IntN(len(u.friends))]]
				lat, lon, sd = f.homeLat, f.homeLon, 0.008
			default:
				m := marks[markPick.pick(r)]
				lat, lon, sd = m.lat, m.lon, 0.015
			}
			lat = round6(clampInside(lat+sd*r.NormFloat64(), latMin, latMax))
			lon = round6(clampInside(lon+sd*r.NormFloat64(), lonMin, lonMax))
			cat := u.favourite
			if r.Float64() >= pFavourite {
				cat = cats[catPick.pick(r)].code
			}
			cks = append(cks, checkin{
				user:     id,
				at:       time.Unix(start.Unix()+r.Int64N(span), 0).UTC(),
				lat:      lat,
				lon:      lon,
				cell:     cellOf(lat, lon),
				category: cat,
			})
		}
		mine := cks[first:]
		slices.SortStableFunc(mine, func(x, y checkin) int { return x.at.Compare(y.at) })
	}
	return socialData{checkins: cks, friendships: edges}
}

// clampInside keeps x strictly inside (lo, hi), by a margin far below the
// stored precision's rounding, so rounding cannot push it out either.
func clampInside(x, lo, hi float64) float64 {
	const margin = 1e-5
	return min(max(x, lo+margin), hi-margin)
}

// picker draws indices in proportion to fixed weights.
type picker struct{ cum []float64 }

func newPicker(n int, weight func(i int) float64) picker {
	cum := make([]float64, n)
	total := 0.0
	for i := range n {
		total += weight(i)
		cum[i] = total
	}
	return picker{cum}
}

func (p picker) pick(r *rand.Rand) int {
	x := r.Float64() * p.cum[len(p.cum)-1]
	return min(sort.SearchFloat64s(p.cum, x), len(p.cum)-1)
}

// Time format of checkin_time, a TIMESTAMP column: SQLite stores dates
// and times as text in the form ir.CanonicalText writes (UTC, as in
// Gowalla; whole seconds), which SQLite's own datetime() also writes.
const timeLayout = "2006-01-02 15:04:05"

func checkinsTable(cks []checkin) table {
	return table{
		name: "checkins",
		create: "CREATE TABLE checkins (checkin_id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, " +
			"checkin_time TIMESTAMP NOT NULL, cell INTEGER NOT NULL, latitude REAL NOT NULL, " +
			"longitude REAL NOT NULL, venue_category TEXT NOT NULL)",
		cols: 7,
		rows: len(cks),
		row: func(i int, dst []any) {
			c := cks[i]
			dst[0], dst[1], dst[2], dst[3] = int64(i+1), int64(c.user), c.at.Format(timeLayout), int64(c.cell)
			dst[4], dst[5], dst[6] = c.lat, c.lon, c.category
		},
	}
}

func friendshipsTable(edges []friendship) table {
	return table{
		name: "friendships",
		// Each undirected friendship is stored once, as (smaller id,
		// larger id); the CHECK makes the convention part of the schema.
		create: "CREATE TABLE friendships (user_a INTEGER NOT NULL, user_b INTEGER NOT NULL, " +
			"PRIMARY KEY (user_a, user_b), CHECK (user_a < user_b))",
		cols: 2,
		rows: len(edges),
		row:  func(i int, dst []any) { dst[0], dst[1] = int64(edges[i].a), int64(edges[i].b) },
	}
}
