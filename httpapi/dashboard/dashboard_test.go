package dashboard_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/httpapi"
	"github.com/cortexhq/cortex/httpapi/dashboard"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/internal/teststore"
)

// hostileDir holds a session whose text is hostile markup.
var hostileDir = filepath.Join("testdata", "hostile")

const hostileSession = "6e0571e0-0000-4bad-9000-000000000bad"

// newSite serves the real handler stack (REST, dashboard) over a store of
// the given folders.
func newSite(t testing.TB, o dashboard.Options, dirs ...string) *httptest.Server {
	t.Helper()
	db, _ := teststore.Indexed(t, dirs...)
	svc := app.New(db)
	dash, err := dashboard.New(svc, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dash.Close)
	srv := httptest.NewServer(httpapi.NewHandler(svc, httpapi.Options{ReadToken: o.ReadToken, AdminToken: o.AdminToken,
		Dashboard: dash, Version: "test"}))
	t.Cleanup(srv.Close)
	return srv
}

type got struct {
	status int
	body   string
	header http.Header
	url    string
}

func get(t testing.TB, c *http.Client, u string) got {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return got{status: res.StatusCode, body: string(b), header: res.Header, url: res.Request.URL.String()}
}

var hrefRe = regexp.MustCompile(`href="(/[^"#]*)`)

// links returns the page's local links (HTML-unescaped).
func links(body, prefix string) []string {
	var out []string
	for _, m := range hrefRe.FindAllStringSubmatch(body, -1) {
		u := strings.ReplaceAll(m[1], "&amp;", "&")
		if strings.HasPrefix(u, prefix) {
			out = append(out, u)
		}
	}
	return out
}

// budget lets every expensive read finish within the request in tests.
const budget = 60e9

// TestEveryPageAnswers walks every page of the dashboard over the real
// corpus, following the links a reader would, and checks each answers
// 200 with the security headers and no error message.
func TestEveryPageAnswers(t *testing.T) {
	srv := newSite(t, dashboard.Options{Budget: budget}, testcorpus.Real(t), hostileDir)
	c := srv.Client()
	pages := []string{"/", "/?since=all", "/?since=7d", "/incidents", "/incidents?since=90d", "/sessions", "/sessions?tool=codex&limit=5",
		"/search", "/search?query=error&role=tool_result", "/search?query=%22permission+denied%22&rank=true",
		"/skills?since=all", "/skills?since=all&sort=name&dir=asc", "/mcp-servers?since=all", "/hooks?since=all", "/llm", "/login",
		"/static/style.css", "/static/app.js", "/static/favicon.svg"}
	for _, lens := range app.LensNames() {
		pages = append(pages, "/incidents?lens="+lens)
	}
	seen := map[string]bool{}
	check := func(u string) got {
		t.Helper()
		g := get(t, c, srv.URL+u)
		if g.status != http.StatusOK {
			t.Errorf("GET %s: %d\n%.600s", u, g.status, g.body)
		}
		if csp := g.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("GET %s: CSP %q", u, csp)
		}
		if strings.Contains(g.body, `class="error"`) {
			t.Errorf("GET %s shows an error: %s", u, regexp.MustCompile(`class="error"[^<]*<[^<]*`).FindString(g.body))
		}
		return g
	}
	var incidentLinks, sessionLinks, skillLinks []string
	for _, p := range pages {
		g := check(p)
		seen[p] = true
		incidentLinks = append(incidentLinks, links(g.body, "/incidents/")...)
		sessionLinks = append(sessionLinks, links(g.body, "/sessions/")...)
		skillLinks = append(skillLinks, links(g.body, "/skills/")...)
	}
	if len(incidentLinks) == 0 || len(sessionLinks) == 0 || len(skillLinks) == 0 {
		t.Fatalf("links: %d incidents, %d sessions, %d skills", len(incidentLinks), len(sessionLinks), len(skillLinks))
	}
	// Every incident listed opens: its pinned parameters find it again
	// (with -short, as under the race detector, the first ten).
	follow := len(incidentLinks) + len(sessionLinks) + len(skillLinks)
	if testing.Short() {
		follow = 10
	}
	for i, u := range incidentLinks {
		if seen[u] || i >= follow {
			continue
		}
		seen[u] = true
		g := check(u)
		if !strings.Contains(g.body, "Findings") {
			t.Errorf("%s: no findings section", u)
		}
		sessionLinks = append(sessionLinks, links(g.body, "/sessions/")...)
	}
	for i, u := range append(sessionLinks, skillLinks...) {
		if seen[u] || i > min(60, follow) {
			continue
		}
		seen[u] = true
		g := check(u)
		if strings.HasPrefix(u, "/sessions/") {
			if m := regexp.MustCompile(`row=(\d+)`).FindStringSubmatch(u); m != nil && !strings.Contains(g.body, `id="row-`+m[1]+`"`) {
				t.Errorf("%s: no anchor row-%s", u, m[1])
			}
			for _, r := range links(g.body, "/rows/")[:1] {
				check(r)
			}
		}
	}
	t.Logf("checked %d pages", len(seen))
}

// TestSkillPageShowsTheLifecycle checks the skill page's health, versions
// and comparison on the real corpus's verify skill (two bundled versions,
// one run each).
func TestSkillPageShowsTheLifecycle(t *testing.T) {
	srv := newSite(t, dashboard.Options{Budget: budget}, testcorpus.Real(t))
	g := get(t, srv.Client(), srv.URL+"/skills/verify?since=all")
	if g.status != http.StatusOK {
		t.Fatalf("%d %.400s", g.status, g.body)
	}
	for _, want := range []string{"Health since all", "2 runs in 2 sessions", "provisional", "v1 f65d22fc4444", "v2 14018171e0a4",
		"Did the last change help?", "not_enough_runs", "Evidence has to reach the reader", "grade A ≥ 90"} {
		if !strings.Contains(g.body, want) {
			t.Errorf("the skill page lacks %q", want)
		}
	}
}

// TestHostileTranscriptIsEscaped checks every text of the hostile session
// reaches the page as text, on the session, row and search pages.
func TestHostileTranscriptIsEscaped(t *testing.T) {
	srv := newSite(t, dashboard.Options{Budget: budget}, hostileDir)
	c := srv.Client()
	for _, u := range []string{"/sessions/" + hostileSession, "/search?query=pwned", "/rows/1", "/rows/4", "/sessions"} {
		g := get(t, c, srv.URL+u)
		if g.status != 200 {
			t.Fatalf("%s: %d", u, g.status)
		}
		for _, bad := range []string{"<script>window", "<img src=x", "<svg onload", "<iframe", `href="javascript:`, "\x1b"} {
			if strings.Contains(g.body, bad) {
				t.Errorf("%s: %q reaches the page unescaped", u, bad)
			}
		}
		if strings.Count(g.body, "<script") != 1 { // the page's own script only
			t.Errorf("%s: %d script elements", u, strings.Count(g.body, "<script"))
		}
	}
	g := get(t, c, srv.URL+"/sessions/"+hostileSession)
	for _, want := range []string{"&lt;script&gt;window.__pwned=1", "<strong>bold</strong>", "&lt;b&gt;evil&lt;/b&gt;"} {
		if !strings.Contains(g.body, want) {
			t.Errorf("session page lacks %q", want)
		}
	}
}

// TestLoginAndCSRF checks the token login: pages need it, the cookie is
// HttpOnly and SameSite=Strict, a login without the browser's CSRF token
// or from another origin is refused, pages never accept a POST.
func TestLoginAndCSRF(t *testing.T) {
	const read, admin = "read-token-for-tests", "admin-token-for-tests"
	srv := newSite(t, dashboard.Options{ReadToken: read, AdminToken: admin, Budget: budget}, testcorpus.Labelled(t))
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	g := get(t, c, srv.URL+"/sessions?tool=claude")
	if !strings.Contains(g.url, "/login?next=") || !strings.Contains(g.body, `name="csrf"`) {
		t.Fatalf("no redirect to the login page: %s", g.url)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`).FindStringSubmatch(g.body)
	if csrf == nil {
		t.Fatal("no CSRF token in the form")
	}
	post := func(c *http.Client, path string, form url.Values, origin string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
			req.Header.Set("Sec-Fetch-Site", "cross-site")
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := post(c, "/login", url.Values{"token": {read}, "csrf": {strings.Repeat("0", 64)}, "next": {"/"}}, ""); res.StatusCode != 403 {
		t.Errorf("login with a wrong CSRF token: %d", res.StatusCode)
	}
	if res := post(c, "/login", url.Values{"token": {read}, "csrf": {csrf[1]}, "next": {"/"}}, "https://evil.example"); res.StatusCode != 403 {
		t.Errorf("cross-origin login: %d", res.StatusCode)
	}
	if res := post(c, "/login", url.Values{"token": {"wrong"}, "csrf": {csrf[1]}, "next": {"/"}}, ""); res.StatusCode != 401 {
		t.Errorf("wrong token: %d", res.StatusCode)
	}
	noRedirect := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res := post(noRedirect, "/login", url.Values{"token": {read}, "csrf": {csrf[1]}, "next": {"//evil.example/x"}}, "")
	var cookie string
	for _, h := range res.Header.Values("Set-Cookie") {
		if strings.HasPrefix(h, "cortex_token=") {
			cookie = h
		}
	}
	if res.StatusCode != 303 || res.Header.Get("Location") != "/" || !strings.Contains(cookie, "HttpOnly") ||
		!strings.Contains(cookie, "SameSite=Strict") {
		t.Fatalf("login: %d to %q, cookie %q", res.StatusCode, res.Header.Get("Location"), cookie)
	}
	if g := get(t, c, srv.URL+"/sessions"); g.status != 200 || !strings.Contains(g.body, "Log out") {
		t.Fatalf("after login: %d %s", g.status, g.url)
	}
	if g := get(t, c, srv.URL+"/llm"); !strings.Contains(g.body, "needs the admin scope") {
		t.Error("the read token opens the LLM audit")
	}
	// The API keeps bearer tokens: the login cookie opens no /api route.
	if g := get(t, c, srv.URL+"/api/status"); g.status != 401 {
		t.Errorf("/api/status with the login cookie: %d", g.status)
	}
	if res := post(c, "/sessions", url.Values{}, ""); res.StatusCode != 400 && res.StatusCode != 405 {
		t.Errorf("POST to a page: %d", res.StatusCode)
	}
	if g := get(t, &http.Client{}, srv.URL+"/"); !strings.Contains(g.url, "/login") {
		t.Error("a browser without the cookie is not sent to the login page")
	}
	req, _ := http.NewRequest("GET", srv.URL+"/llm", nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if r2.StatusCode != 200 || strings.Contains(string(b), "needs the admin scope") {
		t.Errorf("admin bearer on /llm: %d", r2.StatusCode)
	}
}

// TestSlowReadsDoNotHoldThePage checks an expensive read over the budget
// gives a page that says so and reloads itself, then the answer.
func TestSlowReadsDoNotHoldThePage(t *testing.T) {
	srv := newSite(t, dashboard.Options{Budget: 1}, testcorpus.Real(t))
	c := srv.Client()
	g := get(t, c, srv.URL+"/incidents?lens=mcp")
	if g.status != 200 || !strings.Contains(g.body, `http-equiv="refresh"`) || !strings.Contains(g.body, "Still computing: mcp") {
		t.Fatalf("first view: %d\n%.2000s", g.status, g.body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60e9)
	defer cancel()
	for ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		g = get(t, c, srv.URL+"/incidents?lens=mcp")
		if !strings.Contains(g.body, "Still computing") {
			break
		}
	}
	if ctx.Err() != nil || strings.Contains(g.body, `http-equiv="refresh"`) || strings.Contains(g.body, `class="error"`) ||
		!strings.Contains(g.body, `<table class="incidents">`) {
		t.Fatalf("the answer never came:\n%.2000s", g.body)
	}
}
