package dashboard

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
)

// The charts are SVG written here: no JavaScript, no library, styled by
// the page's CSS (colours per series class follow the light/dark theme).

// series is one stacked layer of a bar chart.
type series struct {
	Name string
	// Class picks the colour (s0 … s7).
	Class  string
	Values []float64
}

// barChart is a stacked bar chart over labelled buckets (days).
type barChart struct {
	Title  string
	Labels []string
	Series []series
}

const (
	chartW, chartH   = 720.0, 180.0
	padL, padR, padB = 34.0, 8.0, 22.0
	padT             = 8.0
)

// empty reports whether the chart has nothing to draw.
func (c barChart) empty() bool {
	for _, s := range c.Series {
		for _, v := range s.Values {
			if v > 0 {
				return false
			}
		}
	}
	return true
}

// SVG renders the chart. Every text is escaped; numbers are formatted.
func (c barChart) SVG() template.HTML {
	n := len(c.Labels)
	if n == 0 {
		return ""
	}
	totals := make([]float64, n)
	for _, s := range c.Series {
		for i := 0; i < n && i < len(s.Values); i++ {
			totals[i] += s.Values[i]
		}
	}
	top := 0.0
	for _, t := range totals {
		top = math.Max(top, t)
	}
	top = niceCeil(top)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %g %g" role="img" aria-label="%s" preserveAspectRatio="none">`,
		chartW, chartH, html.EscapeString(c.Title))
	plotW, plotH := chartW-padL-padR, chartH-padT-padB
	for _, f := range []float64{0, 0.5, 1} {
		y := padT + plotH*(1-f)
		fmt.Fprintf(&b, `<line class="grid" x1="%g" y1="%.1f" x2="%g" y2="%.1f"/>`, padL, y, chartW-padR, y)
		fmt.Fprintf(&b, `<text class="axis" x="%g" y="%.1f" text-anchor="end">%s</text>`, padL-4, y+4, fmtNum(top*f))
	}
	slot := plotW / float64(n)
	barW := math.Max(1, slot*0.78)
	step := max(1, n/8)
	for i := 0; i < n; i++ {
		x := padL + slot*float64(i) + (slot-barW)/2
		y := padT + plotH
		for _, s := range c.Series {
			if i >= len(s.Values) || s.Values[i] <= 0 {
				continue
			}
			h := plotH * s.Values[i] / top
			y -= h
			fmt.Fprintf(&b, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s · %s: %s</title></rect>`,
				html.EscapeString(s.Class), x, y, barW, h, html.EscapeString(c.Labels[i]), html.EscapeString(s.Name), fmtNum(s.Values[i]))
		}
		if i%step == 0 {
			fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%g" text-anchor="middle">%s</text>`, x+barW/2, chartH-6,
				html.EscapeString(shortDay(c.Labels[i])))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// niceCeil rounds a chart's maximum up to 1, 2 or 5 times a power of ten
// (at least 1).
func niceCeil(v float64) float64 {
	if v <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func fmtNum(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// shortDay turns 2026-06-17 into 06-17 (months stay 2026-06).
func shortDay(s string) string {
	if len(s) == 10 {
		return s[5:]
	}
	return s
}

// buckets are the time buckets of a chart: days for spans up to 62
// days, weeks (starting Monday) up to about a year, months beyond.
type buckets struct {
	Labels []string
	Unit   string
	key    func(t time.Time) string
}

func newBuckets(from, to time.Time) buckets {
	from, to = from.UTC(), to.UTC()
	span := to.Sub(from)
	b := buckets{Unit: "day", key: func(t time.Time) string { return t.UTC().Format("2006-01-02") }}
	step := func(t time.Time) time.Time { return t.AddDate(0, 0, 1) }
	start := from.Truncate(24 * time.Hour)
	switch {
	case span > 400*24*time.Hour:
		b.Unit = "month"
		b.key = func(t time.Time) string { return t.UTC().Format("2006-01") }
		start = time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC)
		step = func(t time.Time) time.Time { return t.AddDate(0, 1, 0) }
	case span > 62*24*time.Hour:
		b.Unit = "week"
		monday := func(t time.Time) time.Time {
			t = t.UTC().Truncate(24 * time.Hour)
			return t.AddDate(0, 0, -((int(t.Weekday()) + 6) % 7))
		}
		b.key = func(t time.Time) string { return monday(t).Format("2006-01-02") }
		start = monday(from)
		step = func(t time.Time) time.Time { return t.AddDate(0, 0, 7) }
	}
	for t := start; !t.After(to) && len(b.Labels) < 400; t = step(t) {
		b.Labels = append(b.Labels, b.key(t))
	}
	return b
}

// count counts timestamps (stored RFC 3339 strings) per bucket.
func (b buckets) count(timestamps []string) []float64 {
	idx := make(map[string]int, len(b.Labels))
	for i, l := range b.Labels {
		idx[l] = i
	}
	out := make([]float64, len(b.Labels))
	for _, ts := range timestamps {
		t, err := cortex.ParseTimestamp(ts)
		if err != nil {
			continue
		}
		if i, ok := idx[b.key(t)]; ok {
			out[i]++
		}
	}
	return out
}
