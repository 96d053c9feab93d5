// Command synopsis measures range-query mean squared error of the ordered
// hierarchical synopsis on the Adult capital-loss column for several θ,
// against the plain-DP hierarchical baseline (Blowfish §7.3, Fig. 2(b)).
//
//	go run ./eval/synopsis -data /work/shared/data/adult/adult.csv
//
// The setting follows the paper: domain 0..4356 (|T| = 4357), fan-out 16,
// 10000 random range queries (endpoints uniform over the domain), every
// release repeated -reps times. Noise comes from crypto/rand, as in
// production, so numbers vary slightly between runs.
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/synopsis"
)

// DefaultAdultCSV is the shared copy of UCI Adult next to the repository
// (../shared/data/adult, from the repository root or from this package's
// directory, as `go test` runs), or "" when none is found.
func DefaultAdultCSV() string {
	for _, p := range []string{"../shared/data/adult/adult.csv", "../../../shared/data/adult/adult.csv", "/work/shared/data/adult/adult.csv"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "../shared/data/adult/adult.csv"
}

func main() {
	data := flag.String("data", DefaultAdultCSV(), "Adult CSV with a header line (see its README)")
	column := flag.String("column", "capital-loss", "ordinal integer column")
	lo := flag.Int64("lo", 0, "domain lower bound")
	hi := flag.Int64("hi", 4356, "domain upper bound")
	eps := flag.String("eps", "0.1,0.5,1", "comma-separated ε values")
	thetas := flag.String("theta", "1,10,50,100,500,1000", "comma-separated θ values (the DP baseline is always added)")
	fanout := flag.Int("fanout", synopsis.DefaultFanout, "fan-out f")
	reps := flag.Int("reps", 50, "releases per setting")
	nq := flag.Int("queries", 10000, "random range queries")
	out := flag.String("csv", "", "also write the results as CSV to this file")
	svg := flag.String("svg", "", "also draw MSE against ε (log scale, one line per setting) as SVG to this file")
	flag.Parse()

	vals, err := readColumn(*data, *column)
	if err != nil {
		log.Fatal(err)
	}
	base, err := synopsis.NewLayout(synopsis.Config{Mechanism: synopsis.Hierarchical, Lo: *lo, Hi: *hi, Fanout: *fanout, RowsPerUnit: 1})
	if err != nil {
		log.Fatal(err)
	}
	hist := base.Histogram()
	for _, v := range vals {
		base.Add(hist, v, 1)
	}
	n := base.Size()
	queries := randomRanges(n, *nq)

	type setting struct {
		name string
		cfg  synopsis.Config
	}
	var settings []setting
	for _, t := range strings.Split(*thetas, ",") {
		th, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
		if err != nil {
			log.Fatalf("bad θ %q", t)
		}
		m := synopsis.OrderedHierarchical
		if th == 1 {
			m = synopsis.Ordered
		}
		settings = append(settings, setting{"OH θ=" + t, synopsis.Config{Mechanism: m, Theta: th}})
	}
	settings = append(settings, setting{"DP hierarchical", synopsis.Config{Mechanism: synopsis.Hierarchical}})

	var epss []float64
	for _, e := range strings.Split(*eps, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(e), 64)
		if err != nil {
			log.Fatalf("bad ε %q", e)
		}
		epss = append(epss, f)
	}

	src := noise.CryptoSource()
	fmt.Printf("Adult %s: %d rows, domain [%d, %d] (%d values), f=%d, %d range queries, %d releases per cell\n\n",
		*column, len(vals), *lo, *hi, n, *fanout, *nq, *reps)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "mechanism\t")
	for _, e := range epss {
		fmt.Fprintf(tw, "ε=%g\t", e)
	}
	fmt.Fprintln(tw, "ΔS\tΔH\tnodes\t")
	var rows [][]string
	series := make([][]float64, len(settings))
	start := time.Now()
	for si, s := range settings {
		cfg := s.cfg
		cfg.Lo, cfg.Hi, cfg.Fanout, cfg.RowsPerUnit = *lo, *hi, *fanout, 1
		l, err := synopsis.NewLayout(cfg)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Fprintf(tw, "%s\t", s.name)
		for _, e := range epss {
			mse, err := meanSquaredError(l, src, hist, queries, e, *reps)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Fprintf(tw, "%.4g\t", mse)
			series[si] = append(series[si], mse)
			rows = append(rows, []string{s.name, strconv.FormatInt(cfg.Theta, 10), cfg.Mechanism, strconv.FormatFloat(e, 'g', -1, 64), strconv.FormatFloat(mse, 'g', 6, 64)})
		}
		ds, dh := l.Sensitivity()
		fmt.Fprintf(tw, "%d\t%d\t%d\t\n", ds, dh, l.Blocks()-1+l.HNodes())
	}
	tw.Flush()
	fmt.Printf("\n(%s)\n", time.Since(start).Round(time.Second))
	if *svg != "" {
		names := make([]string, len(settings))
		for i, s := range settings {
			names[i] = s.name
		}
		if err := os.WriteFile(*svg, plot(*column, epss, names, series), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			log.Fatal(err)
		}
		w := csv.NewWriter(f)
		_ = w.Write([]string{"setting", "theta", "mechanism", "epsilon", "mse"})
		_ = w.WriteAll(rows)
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}
}

// readColumn reads one integer column of a CSV file with a header line.
func readColumn(path, column string) ([]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd := csv.NewReader(f)
	head, err := rd.Read()
	if err != nil {
		return nil, fmt.Errorf("reading the header of %s: %w", path, err)
	}
	idx := -1
	for i, h := range head {
		if strings.EqualFold(strings.TrimSpace(h), column) {
			idx = i
		}
	}
	if idx < 0 {
		return nil, fmt.Errorf("%s has no column %q", path, column)
	}
	var vals []int64
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			return vals, nil
		}
		if err != nil {
			return nil, err
		}
		v, err := strconv.ParseInt(strings.TrimSpace(rec[idx]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: row %d: %w", path, len(vals)+2, err)
		}
		vals = append(vals, v)
	}
}

// plot draws MSE (log10 scale) against ε, one polyline per setting, as a
// small self-contained SVG (no plotting library needed).
func plot(column string, eps []float64, names []string, series [][]float64) []byte {
	const w, h, left, right, top, bottom = 720.0, 460.0, 70.0, 170.0, 30.0, 50.0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, v := range s {
			lo, hi = min(lo, math.Log10(v)), max(hi, math.Log10(v))
		}
	}
	lo, hi = math.Floor(lo), math.Ceil(hi)
	x := func(e float64) float64 {
		return left + (e-eps[0])/(eps[len(eps)-1]-eps[0]+1e-300)*(w-left-right)
	}
	y := func(v float64) float64 { return top + (hi-math.Log10(v))/(hi-lo)*(h-top-bottom) }
	colors := []string{"#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#000000", "#a6761d"}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%g" y="18">Range-query MSE on Adult %s (log scale) vs ε</text>`+"\n", left, column)
	for d := lo; d <= hi; d++ {
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%g" y2="%g" stroke="#ddd"/><text x="%g" y="%g" text-anchor="end">1e%d</text>`+"\n",
			left, w-right, y(math.Pow(10, d)), y(math.Pow(10, d)), left-6, y(math.Pow(10, d))+4, int(d))
	}
	for _, e := range eps {
		fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">%g</text>`+"\n", x(e), h-bottom+18, e)
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">ε</text>`+"\n", (left+w-right)/2, h-10)
	for i, s := range series {
		c := colors[i%len(colors)]
		var pts []string
		for j, v := range s {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(eps[j]), y(v)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", c, strings.Join(pts, " "))
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%g" y2="%g" stroke="%s" stroke-width="2"/><text x="%g" y="%g">%s</text>`+"\n",
			w-right+10, w-right+30, top+20+float64(i)*18, top+20+float64(i)*18, c, w-right+35, top+24+float64(i)*18, names[i])
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// randomRanges draws nq index ranges [a, b] with both ends uniform over the
// domain (Blowfish §7.3). Fixed seed: the workload is a public choice.
func randomRanges(n, nq int) [][2]int64 {
	r := rand.New(rand.NewPCG(2014, 7))
	queries := make([][2]int64, nq)
	for i := range queries {
		a, b := r.Int64N(int64(n)), r.Int64N(int64(n))
		queries[i] = [2]int64{min(a, b), max(a, b)}
	}
	return queries
}

// meanSquaredError releases reps synopses of hist at ε and returns the
// mean squared error of the range counts over all releases and queries
// (index ranges).
func meanSquaredError(l *synopsis.Layout, src noise.Source, hist []int64, queries [][2]int64, eps float64, reps int) (float64, error) {
	cum := make([]int64, len(hist)+1)
	for i, c := range hist {
		cum[i+1] = cum[i] + c
	}
	lo := l.Config().Lo
	var se float64
	for range reps {
		syn, err := l.Release(src, hist, eps)
		if err != nil {
			return 0, err
		}
		for _, q := range queries {
			d := float64(syn.Count(lo+q[0], lo+q[1]) - (cum[q[1]+1] - cum[q[0]]))
			se += d * d
		}
	}
	return se / float64(reps*len(queries)), nil
}
