package demo

// SocialCheckin is one generated check-in, for code outside the demo that
// needs the same synthetic data (the DDP evaluation falls back to it when
// the Gowalla data is absent).
type SocialCheckin struct {
	User     int
	Lat, Lon float64
}

// SocialData returns the demo's generated check-ins and undirected
// friendships (each once, smaller id first): exactly the rows of the demo
// database's checkins and friendships tables.
func SocialData() ([]SocialCheckin, [][2]int) {
	s := generateSocial()
	cks := make([]SocialCheckin, len(s.checkins))
	for i, c := range s.checkins {
		cks[i] = SocialCheckin{User: c.user, Lat: c.lat, Lon: c.lon}
	}
	edges := make([][2]int, len(s.friendships))
	for i, e := range s.friendships {
		edges[i] = [2]int{e.a, e.b}
	}
	return cks, edges
}

// NYCBox is the public bounding box of the demo's check-ins (the box the
// Gowalla NYC subset was cut with) and its grid size per side.
func NYCBox() (latLo, latHi, lonLo, lonHi float64, cellsPerSide int) {
	return latMin, latMax, lonMin, lonMax, gridSize
}
