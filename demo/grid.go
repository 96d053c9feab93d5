package demo

import "math"

// The check-ins lie in the New York City bounding box Flickr publishes
// (the box the Gowalla NYC subset was cut with), divided into a 10×10
// grid. Cell numbers run row by row from the south-west corner: cell =
// 10·row + col, row counting north from latMin, col east from lonMin.
const (
	latMin   = 40.4774
	latMax   = 40.9176
	lonMin   = -74.2589
	lonMax   = -73.7004
	gridSize = 10
	numCells = gridSize * gridSize
)

// cellOf is the grid cell of a point inside the box. A point on the
// northern or eastern edge belongs to the last row or column.
func cellOf(lat, lon float64) int {
	row := int(math.Floor((lat - latMin) / (latMax - latMin) * gridSize))
	col := int(math.Floor((lon - lonMin) / (lonMax - lonMin) * gridSize))
	row = min(max(row, 0), gridSize-1)
	col = min(max(col, 0), gridSize-1)
	return row*gridSize + col
}

// cellCenter is the center of cell c.
func cellCenter(c int) (lat, lon float64) {
	row, col := c/gridSize, c%gridSize
	lat = latMin + (float64(row)+0.5)*(latMax-latMin)/gridSize
	lon = lonMin + (float64(col)+0.5)*(lonMax-lonMin)/gridSize
	return lat, lon
}

// Borough labels of the cells table.
const (
	boroughBronx        = "Bronx"
	boroughBrooklyn     = "Brooklyn"
	boroughManhattan    = "Manhattan"
	boroughQueens       = "Queens"
	boroughStatenIsland = "Staten Island"
	boroughOutside      = "Outside NYC"
)

// borough assigns a cell to the borough its center lies in, by a coarse
// hand-drawn map of the five boroughs on this ~4.7 × 4.9 km grid. It is
// demo geography, not official boundaries: cells straddle borders and
// water, and New Jersey, Nassau and the open sea are "Outside NYC".
func borough(c int) string {
	row, col := c/gridSize, c%gridSize
	switch {
	case col <= 3: // west of the Upper Bay and the Kill van Kull
		if row <= 3 {
			return boroughStatenIsland
		}
		return boroughOutside // New Jersey
	case row <= 1: // south of the shore: the Atlantic
		return boroughOutside
	case row <= 4: // southern Brooklyn and Queens, Jamaica Bay
		if col <= 6 {
			return boroughBrooklyn
		}
		return boroughQueens
	case row <= 6:
		switch {
		case col == 4:
			return boroughManhattan
		case col == 5 && row == 5:
			return boroughBrooklyn // Williamsburg, Greenpoint
		case col == 5:
			return boroughManhattan
		}
		return boroughQueens
	default: // rows 7-9: north of 40.78
		switch {
		case col == 4:
			return boroughOutside // the Palisades, New Jersey
		case col == 5:
			return boroughManhattan
		case col <= 8:
			return boroughBronx
		}
		return boroughOutside // Long Island Sound, Nassau
	}
}

func cellsTable() table {
	return table{
		name:   "cells",
		create: "CREATE TABLE cells (cell INTEGER PRIMARY KEY, borough TEXT NOT NULL, center_lat REAL NOT NULL, center_lon REAL NOT NULL)",
		cols:   4,
		rows:   numCells,
		row: func(i int, dst []any) {
			lat, lon := cellCenter(i)
			dst[0], dst[1], dst[2], dst[3] = int64(i), borough(i), round6(lat), round6(lon)
		},
	}
}

// round6 rounds to 6 decimals (about 0.1 m), the precision stored.
func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// venueCategory is one row of the public venue_categories table.
type venueCategory struct {
	code, label string
	weight      float64 // share of check-ins in the generator
}

// venueCategories is the fixed category list, in table order.
func venueCategories() []venueCategory {
	return []venueCategory{
		{"food", "Restaurants and food", 0.24},
		{"coffee", "Coffee shops and cafés", 0.14},
		{"nightlife", "Bars and nightlife", 0.14},
		{"shopping", "Shops and malls", 0.12},
		{"outdoors", "Parks and outdoors", 0.10},
		{"arts", "Arts and entertainment", 0.08},
		{"travel", "Transit and travel", 0.10},
		{"work", "Offices and campuses", 0.08},
	}
}

func categoriesTable() table {
	cats := venueCategories()
	return table{
		name:   "venue_categories",
		create: "CREATE TABLE venue_categories (category TEXT PRIMARY KEY, label TEXT NOT NULL)",
		cols:   2,
		rows:   len(cats),
		row:    func(i int, dst []any) { dst[0], dst[1] = cats[i].code, cats[i].label },
	}
}
