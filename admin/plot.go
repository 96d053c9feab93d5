package admin

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// line is one user's cumulative ε on a dataset: a step per charge.
type line struct {
	User  string
	steps []step
	sum   exactSum // the charges so far, exactly
}

type step struct {
	t   time.Time
	cum float64 // the exact total after the charge, rounded once
}

// plot is a drawn SVG plot (the template writes it out).
type plot struct {
	Dataset                  string
	Width, Height            int
	Left, Right, Top, Bottom float64
	YMax, Limit              float64
	LimitY                   float64 // 0: no limit line
	T0, T1                   int64   // the x axis, Unix milliseconds
	From, To                 string
	Lines                    []plotLine
}

type plotLine struct {
	User, Color string
	// Points is the polyline: a step function that rises at each charge
	// and runs on to the right edge at the last total.
	Points string
	// Cumulative and Times are the charges' cumulative ε and their times
	// (Unix milliseconds), space-separated, for whoever checks the plot.
	Cumulative, Times string
	Last              string
	LabelX, LabelY    float64
}

var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

const (
	plotWidth  = 720
	plotHeight = 260
	plotMargin = 40
)

// drawPlot lays out the dataset's lines: x is time from the first charge
// to now, y is ε from 0 to the larger of the budget and the largest
// total.
func drawPlot(dataset string, lines []*line, limit float64, now time.Time) plot {
	p := plot{Dataset: dataset, Width: plotWidth, Height: plotHeight,
		Left: plotMargin, Right: plotWidth - 10, Top: 14, Bottom: plotHeight - 24, Limit: limit}
	var t0, t1 time.Time
	ymax := limit
	for _, l := range lines {
		for _, s := range l.steps {
			if t0.IsZero() || s.t.Before(t0) {
				t0 = s.t
			}
			if s.t.After(t1) {
				t1 = s.t
			}
			ymax = max(ymax, s.cum)
		}
	}
	if now.After(t1) {
		t1 = now
	}
	if t0.IsZero() {
		t0 = t1.Add(-time.Hour)
	}
	// At least a second, so that the axis' labels (at least to the
	// second, axisLayout) differ.
	if t1.Sub(t0) < time.Second {
		t1 = t0.Add(time.Second)
	}
	if ymax <= 0 {
		ymax = 1
	}
	p.YMax = ymax
	p.T0, p.T1 = t0.UnixMilli(), t1.UnixMilli()
	layout := axisLayout(t1.Sub(t0))
	p.From, p.To = t0.UTC().Format(layout), t1.UTC().Format(layout)
	x := func(t time.Time) float64 {
		return p.Left + (p.Right-p.Left)*float64(t.UnixMilli()-p.T0)/float64(p.T1-p.T0)
	}
	y := func(v float64) float64 { return p.Bottom - (p.Bottom-p.Top)*v/ymax }
	if limit > 0 {
		p.LimitY = y(limit)
	}
	for i, l := range lines {
		var pts, cums, times []string
		prev := 0.0
		for _, s := range l.steps {
			xs := x(s.t)
			pts = append(pts, coord(xs, y(prev)), coord(xs, y(s.cum)))
			cums = append(cums, num(s.cum))
			times = append(times, strconv.FormatInt(s.t.UnixMilli(), 10))
			prev = s.cum
		}
		pts = append(pts, coord(p.Right, y(prev)))
		pl := plotLine{User: l.User, Color: palette[i%len(palette)], Points: strings.Join(pts, " "),
			Cumulative: strings.Join(cums, " "), Times: strings.Join(times, " "),
			Last: num(prev), LabelX: p.Right - 4, LabelY: y(prev) - 4}
		p.Lines = append(p.Lines, pl)
	}
	return p
}

// axisLayout is the format of the time axis' two labels for a span: to
// the minute, or to the second under a minute, where both ends would
// otherwise read the same minute. A span of at least one unit of the
// format makes the two labels differ.
func axisLayout(span time.Duration) string {
	if span < time.Minute {
		return "2006-01-02 15:04:05"
	}
	return "2006-01-02 15:04"
}

func coord(x, y float64) string { return fmt.Sprintf("%.2f,%.2f", x, y) }
