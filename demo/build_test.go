package demo_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/demo"
)

// rawSample reads the committed sample file directly (not through the
// package) and returns its records split on commas (no field is quoted).
func rawSample(t *testing.T) [][]string {
	t.Helper()
	gz, err := os.ReadFile("data/adult_sample.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	var recs [][]string
	for _, l := range lines[1:] {
		recs = append(recs, strings.Split(l, ","))
	}
	return recs
}

func TestBuildPeople(t *testing.T) {
	db := openRO(t, buildDemo(t).Database)
	raw := rawSample(t)

	if n := scalar[int64](t, db, "SELECT COUNT(*) FROM people"); n != 5000 {
		t.Errorf("people has %d rows, want 5000", n)
	}
	if got := scalar[string](t, db, "SELECT MIN(person_id) || ' ' || MAX(person_id) || ' ' || COUNT(DISTINCT person_id) FROM people"); got != "1 5000 5000" {
		t.Errorf("person_id min, max, distinct = %s, want 1 5000 5000", got)
	}
	// Sex counts, from the raw file (column 10).
	wantSex := map[string]int64{}
	for _, r := range raw {
		wantSex[r[9]]++
	}
	gotSex := map[string]int64{}
	rows(t, db, "SELECT sex, COUNT(*) FROM people GROUP BY sex", func(rs *sql.Rows) error {
		var s string
		var n int64
		err := rs.Scan(&s, &n)
		gotSex[s] = n
		return err
	})
	if fmt.Sprint(gotSex) != fmt.Sprint(wantSex) || len(gotSex) != 2 {
		t.Errorf("sex counts %v, want %v (the two documented values)", gotSex, wantSex)
	}

	// Columns: name in the table, position in the raw file, integer or not.
	cols := []struct {
		name    string
		raw     int
		integer bool
	}{
		{"age", 0, true}, {"workclass", 1, false}, {"education", 3, false}, {"education_num", 4, true},
		{"marital_status", 5, false}, {"occupation", 6, false}, {"relationship", 7, false},
		{"race", 8, false}, {"sex", 9, false}, {"capital_gain", 10, true}, {"capital_loss", 11, true},
		{"hours_per_week", 12, true}, {"native_country", 13, false}, {"income", 14, false},
	}
	for _, c := range cols {
		t.Run(c.name, func(t *testing.T) {
			var unknown int64
			for _, r := range raw {
				if strings.TrimSpace(r[c.raw]) == "?" {
					unknown++
				}
			}
			if n := scalar[int64](t, db, "SELECT COUNT(*) FROM people WHERE "+c.name+" IS NULL"); n != unknown {
				t.Errorf("%d NULLs, want %d (the rows with ?)", n, unknown)
			}
			want := "text"
			if c.integer {
				want = "integer"
			}
			if n := scalar[int64](t, db, "SELECT COUNT(*) FROM people WHERE "+c.name+" IS NOT NULL AND typeof("+c.name+") <> ?", want); n != 0 {
				t.Errorf("%d values are not of type %s", n, want)
			}
			if !c.integer {
				if n := scalar[int64](t, db, "SELECT COUNT(*) FROM people WHERE "+c.name+" = '?' OR "+c.name+" <> trim("+c.name+")"); n != 0 {
					t.Errorf("%d values are ? or not trimmed", n)
				}
			}
		})
	}
	if n := scalar[int64](t, db, "SELECT COUNT(*) FROM pragma_table_info('people') WHERE name = 'fnlwgt'"); n != 0 {
		t.Error("people has the survey weight fnlwgt; it should be dropped")
	}
}

type checkinRow struct {
	id, user, cell int
	at             string
	lat, lon       float64
	category       string
}

func readCheckins(t *testing.T, db *sql.DB) []checkinRow {
	t.Helper()
	var out []checkinRow
	rows(t, db, "SELECT checkin_id, user_id, CAST(checkin_time AS TEXT), cell, latitude, longitude, venue_category FROM checkins ORDER BY checkin_id", func(rs *sql.Rows) error {
		var c checkinRow
		err := rs.Scan(&c.id, &c.user, &c.at, &c.cell, &c.lat, &c.lon, &c.category)
		out = append(out, c)
		return err
	})
	return out
}

// The public New York City bounding box and grid (see the policy).
const (
	boxLatMin, boxLatMax = 40.4774, 40.9176
	boxLonMin, boxLonMax = -74.2589, -73.7004
	cellLat              = (boxLatMax - boxLatMin) / 10
	cellLon              = (boxLonMax - boxLonMin) / 10
)

func TestBuildSocial(t *testing.T) {
	db := openRO(t, buildDemo(t).Database)
	cks := readCheckins(t, db)

	t.Run("volume", func(t *testing.T) {
		if len(cks) < 25000 || len(cks) > 35000 {
			t.Errorf("%d check-ins, want about 30000", len(cks))
		}
		per := map[int]int{}
		for i, c := range cks {
			if c.id != i+1 {
				t.Fatalf("checkin_id %d at position %d: ids should be 1..n", c.id, i+1)
			}
			per[c.user]++
		}
		if len(per) != 1500 {
			t.Errorf("%d users with check-ins, want 1500", len(per))
		}
		counts := make([]int, 0, len(per))
		for u, n := range per {
			if u < 1 || u > 1500 || n < 1 || n > 200 {
				t.Errorf("user %d has %d check-ins; want ids 1..1500 with 1..200 each", u, n)
			}
			counts = append(counts, n)
		}
		slices.Sort(counts)
		top := 0
		for _, n := range counts[len(counts)*9/10:] {
			top += n
		}
		// Heavy-tailed like Gowalla's (median 5): a small median, and the
		// most active tenth of the users makes a large share.
		if med := counts[len(counts)/2]; med > 20 {
			t.Errorf("median check-ins per user %d, want a small median (<= 20)", med)
		}
		if share := float64(top) / float64(len(cks)); share < 0.35 {
			t.Errorf("the top 10%% of users make %.2f of the check-ins, want a heavy tail (>= 0.35)", share)
		}
	})

	t.Run("rows", func(t *testing.T) {
		cats := map[string]bool{}
		rows(t, db, "SELECT category FROM venue_categories", func(rs *sql.Rows) error {
			var c string
			err := rs.Scan(&c)
			cats[c] = true
			return err
		})
		if len(cats) < 6 || len(cats) > 10 {
			t.Errorf("%d venue categories, want about 8", len(cats))
		}
		start := time.Date(2009, 2, 1, 0, 0, 0, 0, time.UTC)
		end := time.Date(2010, 11, 1, 0, 0, 0, 0, time.UTC)
		for _, c := range cks {
			if !(c.lat > boxLatMin && c.lat < boxLatMax && c.lon > boxLonMin && c.lon < boxLonMax) {
				t.Fatalf("check-in %d at (%v, %v) is outside the NYC box", c.id, c.lat, c.lon)
			}
			// cell = 10·row + col from the south-west corner.
			row := int(math.Floor((c.lat - boxLatMin) / cellLat))
			col := int(math.Floor((c.lon - boxLonMin) / cellLon))
			if c.cell != 10*row+col {
				t.Fatalf("check-in %d at (%v, %v) has cell %d, want %d", c.id, c.lat, c.lon, c.cell, 10*row+col)
			}
			at, err := time.Parse(time.DateTime, c.at)
			if err != nil || at.Before(start) || !at.Before(end) {
				t.Fatalf("check-in %d has time %q; want YYYY-MM-DD HH:MM:SS (UTC) in Feb 2009 – Oct 2010", c.id, c.at)
			}
			if !cats[c.category] {
				t.Fatalf("check-in %d has category %q, not in venue_categories", c.id, c.category)
			}
		}
	})

	t.Run("friendships", func(t *testing.T) {
		type edge struct{ a, b int }
		var edges []edge
		seen := map[edge]bool{}
		rows(t, db, "SELECT user_a, user_b FROM friendships", func(rs *sql.Rows) error {
			var e edge
			err := rs.Scan(&e.a, &e.b)
			edges = append(edges, e)
			return err
		})
		if len(edges) != 6000 {
			t.Errorf("%d friendships, want 6000", len(edges))
		}
		for _, e := range edges {
			// Stored once per undirected edge, as (smaller, larger).
			if e.a >= e.b || e.a < 1 || e.b > 1500 || seen[e] {
				t.Fatalf("friendship %v: want user_a < user_b, ids in 1..1500, no repeats", e)
			}
			seen[e] = true
		}

		// Friends check in near each other: the distance between the
		// centroids of two friends' check-ins is far smaller on average
		// than between two users drawn at random (6000 pairs, fixed seed).
		type acc struct{ lat, lon, n float64 }
		cent := map[int]*acc{}
		for _, c := range cks {
			a := cent[c.user]
			if a == nil {
				a = &acc{}
				cent[c.user] = a
			}
			a.lat, a.lon, a.n = a.lat+c.lat, a.lon+c.lon, a.n+1
		}
		dist := func(u, v int) float64 {
			a, b := cent[u], cent[v]
			return math.Hypot(a.lat/a.n-b.lat/b.n, a.lon/a.n-b.lon/b.n)
		}
		var friends, random float64
		r := rand.New(rand.NewPCG(1, 2))
		for _, e := range edges {
			friends += dist(e.a, e.b)
			u, v := 1+r.IntN(1500), 1+r.IntN(1500)
			random += dist(u, v)
		}
		ratio := friends / random
		t.Logf("friend/random centroid distance ratio %.3f", ratio)
		if ratio > 0.5 {
			t.Errorf("friends' centroids are %.2f as far apart as random users', want < 0.5 (dependence)", ratio)
		}
	})
}

func TestBuildCells(t *testing.T) {
	db := openRO(t, buildDemo(t).Database)
	type cell struct {
		borough  string
		lat, lon float64
	}
	cells := map[int]cell{}
	rows(t, db, "SELECT cell, borough, center_lat, center_lon FROM cells", func(rs *sql.Rows) error {
		var id int
		var c cell
		err := rs.Scan(&id, &c.borough, &c.lat, &c.lon)
		cells[id] = c
		return err
	})
	if len(cells) != 100 {
		t.Fatalf("%d cells, want 100", len(cells))
	}
	boroughs := map[string]bool{}
	for id := range 100 {
		c, ok := cells[id]
		if !ok {
			t.Fatalf("cell %d missing", id)
		}
		row, col := id/10, id%10
		wantLat := boxLatMin + (float64(row)+0.5)*cellLat
		wantLon := boxLonMin + (float64(col)+0.5)*cellLon
		if math.Abs(c.lat-wantLat) > 1e-6 || math.Abs(c.lon-wantLon) > 1e-6 {
			t.Errorf("cell %d center (%v, %v), want (%v, %v)", id, c.lat, c.lon, wantLat, wantLon)
		}
		boroughs[c.borough] = true
	}
	for b := range boroughs {
		if !slices.Contains([]string{"Bronx", "Brooklyn", "Manhattan", "Queens", "Staten Island", "Outside NYC"}, b) {
			t.Errorf("unexpected borough %q", b)
		}
	}
	// Landmarks (public coordinates) fall in cells of their borough.
	tests := []struct {
		name, borough string
		lat, lon      float64
	}{
		{"Times Square", "Manhattan", 40.7580, -73.9855},
		{"Harlem", "Manhattan", 40.8116, -73.9465},
		{"Park Slope", "Brooklyn", 40.6710, -73.9780},
		{"Flushing", "Queens", 40.7675, -73.8331},
		{"Bronx Zoo", "Bronx", 40.8506, -73.8769},
		{"St. George ferry terminal", "Staten Island", 40.6437, -74.0736},
		{"Newark", "Outside NYC", 40.7357, -74.1724},
	}
	for _, tt := range tests {
		id := 10*int((tt.lat-boxLatMin)/cellLat) + int((tt.lon-boxLonMin)/cellLon)
		if got := cells[id].borough; got != tt.borough {
			t.Errorf("%s is in cell %d, borough %q, want %q", tt.name, id, got, tt.borough)
		}
	}
}

// TestBuildTwice rebuilds over an existing demo directory, whose database
// file starts out as garbage, and requires identical contents each time.
func TestBuildTwice(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/"+demo.DatabaseFile, []byte("not a database"), 0o644); err != nil {
		t.Fatal(err)
	}
	var digests []string
	for i := range 2 {
		f, err := demo.Build(context.Background(), dir)
		if err != nil {
			t.Fatalf("build %d: %v", i+1, err)
		}
		digests = append(digests, digest(t, f))
	}
	if digests[0] != digests[1] {
		t.Error("two builds wrote different data or policies")
	}
}

// digest hashes the policy and every row of every table, in key order.
func digest(t *testing.T, f demo.Files) string {
	t.Helper()
	h := sha256.New()
	pol, err := os.ReadFile(f.Policy)
	if err != nil {
		t.Fatal(err)
	}
	h.Write(pol)
	db := openRO(t, f.Database)
	for _, q := range []string{
		"SELECT * FROM people ORDER BY person_id",
		"SELECT * FROM checkins ORDER BY checkin_id",
		"SELECT * FROM friendships ORDER BY user_a, user_b",
		"SELECT * FROM cells ORDER BY cell",
		"SELECT * FROM venue_categories ORDER BY category",
	} {
		n := 0
		rows(t, db, q, func(rs *sql.Rows) error {
			cols, _ := rs.Columns()
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			n++
			err := rs.Scan(ptrs...)
			fmt.Fprintf(h, "%v\n", vals)
			return err
		})
		if n == 0 {
			t.Errorf("%s: no rows", q)
		}
	}
	db.Close()
	return fmt.Sprintf("%x", h.Sum(nil))
}
