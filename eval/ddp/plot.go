package main

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"slices"
)

// A small SVG line chart: two panels, log-scaled x (ε), log or linear y.
// Hand-written to keep the module free of plotting dependencies.

type series struct {
	name   string
	color  string
	dashed bool
	x, y   []float64
}

type panel struct {
	title, xlabel, ylabel string
	logY                  bool
	series                []series
}

const (
	panelW, panelH   = 460, 470 // the legend sits under the plot
	marginL, marginR = 70, 20
	marginT          = 40
	plotW            = panelW - marginL - marginR
	plotH            = 240
)

func (res *results) svg() []byte {
	var eps []float64
	errs := map[string][]float64{}
	for _, r := range res.utility {
		if r.Query != "histogram" {
			continue
		}
		if !slices.Contains(eps, r.Eps) {
			eps = append(eps, r.Eps)
		}
		errs[r.Mechanism] = append(errs[r.Mechanism], r.MeanError)
	}
	colors := map[string]string{"dp (LPM)": "#1b9e77", "baseline (L·ΔQ)": "#d95f02", "ddp (DPM, eq18)": "#7570b3", "ddp (DPM, exact)": "#e7298a"}
	a := panel{title: "(a) GROUP BY cell histogram: mean L1 error", xlabel: "ε", ylabel: "mean L1 error", logY: true}
	for _, m := range []string{"baseline (L·ΔQ)", "ddp (DPM, eq18)", "ddp (DPM, exact)", "dp (LPM)"} {
		a.series = append(a.series, series{name: m, color: colors[m], x: eps, y: errs[m]})
	}
	leak := map[[2]string][]float64{}
	var leps []float64
	for _, r := range res.attack {
		if r.Bucket != "all" && r.Bucket != "degree 21+" {
			continue
		}
		k := [2]string{r.Mechanism, r.Attack + "/" + r.Bucket}
		leak[k] = append(leak[k], r.LeakBits)
		if !slices.Contains(leps, r.Eps) {
			leps = append(leps, r.Eps)
		}
	}
	bound := make([]float64, len(leps))
	for i, e := range leps {
		bound[i] = e / math.Ln2
	}
	b := panel{title: "(b) inference attack: leaked bits per user", xlabel: "ε", ylabel: "leaked information (bits)"}
	b.series = []series{
		{name: "ε (bound for an ε-DP release)", color: "#666666", dashed: true, x: leps, y: bound},
		{name: "dp (LPM), dependent attack, degree ≥ 21", color: "#a6761d", x: leps, y: leak[[2]string{"dp (LPM)", "dependent/degree 21+"}]},
		{name: "dp (LPM), dependent attack, all users", color: colors["dp (LPM)"], x: leps, y: leak[[2]string{"dp (LPM)", "dependent/all"}]},
		{name: "dp (LPM), independent attack, all users", color: "#66a61e", dashed: true, x: leps, y: leak[[2]string{"dp (LPM)", "independent/all"}]},
		{name: "ddp (DPM, exact), dependent attack, degree ≥ 21", color: "#e7298a", dashed: true, x: leps, y: leak[[2]string{"ddp (DPM, exact)", "dependent/degree 21+"}]},
		{name: "ddp (DPM, exact), dependent attack, all users", color: colors["ddp (DPM, exact)"], x: leps, y: leak[[2]string{"ddp (DPM, exact)", "dependent/all"}]},
		{name: "baseline, dependent attack, all users", color: colors["baseline (L·ΔQ)"], x: leps, y: leak[[2]string{"baseline (L·ΔQ)", "dependent/all"}]},
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", 2*panelW, panelH+20)
	fmt.Fprintf(&buf, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&buf, `<text x="%d" y="18" font-size="13" text-anchor="middle">%s</text>`+"\n", panelW,
		html.EscapeString(fmt.Sprintf("DDP on %d users, %d friendships (max degree %d); DPM calibrated with the %s fit", res.users, res.edges, res.maxDegree, res.used)))
	a.draw(&buf, 0, 20)
	b.draw(&buf, panelW, 20)
	buf.WriteString("</svg>\n")
	return buf.Bytes()
}

func (p panel) draw(buf *bytes.Buffer, ox, oy int) {
	var xs, ys []float64
	for _, s := range p.series {
		xs = append(xs, s.x...)
		for _, v := range s.y {
			if !p.logY || v > 0 {
				ys = append(ys, v)
			}
		}
	}
	if len(xs) == 0 || len(ys) == 0 {
		return
	}
	x0, x1 := math.Log10(slices.Min(xs)), math.Log10(slices.Max(xs))
	if x1 == x0 {
		x0, x1 = x0-0.5, x1+0.5
	}
	var y0, y1 float64
	if p.logY {
		y0, y1 = math.Floor(math.Log10(slices.Min(ys))), math.Ceil(math.Log10(slices.Max(ys)))
	} else {
		y0, y1 = min(0, slices.Min(ys)), slices.Max(ys)*1.08
	}
	if y1 == y0 {
		y1 = y0 + 1
	}
	left, top := float64(ox+marginL), float64(oy+marginT)
	px := func(x float64) float64 { return left + (math.Log10(x)-x0)/(x1-x0)*plotW }
	py := func(y float64) float64 {
		v := y
		if p.logY {
			v = math.Log10(y)
		}
		return top + plotH - (v-y0)/(y1-y0)*plotH
	}
	fmt.Fprintf(buf, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="13">%s</text>`+"\n", left+plotW/2, top-12, html.EscapeString(p.title))
	fmt.Fprintf(buf, `<rect x="%.1f" y="%.1f" width="%d" height="%d" fill="none" stroke="black"/>`+"\n", left, top, plotW, plotH)
	// x ticks at the data's ε values.
	for _, x := range uniq(xs) {
		fmt.Fprintf(buf, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", px(x), top, px(x), top+plotH)
		fmt.Fprintf(buf, `<text x="%.1f" y="%.1f" text-anchor="middle">%g</text>`+"\n", px(x), top+plotH+15, x)
	}
	fmt.Fprintf(buf, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", left+plotW/2, top+plotH+32, html.EscapeString(p.xlabel))
	// y ticks: decades (log) or five steps (linear).
	var ticks []float64
	if p.logY {
		for e := y0; e <= y1; e++ {
			ticks = append(ticks, math.Pow(10, e))
		}
	} else {
		step := niceStep((y1 - y0) / 5)
		for v := math.Ceil(y0/step) * step; v <= y1; v += step {
			ticks = append(ticks, v)
		}
	}
	for _, v := range ticks {
		fmt.Fprintf(buf, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, py(v), left+plotW, py(v))
		fmt.Fprintf(buf, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-5, py(v)+4, tickLabel(v))
	}
	fmt.Fprintf(buf, `<text transform="translate(%.1f,%.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", left-52, top+plotH/2, html.EscapeString(p.ylabel))
	for i, s := range p.series {
		var pts []string
		for k := range s.x {
			if k >= len(s.y) || (p.logY && s.y[k] <= 0) {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(s.x[k]), py(s.y[k])))
		}
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="6,4"`
		}
		fmt.Fprintf(buf, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n", s.color, dash, join(pts))
		for _, pt := range pts {
			var x, y float64
			fmt.Sscanf(pt, "%f,%f", &x, &y)
			fmt.Fprintf(buf, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x, y, s.color)
		}
		ly := top + plotH + 50 + float64(i)*16
		fmt.Fprintf(buf, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`+"\n", left, ly-4, left+24, ly-4, s.color, dash)
		fmt.Fprintf(buf, `<text x="%.1f" y="%.1f">%s</text>`+"\n", left+30, ly, html.EscapeString(s.name))
	}
}

func uniq(v []float64) []float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return slices.Compact(s)
}

func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*e >= raw {
			return m * e
		}
	}
	return 10 * e
}

func tickLabel(v float64) string {
	if math.Abs(v) < 1e-9 {
		return "0"
	}
	if v != 0 && (math.Abs(v) >= 1e5 || math.Abs(v) < 1e-2) {
		return fmt.Sprintf("1e%d", int(math.Round(math.Log10(math.Abs(v)))))
	}
	return fmt.Sprintf("%g", math.Round(v*1000)/1000)
}

func join(s []string) string {
	var b bytes.Buffer
	for i, v := range s {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(v)
	}
	return b.String()
}
