package admin

import (
	"fmt"
	"sort"
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
	YMax                     float64
	T0, T1                   int64 // the x axis, Unix milliseconds
	From, To                 string
	// Limits are the dashed budget lines, one per distinct ε budget of
	// the users plotted, largest first: users of one dataset may have
	// different budgets, and each line is read against its own.
	Limits []plotLimit
	Lines  []plotLine
}

// plotLimit is one dashed budget line across the plot.
type plotLimit struct {
	Epsilon float64
	// Users are the plotted users whose budget this is, by name, comma
	// separated (all of them, for the line's hover title); Label names
	// at most labelUsers of them, for the text drawn on the plot.
	Users, Label string
	Y            float64 // the line's height, on the plot's ε scale
	// LabelY is the baseline of the line's label: just above the line,
	// or below it when a higher line's label is within labelGap there, so
	// that labels of close budgets do not print over one another.
	LabelY float64
}

const (
	// labelGap is the least distance between two budget labels'
	// baselines: a line of the page's 11px text.
	labelGap = 12
	// labelUsers is how many users a budget label names; the hover title
	// names all.
	labelUsers = 3
)

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
// to now, y is ε from 0 to the larger of the largest budget and the
// largest total. budgets is each user's ε budget on the dataset (a user
// without one, or with 0, gets no budget line). Only the budgets of the
// users plotted are drawn, and scale the plot: a budget line is there to
// be read against a user's line, and a user who has spent nothing on the
// dataset has none (the table lists every budget).
func drawPlot(dataset string, lines []*line, budgets map[string]float64, now time.Time) plot {
	p := plot{Dataset: dataset, Width: plotWidth, Height: plotHeight,
		Left: plotMargin, Right: plotWidth - 10, Top: 14, Bottom: plotHeight - 24}
	var t0, t1 time.Time
	ymax := 0.0
	byBudget := map[float64][]string{} // ε budget → the plotted users who have it
	for _, l := range lines {
		if b := budgets[l.User]; b > 0 {
			byBudget[b] = append(byBudget[b], l.User)
			ymax = max(ymax, b)
		}
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
	for b, users := range byBudget {
		sort.Strings(users)
		label := users
		if len(users) > labelUsers {
			label = append(users[:labelUsers:labelUsers], fmt.Sprintf("%d more", len(users)-labelUsers))
		}
		p.Limits = append(p.Limits, plotLimit{Epsilon: b, Users: strings.Join(users, ", "),
			Label: strings.Join(label, ", "), Y: y(b)})
	}
	sort.Slice(p.Limits, func(i, j int) bool { return p.Limits[i].Epsilon > p.Limits[j].Epsilon })
	for i := range p.Limits {
		ly := p.Limits[i].Y - 3 // just above its line
		if i > 0 && ly < p.Limits[i-1].LabelY+labelGap {
			// Too close to the label of the line above: below its own
			// line instead, far enough that the dash does not cross it.
			ly = max(p.Limits[i-1].LabelY, p.Limits[i].Y) + labelGap
		}
		p.Limits[i].LabelY = ly
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
