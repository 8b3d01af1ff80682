package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/rivo/uniseg"

	"github.com/cortexhq/cortex"
)

// Terminal output: tables fitted to the terminal by display width (a CJK
// character or an emoji takes two columns, a combining mark none), times
// in local time unless --utc, and colour on a terminal unless NO_COLOR.

// width is the display width of s in terminal columns.
func width(s string) int { return uniseg.StringWidth(s) }

// widthOf is width, for callers with a variable named width.
func widthOf(s string) int { return width(s) }

// cutWidth cuts s to at most w display columns, ending in "…" when cut;
// it never splits a grapheme cluster.
func cutWidth(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if width(s) <= w {
		return s
	}
	var b strings.Builder
	used, state := 0, -1
	rest := s
	for len(rest) > 0 {
		var cluster string
		var cw int
		cluster, rest, cw, state = uniseg.FirstGraphemeClusterInString(rest, state)
		if used+cw > w-1 {
			break
		}
		b.WriteString(cluster)
		used += cw
	}
	return b.String() + "…"
}

// padWidth pads s with spaces to w display columns.
func padWidth(s string, w int) string {
	if n := w - width(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

// column describes a table column: its header, the width its cells are
// cut to at most (0: none), and whether it may shrink to fit the
// terminal (text columns do; times, counts and ids do not).
type column struct {
	name   string
	max    int
	shrink bool
	// style colours a cell (nil: none); it gets the raw cell text.
	style func(string) string
}

// table collects rows and prints them with a header, columns separated
// by two spaces, fitted to the terminal width.
type table struct {
	f    *Factory
	cols []column
	rows [][]string
}

func newTable(f *Factory, cols ...column) *table { return &table{f: f, cols: cols} }

// add appends a row; cells are made single-line and safe.
func (t *table) add(cells ...string) {
	row := make([]string, len(t.cols))
	for i := range t.cols {
		if i < len(cells) {
			row[i] = strings.Join(strings.Fields(Safe(cells[i])), " ")
			if m := t.cols[i].max; m > 0 {
				row[i] = cutWidth(row[i], m)
			}
		}
	}
	t.rows = append(t.rows, row)
}

// widths are the column widths: each the widest cell (or header), then
// the widest shrinkable column narrowed by one, again and again, until the
// table fits limit (0: no limit) or none can shrink further (to 8
// columns, or their header).
func (t *table) widths(limit int) []int {
	w := make([]int, len(t.cols))
	for i, c := range t.cols {
		w[i] = width(c.name)
		for _, r := range t.rows {
			w[i] = max(w[i], width(r[i]))
		}
	}
	if limit <= 0 {
		return w
	}
	total := func() int {
		n := 2 * (len(w) - 1)
		for _, x := range w {
			n += x
		}
		return n
	}
	for total() > limit {
		widest := -1
		for i, c := range t.cols {
			floor := max(8, width(c.name))
			if c.shrink && w[i] > floor && (widest < 0 || w[i] > w[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		w[widest]-- // one column at a time: the widest shrink towards each other
	}
	return w
}

// print writes the header and the rows.
func (t *table) print() {
	w := t.widths(t.f.IO.TerminalWidth())
	line := func(cells []string, header bool) {
		var b strings.Builder
		for i, c := range cells {
			last := i == len(cells)-1
			cell := cutWidth(c, w[i])
			styled := cell
			switch {
			case header:
				styled = t.f.IO.Bold(cell)
			case t.cols[i].style != nil && t.f.IO.Color():
				styled = t.cols[i].style(cell)
			}
			b.WriteString(styled)
			if !last {
				b.WriteString(strings.Repeat(" ", w[i]-width(cell)+2))
			}
		}
		t.f.IO.Printf("%s\n", strings.TrimRight(b.String(), " "))
	}
	names := make([]string, len(t.cols))
	for i, c := range t.cols {
		names[i] = c.name
	}
	line(names, true)
	for _, r := range t.rows {
		line(r, false)
	}
}

// timeCell shows a stored RFC 3339 time as "2006-01-02 15:04" in the
// local zone (UTC with --utc); seconds adds the seconds.
func (f *Factory) timeCell(stored string, seconds bool) string {
	layout := "2006-01-02 15:04"
	if seconds {
		layout += ":05"
	}
	t, err := cortex.ParseTimestamp(stored)
	if err != nil || stored == "" {
		return stored
	}
	return f.inZone(t).Format(layout)
}

// clockCell shows a stored time as "15:04:05" (local, or UTC).
func (f *Factory) clockCell(stored string) string {
	t, err := cortex.ParseTimestamp(stored)
	if err != nil || stored == "" {
		return stored
	}
	return f.inZone(t).Format("15:04:05")
}

func (f *Factory) inZone(t time.Time) time.Time {
	if f.UTC {
		return t.UTC()
	}
	return t.Local()
}

// labelStyle colours a priority label.
func labelStyle(s string) string {
	switch s {
	case "critical":
		return ansi("1;31", s)
	case "high":
		return ansi("31", s)
	case "medium":
		return ansi("33", s)
	}
	return s
}

// statusStyle colours a failed status.
func statusStyle(s string) string {
	switch s {
	case "error", "failed", "timeout", "blocked", "cancelled", "rate_limited", "circuit_open", "denied", "disabled":
		return ansi("31", s)
	}
	return s
}

// severityStyle colours log severities of error and worse.
func severityStyle(s string) string {
	switch s {
	case "emerg", "alert", "crit", "err":
		return ansi("31", s)
	case "warning":
		return ansi("33", s)
	}
	return s
}

func ansi(code, s string) string { return "\x1b[" + code + "m" + s + "\x1b[0m" }

// printMore tells how to get the next page of a listing.
func printMore(f *Factory, shown int, total int, next string) {
	switch {
	case next != "" && total > shown:
		f.IO.Printf("(showing %d of %d; next page: --cursor %s)\n", shown, total, next)
	case next != "":
		f.IO.Printf("(showing %d; next page: --cursor %s)\n", shown, next)
	}
}

// tokensCell shows a token count short: 950, 12.4k, 3.1M.
func tokensCell(u *cortex.UsageSummary) string {
	if u == nil {
		return ""
	}
	n := float64(u.Total.Total())
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fG", n/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", n/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fk", n/1e3)
	}
	return fmt.Sprintf("%.0f", n)
}

// costCell shows an estimated cost: "$3.59", "$3.59+" when some models
// have no price, "?" when none has.
func costCell(u *cortex.UsageSummary) string {
	switch {
	case u == nil:
		return ""
	case len(u.Unpriced) > 0 && u.CostUSD == 0:
		return "?"
	case len(u.Unpriced) > 0:
		return fmt.Sprintf("$%.2f+", u.CostUSD)
	}
	return fmt.Sprintf("$%.2f", u.CostUSD)
}

// durationCell shows seconds as 45s, 12m, 3h05m, 2d4h.
func durationCell(secs float64) string {
	d := time.Duration(secs * float64(time.Second))
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

// progressLine renders "scanned 120,000 of 5,000,000 rows (2%), 45,000
// rows/s, about 1m50s left" for work of a known total ("scanned 120,000
// rows, 45,000 rows/s" when the total is not known).
type progressLine struct {
	now   func() time.Time
	start time.Time
	total int64
	noun  string
}

func newProgressLine(now func() time.Time, total int64, noun string) *progressLine {
	if now == nil {
		now = time.Now
	}
	return &progressLine{now: now, start: now(), total: total, noun: noun}
}

func (p *progressLine) line(done int64) string {
	s := fmt.Sprintf("scanned %s %s", commas(int(done)), p.noun)
	if p.total > 0 {
		s = fmt.Sprintf("scanned %s of %s %s (%d%%)", commas(int(done)), commas(int(p.total)), p.noun, min(100, done*100/p.total))
	}
	elapsed := p.now().Sub(p.start).Seconds()
	if elapsed > 0.5 && done > 0 {
		rate := float64(done) / elapsed
		s += fmt.Sprintf(", %s %s/s", commas(int(rate)), p.noun)
		if left := p.total - done; left > 0 {
			s += ", about " + durationCell(float64(left)/rate) + " left"
		}
	}
	return s + "   "
}
