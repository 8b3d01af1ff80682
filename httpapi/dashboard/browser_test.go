package dashboard_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/cortexhq/cortex/httpapi/dashboard"
	"github.com/cortexhq/cortex/internal/testcorpus"
)

// The browser tests drive a real headless Chromium (Debian's chromium
// package) with chromedp. They skip when it is not installed, unless
// CORTEX_REQUIRE_BROWSER=1 (CI) makes them mandatory. Screenshots of every
// page go to CORTEX_SCREENSHOTS, or to cortex-dashboard-screenshots in the
// temporary folder; the test logs where.

// chromium finds the browser (CORTEX_CHROMIUM, else chromium on PATH).
func chromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("the browser tests do not run with -short")
	}
	path := os.Getenv("CORTEX_CHROMIUM")
	if path == "" {
		path, _ = exec.LookPath("chromium")
	}
	if path == "" {
		if os.Getenv("CORTEX_REQUIRE_BROWSER") == "1" {
			t.Fatal("CORTEX_REQUIRE_BROWSER=1 but no chromium found (apt-get install chromium, or set CORTEX_CHROMIUM)")
		}
		t.Skip("no chromium: install Debian's chromium package to run the browser tests (CI requires them)")
	}
	return path
}

func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CORTEX_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "cortex-dashboard-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// browser is one Chromium tab that records every console error,
// uncaught exception, failed request and error response.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
	dir  string

	mu       sync.Mutex
	problems []string
}

func newBrowser(t *testing.T, path, base, dir string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-extensions", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start chromium: %v", err)
	}
	b := &browser{t: t, ctx: ctx, base: base, dir: dir}
	watch(b, runtime.ConsoleAPICalled, func(ev runtime.EventConsoleAPICalled) string {
		if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert {
			return ""
		}
		var parts []string
		for _, a := range ev.Args {
			parts = append(parts, string(a.Value)+a.Description)
		}
		return "console." + string(ev.Type) + ": " + strings.Join(parts, " ")
	})
	watch(b, runtime.ExceptionThrown, func(ev runtime.EventExceptionThrown) string {
		return "exception: " + ev.ExceptionDetails.Text
	})
	watch(b, log.EntryAdded, func(ev log.EventEntryAdded) string {
		if ev.Entry.Level != log.EntryLevelError {
			return ""
		}
		return "log: " + ev.Entry.Text + " " + ev.Entry.URL
	})
	watch(b, network.LoadingFailed, func(ev network.EventLoadingFailed) string {
		if ev.Canceled {
			return "" // a navigation that replaced the page cancels its pending loads
		}
		return "request failed: " + ev.ErrorText
	})
	watch(b, network.ResponseReceived, func(ev network.EventResponseReceived) string {
		if ev.Response.Status < 400 {
			return ""
		}
		return fmt.Sprintf("HTTP %d %s", ev.Response.Status, ev.Response.URL)
	})
	return b
}

// watch records the events of one kind that describe a problem.
func watch[E any](b *browser, ev cdp.Event[E], describe func(E) string) {
	events := chromedp.Events(b.ctx, ev)
	go func() {
		for e, err := range events {
			if err != nil {
				return
			}
			if s := describe(e); s != "" {
				b.mu.Lock()
				b.problems = append(b.problems, s)
				b.mu.Unlock()
			}
		}
	}()
}

// do runs actions, failing the test on error.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// open loads a page and waits until it is shown.
func (b *browser) open(path string) {
	b.t.Helper()
	b.do("open "+path, chromedp.Navigate(b.base+path), chromedp.WaitVisible(chromedp.CSS("main h1")))
	b.settle()
}

// settle waits for the page to finish loading (scripts run, images and
// styles in).
func (b *browser) settle() {
	b.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if eval[string](b, `document.readyState`) == "complete" {
			time.Sleep(50 * time.Millisecond) // late console messages and responses
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.t.Fatalf("%s never finished loading", b.location())
}

func (b *browser) location() string {
	u, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		b.t.Fatal(err)
	}
	return u
}

// check fails on problems recorded since the last check.
func (b *browser) check(page string) {
	b.t.Helper()
	b.mu.Lock()
	problems := b.problems
	b.problems = nil
	b.mu.Unlock()
	for _, p := range problems {
		b.t.Errorf("%s: %s", page, p)
	}
}

// shot takes a screenshot of the viewport and checks it is not blank.
func (b *browser) shot(name string) {
	b.t.Helper()
	buf, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.dir, name+".png"), buf, 0o644); err != nil {
		b.t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if share := inked(img); share < 0.02 {
		b.t.Errorf("screenshot %s is blank: %.2f%% of its pixels differ from the background", name, share*100)
	}
}

// inked is the share of pixels that differ from the most common colour.
func inked(img image.Image) float64 {
	counts := map[[3]uint32]int{}
	bounds := img.Bounds()
	total := 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			counts[[3]uint32{r >> 8, g >> 8, b >> 8}]++
			total++
		}
	}
	top := 0
	for _, n := range counts {
		top = max(top, n)
	}
	return float64(total-top) / float64(total)
}

// click clicks the first element matching sel and waits for the page it
// opens to load.
func (b *browser) click(sel string) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(sel)))); err != nil {
		b.t.Fatalf("click %s: %v", sel, err)
	}
	b.do("wait after click "+sel, chromedp.WaitVisible(chromedp.CSS("main h1")))
	b.settle()
}

func TestDashboardInABrowser(t *testing.T) {
	path := chromium(t)
	srv := newSite(t, dashboard.Options{Budget: budget}, testcorpus.Real(t), hostileDir)
	b := newBrowser(t, path, srv.URL, screenshotDir(t))

	// Overview: the chart is drawn, navigation works by keyboard too.
	b.open("/?since=all")
	if n := eval[int](b, `document.querySelectorAll("svg.chart rect").length`); n == 0 {
		t.Error("overview: the chart has no bars on the real corpus")
	}
	b.check("overview")
	b.shot("overview")
	b.do("press /", chromedp.KeyEvent("/"))
	if id := eval[string](b, `document.activeElement.id`); id != "q" {
		t.Errorf("the / key focuses %q, not the search box", id)
	}

	// Search from the header box, with highlighted matches. (chromedp
	// sends the / as a separate character event, which lands in the box.)
	eval[chromedp.Void](b, `document.getElementById("q").value = ""`)
	b.do("type a query", chromedp.SendKeys(chromedp.CSS("#q"), "permission denied\n"))
	b.do("wait for hits", chromedp.WaitVisible(chromedp.CSS("ol.hits mark")))
	b.settle()
	if !strings.Contains(b.location(), "/search?query=permission+denied") {
		t.Errorf("search went to %s", b.location())
	}
	b.check("search")
	b.shot("search")

	// Incidents: the lens tabs filter, an incident opens, its session
	// opens at the anchor row.
	b.open("/incidents")
	b.check("incidents")
	b.shot("incidents")
	b.click(`#lens-skill`)
	if lenses := eval[[]string](b, `[...document.querySelectorAll("table.incidents tbody tr td:nth-child(3)")].map(td => td.textContent)`); len(lenses) == 0 {
		t.Error("skill tab: no incidents")
	} else {
		for _, l := range lenses {
			if l != "skill" {
				t.Errorf("skill tab lists a %s incident", l)
			}
		}
	}
	// The filter form: a minimum score keeps only incidents at or above it.
	eval[chromedp.Void](b, `document.querySelector("input[name=min_score]").value = "40"`)
	b.click(`form.filters button`)
	scores := eval[[]float64](b, `[...document.querySelectorAll("table.incidents tbody tr td:first-child")].map(td => +td.textContent)`)
	if !strings.Contains(b.location(), "min_score=40") || !strings.Contains(b.location(), "lens=skill") || len(scores) == 0 {
		t.Errorf("min score filter: %s, %d rows", b.location(), len(scores))
	}
	for _, sc := range scores {
		if sc < 40 {
			t.Errorf("min score 40 lists an incident scoring %g", sc)
		}
	}
	b.click(`table.incidents tbody tr td:nth-child(4) a`)
	if !strings.Contains(b.location(), "/incidents/skill/") || eval[int](b, `document.querySelectorAll("ol.findings li, #f-h").length`) == 0 {
		t.Errorf("incident page: %s", b.location())
	}
	b.check("incident")
	b.shot("incident")
	b.click(`a.button`)
	u, _ := url.Parse(b.location())
	if !strings.HasPrefix(u.Fragment, "row-") {
		t.Fatalf("the session link has no row anchor: %s", u)
	}
	inView := eval[bool](b, fmt.Sprintf(`(() => { const r = document.getElementById(%q).getBoundingClientRect();
		return r.bottom > 0 && r.top < innerHeight; })()`, u.Fragment))
	if !inView {
		t.Errorf("the session viewer did not scroll to #%s", u.Fragment)
	}
	if eval[int](b, `document.querySelectorAll("li.row.anchor, .flag").length`) == 0 {
		t.Error("no incident anchor is marked in the session")
	}
	b.check("session")
	b.shot("session")
	b.do("press j", chromedp.KeyEvent("j"))
	if !eval[bool](b, `document.activeElement.matches("li.row")`) {
		t.Error("j does not move to a transcript row")
	}
	b.click(`a.raw`)
	if !strings.Contains(b.location(), "/rows/") {
		t.Errorf("row link went to %s", b.location())
	}
	b.check("row")
	b.shot("row")

	// Sessions, skills (sorted by a header click), a skill, MCP servers,
	// hooks, the LLM audit.
	b.open("/sessions")
	b.check("sessions")
	b.shot("sessions")
	b.open("/skills?since=all")
	b.click(`#sort-name`)
	names := eval[[]string](b, `[...document.querySelectorAll("table.sortable tbody td:first-child")].map(td => td.textContent)`)
	for i := 1; i < len(names); i++ {
		if names[i-1] < names[i] {
			t.Errorf("skills sorted by name (first click: descending): %q before %q", names[i-1], names[i])
			break
		}
	}
	b.check("skills")
	b.shot("skills")
	b.click(`table.sortable tbody td:first-child a`)
	b.check("skill")
	b.shot("skill")
	for _, p := range []struct{ path, name string }{{"/mcp-servers?since=all", "mcp-servers"}, {"/hooks?since=all", "hooks"},
		{"/llm", "llm"}, {"/nope", "not-found"}} {
		b.open(p.path)
		if p.name == "not-found" {
			b.mu.Lock()
			b.problems = nil // the 404 is the point
			b.mu.Unlock()
		}
		b.check(p.name)
		b.shot(p.name)
	}

	// A hostile transcript stays text: nothing ran, no element came in.
	b.open("/sessions/" + hostileSession)
	if v := eval[string](b, `String(window.__pwned)`); v != "undefined" {
		t.Errorf("the hostile transcript ran: window.__pwned = %s", v)
	}
	if n := eval[int](b, `document.querySelectorAll("main script, main iframe, main img, main svg:not(.chart), main [onerror], main [onload], main a[href^='javascript']").length`); n != 0 {
		t.Errorf("the hostile transcript added %d elements", n)
	}
	if !strings.Contains(eval[string](b, `document.querySelector("main").innerText`), "<script>window.__pwned=1") {
		t.Error("the hostile text is not shown as text")
	}
	if title := eval[string](b, `document.title`); strings.Contains(title, "pwned") {
		t.Errorf("title %q", title)
	}
	b.check("hostile session")
	b.shot("hostile-session")

	// Dark theme, from the system preference and from the switch.
	dark := func(on bool) {
		v := "light"
		if on {
			v = "dark"
		}
		if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}}); err != nil {
			t.Fatal(err)
		}
	}
	dark(true)
	b.open("/?since=all")
	if bg := eval[string](b, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(22, 24, 28)" {
		t.Errorf("dark theme background %s", bg)
	}
	b.shot("overview-dark")
	b.do("theme switch", chromedp.Click(chromedp.ID("theme")))
	if bg := eval[string](b, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(251, 251, 250)" {
		t.Errorf("after the theme switch the background is %s", bg)
	}
	dark(false)
	b.check("dark")

	// A phone: nothing wider than the screen.
	b.do("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	for _, p := range []struct{ path, name string }{{"/?since=all", "phone-overview"}, {"/incidents", "phone-incidents"},
		{"/sessions/" + hostileSession, "phone-session"}} {
		b.open(p.path)
		if w := eval[int](b, `document.documentElement.scrollWidth - innerWidth`); w > 1 {
			t.Errorf("%s is %d px wider than a phone screen", p.path, w)
		}
		b.check(p.name)
		b.shot(p.name)
	}
}

// TestLoginInABrowser logs in with the read token through the form.
func TestLoginInABrowser(t *testing.T) {
	path := chromium(t)
	srv := newSite(t, dashboard.Options{ReadToken: "browser-read-token", AdminToken: "browser-admin-token", Budget: budget},
		testcorpus.Labelled(t))
	b := newBrowser(t, path, srv.URL, screenshotDir(t))
	b.do("open", chromedp.Navigate(srv.URL+"/sessions"), chromedp.WaitVisible(chromedp.ID("token")))
	b.settle()
	b.shot("login")
	b.do("log in", chromedp.SendKeys(chromedp.ID("token"), "browser-read-token\n"))
	b.do("wait", chromedp.WaitVisible(chromedp.CSS("form.logout")))
	b.settle()
	if !strings.HasSuffix(b.location(), "/sessions") {
		t.Errorf("after login: %s", b.location())
	}
	if c := eval[string](b, `document.cookie`); strings.Contains(c, "cortex_token") {
		t.Error("the token cookie is readable by scripts")
	}
	b.check("login")
	b.click(`form.logout button`)
	if !strings.Contains(b.location(), "/login") {
		t.Errorf("after logout: %s", b.location())
	}
}
