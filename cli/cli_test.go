package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

func testFactory() (*Factory, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	f := &Factory{
		IO:  &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut},
		Env: func(string) (string, bool) { return "", false },
		Now: func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) },
	}
	f.Logger = nil
	return f, out, errOut
}

func run(t *testing.T, cmd *cobra.Command, args ...string) error {
	t.Helper()
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	return cmd.ExecuteContext(context.Background())
}

func TestIndexFlags(t *testing.T) {
	f, _, _ := testFactory()
	var got *IndexOptions
	cmd := NewCmdIndex(f, func(_ context.Context, o *IndexOptions) error { got = o; return nil })
	if err := run(t, cmd, "a", "b/c", "--since", "7d", "--force", "--json", "--workers", "3"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Paths, ",") != "a,b/c" || got.Since != "7d" || !got.Force || !got.JSON || got.Workers != 3 {
		t.Errorf("parsed %+v", got)
	}
}

func TestSearchFlags(t *testing.T) {
	f, _, _ := testFactory()
	var got *SearchOptions
	cmd := NewCmdSearch(f, func(_ context.Context, o *SearchOptions) error { got = o; return nil })
	if err := run(t, cmd, "permission", "denied", "--tool", "codex", "--project", "/p", "--session", "s1",
		"--role", "user", "--since", "30m", "--until", "today", "--limit", "7", "--rank", "--json"); err != nil {
		t.Fatal(err)
	}
	want := SearchOptions{Query: "permission denied", Tool: "codex", Project: "/p", Session: "s1", Role: "user",
		Since: "30m", Until: "today", Limit: 7, Rank: true, JSON: true}
	if *got != want {
		t.Errorf("parsed %+v, want %+v", *got, want)
	}
	if err := run(t, NewCmdSearch(f, func(context.Context, *SearchOptions) error { return nil })); err == nil {
		t.Error("search without a query must fail")
	}
}

func TestSessionsAndStatusFlags(t *testing.T) {
	f, _, _ := testFactory()
	var s *SessionsOptions
	if err := run(t, NewCmdSessions(f, func(_ context.Context, o *SessionsOptions) error { s = o; return nil }),
		"--tool", "claude", "--project", "/x", "--host", "h", "--since", "2026-11-01", "--until", "2026-11-30", "--limit", "5", "--json"); err != nil {
		t.Fatal(err)
	}
	if *s != (SessionsOptions{Tool: "claude", Project: "/x", Host: "h", Since: "2026-11-01", Until: "2026-11-30", Limit: 5, JSON: true}) {
		t.Errorf("sessions parsed %+v", *s)
	}
	var st *StatusOptions
	if err := run(t, NewCmdStatus(f, func(_ context.Context, o *StatusOptions) error { st = o; return nil }), "--json"); err != nil {
		t.Fatal(err)
	}
	if !st.JSON {
		t.Error("status --json not parsed")
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1GB": 1 << 30, "500MB": 500 << 20, "64k": 64 << 10, "1024": 1024, "1.5G": 3 << 29} {
		got, err := parseSize(in)
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1GB", "lots", "GB"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) accepted", bad)
		}
	}
}

func TestSafeStripsControlCharacters(t *testing.T) {
	in := "ok\x1b[31mred\x1b[0m\r\nline\ttab\u2028x"
	got := Safe(in)
	if strings.ContainsAny(got, "\x1b\r\u2028") || !strings.Contains(got, "\n") || !strings.Contains(got, "\t") {
		t.Errorf("Safe(%q) = %q", in, got)
	}
	if got := OneLine("a\nb   c\x07", 100); got != "a b c" {
		t.Errorf("OneLine = %q", got)
	}
	if got := OneLine("ééééé", 3); got != "é…" {
		t.Errorf("OneLine cut = %q", got)
	}
}

func TestQueryFromArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		// The README's example after the shell removed its quotes.
		{[]string{"timeout", "OR", "rate limit"}, `timeout OR "rate limit"`},
		{[]string{"permission denied"}, `"permission denied"`},
		{[]string{"permission", "denied"}, `permission denied`},
		{[]string{`"already quoted"`}, `"already quoted"`},
		{[]string{`say "hi" there`}, `"say  hi  there"`},
		{[]string{"cargo-build"}, `cargo-build`},
	} {
		if got := queryFromArgs(tc.args); got != tc.want {
			t.Errorf("queryFromArgs(%q) = %s, want %s", tc.args, got, tc.want)
		}
	}
}

func TestTableFitsDisplayWidth(t *testing.T) {
	f, out, _ := testFactory()
	f.IO.Width = 40
	tb := newTable(f, column{name: "TIME"}, column{name: "TEXT", shrink: true}, column{name: "ID"})
	tb.add("12:00", "日本語のテキストがとても長い行になります and more", "id-1")
	tb.add("12:01", "🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂 emoji", "id-2")
	tb.print()
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "TIME") {
		t.Fatalf("table:\n%s", out)
	}
	for _, l := range lines {
		if w := width(l); w > 40 {
			t.Errorf("line is %d columns wide, over 40: %q", w, l)
		}
		if !strings.HasSuffix(l, "ID") && !strings.Contains(l, "id-") {
			t.Errorf("the id column was cut: %q", l)
		}
	}
	if got := cutWidth("日本語", 4); got != "日…" || width(got) > 4 {
		t.Errorf("cutWidth = %q", got)
	}
	// Without a terminal width nothing is cut.
	f2, out2, _ := testFactory()
	tb2 := newTable(f2, column{name: "A", shrink: true})
	long := strings.Repeat("x", 300)
	tb2.add(long)
	tb2.print()
	if !strings.Contains(out2.String(), long) {
		t.Error("piped output was cut")
	}
}

func TestTimesAreLocalUnlessUTC(t *testing.T) {
	f, _, _ := testFactory()
	loc := time.FixedZone("X", 2*3600)
	old := time.Local
	time.Local = loc
	defer func() { time.Local = old }()
	if got := f.timeCell("2026-11-30T12:00:00.000Z", false); got != "2026-11-30 14:00" {
		t.Errorf("local: %s", got)
	}
	f.UTC = true
	if got := f.timeCell("2026-11-30T12:00:00.000Z", true); got != "2026-11-30 12:00:00" {
		t.Errorf("utc: %s", got)
	}
}

func TestColourOnlyOnATerminalWithoutNoColor(t *testing.T) {
	for _, tc := range []struct {
		tty, noColor bool
		want         bool
	}{{true, false, true}, {true, true, false}, {false, false, false}} {
		f, out, _ := testFactory()
		f.IO.StdoutTTY, f.IO.NoColor = tc.tty, tc.noColor
		tb := newTable(f, column{name: "LABEL", style: labelStyle})
		tb.add("critical")
		tb.print()
		if got := strings.Contains(out.String(), "\x1b["); got != tc.want {
			t.Errorf("tty %v NO_COLOR %v: colour %v:\n%q", tc.tty, tc.noColor, got, out)
		}
	}
}

func TestProgressLineHasTotalAndETA(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	p := newProgressLine(func() time.Time { return now }, 1_000_000, "rows")
	now = now.Add(10 * time.Second)
	got := p.line(250_000)
	for _, want := range []string{"250,000 of 1,000,000 rows", "(25%)", "25,000 rows/s", "about 30s left"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress %q lacks %q", got, want)
		}
	}
}
