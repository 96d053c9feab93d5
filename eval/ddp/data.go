package main

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/ddp-proxy/ddp-proxy/demo"
	"github.com/ddp-proxy/ddp-proxy/dependence/estimate"
)

// socialData is the evaluation's input: one tuple per user (their home
// cell, the most visited cell of the grid: liu2016 Eq. 4 with q = 1) and
// the undirected friendship graph among those users.
type socialData struct {
	source   string
	grid     estimate.Grid
	home     []int       // user index → cell
	median   [][]float64 // user index → coordinate-wise median of check-ins (for MIC)
	friends  [][]int     // adjacency lists of user indices
	edges    [][2]int    // each undirected friendship once, a < b
	checkins int
}

type rawCheckin struct {
	user     int64
	lat, lon float64
}

// nycGrid is the 10×10 grid over the New York City box the demo uses.
func nycGrid() estimate.Grid {
	latMin, latMax, lonMin, lonMax, n := demo.NYCBox()
	return estimate.Grid{Lo: []float64{latMin, lonMin}, Hi: []float64{latMax, lonMax}, Cells: []int{n, n}}
}

// loadSocial reads the Gowalla NYC subset from dir (checkins.csv.gz,
// edges.csv; see its README) or, when dir has no such files, the demo's
// generated data of the same structure.
func loadSocial(dir string) (*socialData, error) {
	cks, edges, source, err := readGowalla(dir)
	if errors.Is(err, fs.ErrNotExist) {
		gen, genEdges := demo.SocialData()
		cks = make([]rawCheckin, len(gen))
		for i, c := range gen {
			cks[i] = rawCheckin{int64(c.User), c.Lat, c.Lon}
		}
		edges = make([][2]int64, len(genEdges))
		for i, e := range genEdges {
			edges[i] = [2]int64{int64(e[0]), int64(e[1])}
		}
		source = "generated (demo.SocialData: " + dir + " not found)"
	} else if err != nil {
		return nil, err
	}
	return buildSocial(cks, edges, source, nycGrid())
}

func readGowalla(dir string) ([]rawCheckin, [][2]int64, string, error) {
	f, err := os.Open(filepath.Join(dir, "checkins.csv.gz"))
	if err != nil {
		return nil, nil, "", err
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, nil, "", fmt.Errorf("checkins.csv.gz: %w", err)
	}
	var cks []rawCheckin
	err = readCSV(zr, 5, func(rec []string) error {
		u, err1 := strconv.ParseInt(rec[0], 10, 64)
		lat, err2 := strconv.ParseFloat(rec[2], 64)
		lon, err3 := strconv.ParseFloat(rec[3], 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return err
		}
		cks = append(cks, rawCheckin{u, lat, lon})
		return nil
	})
	if err != nil {
		return nil, nil, "", fmt.Errorf("checkins.csv.gz: %w", err)
	}
	ef, err := os.Open(filepath.Join(dir, "edges.csv"))
	if err != nil {
		return nil, nil, "", err
	}
	defer ef.Close()
	var edges [][2]int64
	err = readCSV(ef, 2, func(rec []string) error {
		a, err1 := strconv.ParseInt(rec[0], 10, 64)
		b, err2 := strconv.ParseInt(rec[1], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		edges = append(edges, [2]int64{a, b})
		return nil
	})
	if err != nil {
		return nil, nil, "", fmt.Errorf("edges.csv: %w", err)
	}
	return cks, edges, "Gowalla NYC (" + dir + ")", nil
}

// readCSV calls row for every record after the header.
func readCSV(r io.Reader, fields int, row func([]string) error) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = fields
	cr.ReuseRecord = true
	if _, err := cr.Read(); err != nil {
		return fmt.Errorf("header: %w", err)
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := row(rec); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
}

// buildSocial keeps the users with at least one check-in, gives each a home
// cell (most check-ins; ties to the lower cell) and keeps the friendships
// between kept users, each once.
func buildSocial(cks []rawCheckin, rawEdges [][2]int64, source string, g estimate.Grid) (*socialData, error) {
	byUser := map[int64][]rawCheckin{}
	for _, c := range cks {
		byUser[c.user] = append(byUser[c.user], c)
	}
	ids := make([]int64, 0, len(byUser))
	for u := range byUser {
		ids = append(ids, u)
	}
	slices.Sort(ids)
	index := make(map[int64]int, len(ids))
	d := &socialData{source: source, grid: g, checkins: len(cks)}
	counts := make([]int, g.Size())
	for i, u := range ids {
		index[u] = i
		clear(counts)
		lats, lons := []float64{}, []float64{}
		for _, c := range byUser[u] {
			cell, ok := g.Cell([]float64{c.lat, c.lon})
			if !ok {
				continue
			}
			counts[cell]++
			lats, lons = append(lats, c.lat), append(lons, c.lon)
		}
		if len(lats) == 0 {
			return nil, fmt.Errorf("user %d has no usable check-in", u)
		}
		best := 0
		for c, n := range counts {
			if n > counts[best] {
				best = c
			}
		}
		d.home = append(d.home, best)
		d.median = append(d.median, []float64{estimate.Median(lats), estimate.Median(lons)})
	}
	d.friends = make([][]int, len(ids))
	seen := map[[2]int]bool{}
	for _, e := range rawEdges {
		a, okA := index[e[0]]
		b, okB := index[e[1]]
		if !okA || !okB || a == b {
			continue
		}
		k := [2]int{min(a, b), max(a, b)}
		if seen[k] {
			continue
		}
		seen[k] = true
		d.edges = append(d.edges, k)
		d.friends[a] = append(d.friends[a], b)
		d.friends[b] = append(d.friends[b], a)
	}
	if len(d.edges) == 0 {
		return nil, errors.New("no friendships between users with check-ins")
	}
	return d, nil
}

func (d *socialData) maxDegree() int {
	m := 0
	for _, f := range d.friends {
		m = max(m, len(f))
	}
	return m
}

// sample is the data of the dependence fits: units per home cell and the
// friendships as ordered cell pairs (both orientations).
func (d *socialData) sample() estimate.Sample {
	s := estimate.Sample{Grid: d.grid, Units: make([]float64, d.grid.Size())}
	for _, c := range d.home {
		s.Units[c]++
	}
	pairs := map[[2]int]float64{}
	for _, e := range d.edges {
		a, b := d.home[e[0]], d.home[e[1]]
		pairs[[2]int{a, b}]++
		pairs[[2]int{b, a}]++
	}
	keys := make([][2]int, 0, len(pairs))
	for k := range pairs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y [2]int) int {
		if x[0] != y[0] {
			return x[0] - y[0]
		}
		return x[1] - y[1]
	})
	for _, k := range keys {
		s.Pairs = append(s.Pairs, estimate.Pair{From: k[0], To: k[1], N: pairs[k]})
	}
	return s
}

// kmBetween is the distance in km between two cell centers (equirectangular
// projection at the box's latitude: exact enough across one city).
func kmBetween(g estimate.Grid, a, b int) float64 {
	pa, pb := g.Center(a), g.Center(b)
	const kmPerDegLat = 111.2
	kmPerDegLon := kmPerDegLat * math.Cos((g.Lo[0]+g.Hi[0])/2*math.Pi/180)
	return math.Hypot((pa[0]-pb[0])*kmPerDegLat, (pa[1]-pb[1])*kmPerDegLon)
}
