// Package dashboard is Cortex's web dashboard, served by `cortex serve` at
// / beside the REST API (/api) and MCP (/mcp): server-rendered HTML pages
// (html/template, every transcript text escaped), SVG charts drawn in Go,
// one stylesheet and one small script, all embedded in the binary — no
// CDN, no fonts to fetch, no build step. Pages work without JavaScript;
// the script only adds local times, keyboard shortcuts and the theme
// switch.
//
// It reads only through the app service and its action registry, with
// the caller's scopes, like the other surfaces. Expensive reads (incident
// listings, investigations) go through a cache that answers within a
// page budget and finishes slow computations in the background (see
// cache).
//
// Authentication is the API's: without tokens the dashboard is read-only
// (and `cortex serve` listens on loopback only); with tokens a browser
// logs in once and the token is kept in an HttpOnly, SameSite=Strict
// cookie. Every page is a GET that changes nothing; the only POSTs (log
// in, log out) are protected against cross-site requests twice: the
// standard library's cross-origin check and a per-browser CSRF token.
package dashboard

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/httpapi"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Surface names the dashboard in callers (audit and logs).
const Surface = "web"

// Cookie names.
const (
	tokenCookie = "cortex_token"
	csrfCookie  = "cortex_csrf"
)

// Options configure the dashboard.
type Options struct {
	// ReadToken and AdminToken are the API's tokens (none: read-only,
	// no login).
	ReadToken  string
	AdminToken string
	Logger     *slog.Logger
	Version    string
	// Budget is how long a page waits for an expensive read before it
	// says "still computing" (default 150 ms); CacheTTL how long such a
	// read is served before it is refreshed in the background (default
	// 60 s).
	Budget   time.Duration
	CacheTTL time.Duration
}

// Dashboard is the web UI's handler.
type Dashboard struct {
	svc   *app.Service
	o     Options
	mux   *http.ServeMux
	pages map[string]*template.Template
	cache *cache
}

// New returns the dashboard over svc. Close it to stop its background
// computations.
func New(svc *app.Service, o Options) (*Dashboard, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Budget <= 0 {
		o.Budget = 150 * time.Millisecond
	}
	if o.CacheTTL <= 0 {
		o.CacheTTL = time.Minute
	}
	now := svc.Now
	if now == nil {
		now = time.Now
	}
	d := &Dashboard{svc: svc, o: o, cache: newCache(o.CacheTTL, 128, now)}
	if err := d.parseTemplates(); err != nil {
		return nil, err
	}
	d.routes()
	return d, nil
}

// Close cancels the background computations and waits for them.
func (d *Dashboard) Close() { d.cache.close() }

// Warm starts the overview's expensive reads in the background, so the
// first visitor finds them ready.
func (d *Dashboard) Warm() {
	for _, lens := range app.LensNames() {
		d.lensIncidents(context.Background(), lens, overviewWindow, 0)
	}
}

func (d *Dashboard) now() time.Time {
	if d.svc.Now != nil {
		return d.svc.Now()
	}
	return time.Now()
}

func (d *Dashboard) routes() {
	m := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	m.Handle("GET /static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	}))
	m.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/static/favicon.svg", http.StatusMovedPermanently)
	})
	m.HandleFunc("GET /login", d.loginPage)
	m.HandleFunc("POST /login", d.login)
	m.HandleFunc("POST /logout", d.logout)
	page := func(pattern string, h func(w http.ResponseWriter, r *http.Request) (string, any, error)) {
		m.Handle(pattern, d.auth(d.render(h)))
	}
	page("GET /{$}", d.overview)
	page("GET /incidents", d.incidents)
	page("GET /incidents/{lens}/{id}", d.incidentPage)
	page("GET /sessions", d.sessions)
	page("GET /sessions/{session}", d.sessionPage)
	page("GET /rows/{id}", d.rowPage)
	page("GET /search", d.search)
	page("GET /skills", d.skills)
	page("GET /skills/{skill}", d.skillPage)
	page("GET /mcp-servers", d.mcpServers)
	page("GET /hooks", d.hooks)
	page("GET /llm", d.llmAudit)
	m.Handle("GET /incidents/{lens}/{id}/bundle.json", d.auth(http.HandlerFunc(d.bundleJSON)))
	m.Handle("/", d.auth(d.render(func(w http.ResponseWriter, r *http.Request) (string, any, error) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return "", nil, cortex.Errorf(cortex.CodeInvalid, "method %s not allowed here: every page is a GET", r.Method)
		}
		return "", nil, cortex.Errorf(cortex.CodeNotFound, "no page %s", r.URL.Path)
	})))
	d.mux = m
}

// ServeHTTP serves the dashboard with its security headers; POSTs must
// pass the cross-origin check.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	if r.Method == http.MethodPost {
		if err := http.NewCrossOriginProtection().Check(r); err != nil {
			d.fail(w, r, cortex.Errorf(cortex.CodeForbidden, "cross-origin request refused"))
			return
		}
	}
	d.mux.ServeHTTP(w, r)
}

type callerKey struct{}

func callerFrom(r *http.Request) app.Caller {
	c, _ := r.Context().Value(callerKey{}).(app.Caller)
	return c
}

// authenticate returns the caller of a request: everyone reads when no
// token is configured; otherwise the bearer header or the login cookie
// must hold the read or the admin token.
func (d *Dashboard) authenticate(r *http.Request) (app.Caller, bool) {
	c := app.Caller{Surface: Surface, Name: "web@" + r.RemoteAddr}
	if d.o.ReadToken == "" && d.o.AdminToken == "" {
		c.Scopes = []app.Scope{app.ScopeRead}
		return c, true
	}
	tok, ok := httpapi.Bearer(r)
	if ck, err := r.Cookie(tokenCookie); err == nil && !ok {
		tok = ck.Value
	}
	scopes, name, ok := httpapi.TokenScopes(tok, d.o.ReadToken, d.o.AdminToken)
	if !ok {
		return c, false
	}
	c.Scopes, c.Name = scopes, "web-"+name+"@"+r.RemoteAddr
	return c, true
}

// auth sends unauthenticated browsers to the login page.
func (d *Dashboard) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := d.authenticate(r)
		if !ok {
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)))
	})
}

// csrfToken returns the browser's CSRF token, setting its cookie when
// the browser has none.
func csrfToken(w http.ResponseWriter, r *http.Request) string {
	if ck, err := r.Cookie(csrfCookie); err == nil && len(ck.Value) == 64 {
		return ck.Value
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	tok := hex.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil})
	return tok
}

// checkCSRF compares the form's token with the browser's cookie.
func checkCSRF(r *http.Request) error {
	ck, err := r.Cookie(csrfCookie)
	if err != nil || len(ck.Value) != 64 || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(r.PostFormValue("csrf"))) != 1 {
		return cortex.Errorf(cortex.CodeForbidden, "the form's CSRF token does not match this browser's; reload the page and try again")
	}
	return nil
}

// localPath keeps a redirect target on this site.
func localPath(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	return next
}

type loginData struct {
	CSRF, Next, Error string
	TokensSet         bool
}

func (d *Dashboard) loginPage(w http.ResponseWriter, r *http.Request) {
	data := loginData{CSRF: csrfToken(w, r), Next: localPath(r.URL.Query().Get("next")),
		TokensSet: d.o.ReadToken != "" || d.o.AdminToken != ""}
	d.write(w, r, http.StatusOK, "login", page{Title: "Log in", Data: data})
}

func (d *Dashboard) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := checkCSRF(r); err != nil {
		d.fail(w, r, err)
		return
	}
	next := localPath(r.PostFormValue("next"))
	tok := strings.TrimSpace(r.PostFormValue("token"))
	if _, _, ok := httpapi.TokenScopes(tok, d.o.ReadToken, d.o.AdminToken); !ok {
		d.o.Logger.Warn("dashboard login refused", "remote", r.RemoteAddr)
		data := loginData{CSRF: csrfToken(w, r), Next: next, Error: "That is not the read or admin token of this server.",
			TokensSet: d.o.ReadToken != "" || d.o.AdminToken != ""}
		d.write(w, r, http.StatusUnauthorized, "login", page{Title: "Log in", Data: data})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: 30 * 24 * 3600})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (d *Dashboard) logout(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := checkCSRF(r); err != nil {
		d.fail(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// page is what the layout renders around a page's content.
type page struct {
	Title   string
	Nav     string
	Data    any
	CSRF    string
	Version string
	// LoggedIn says a token cookie authenticates the browser (log-out
	// button); Admin that the caller holds cortex:admin.
	LoggedIn bool
	Admin    bool
	// Pending says some part is still being computed: the page reloads
	// itself after a moment.
	Pending bool
	Elapsed time.Duration
}

// pageData is implemented by page data that has a title and nav entry.
type pageData interface {
	title() string
	nav() string
}

// pending is implemented by page data that knows whether a part is still
// being computed.
type pendingData interface{ pending() bool }

// render runs a page handler and writes its template, or the error page.
func (d *Dashboard) render(h func(w http.ResponseWriter, r *http.Request) (string, any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		r = withDeadline(r, d.o.Budget)
		name, data, err := h(w, r)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		p := page{Data: data, Elapsed: time.Since(start)}
		if pd, ok := data.(pageData); ok {
			p.Title, p.Nav = pd.title(), pd.nav()
		}
		if pd, ok := data.(pendingData); ok {
			p.Pending = pd.pending()
		}
		d.write(w, r, http.StatusOK, name, p)
	})
}

// write renders a template into a buffer first, so a template error
// never sends half a page.
func (d *Dashboard) write(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	c := callerFrom(r)
	p.Version, p.Admin = d.o.Version, c.Has(app.ScopeAdmin)
	if _, err := r.Cookie(tokenCookie); err == nil && (d.o.ReadToken != "" || d.o.AdminToken != "") {
		p.LoggedIn = true
		p.CSRF = csrfToken(w, r)
	}
	t := d.pages[name]
	if t == nil {
		d.o.Logger.Error("dashboard: no template", "name", name)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", p); err != nil {
		d.o.Logger.Error("dashboard: render", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(stripControls(buf.Bytes()))
}

// stripControls drops control characters (ANSI escapes, NUL, DEL…)
// other than tab and newlines from a rendered page: transcript text may
// carry them, the templates never do.
func stripControls(b []byte) []byte {
	if bytes.IndexFunc(b, isControl) < 0 {
		return b
	}
	return bytes.Map(func(r rune) rune {
		if isControl(r) {
			return -1
		}
		return r
	}, b)
}

func isControl(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || (r >= 0x7f && r < 0xa0)
}

type errorData struct {
	Code    cortex.Code
	Message string
	Status  int
}

func (e errorData) title() string { return fmt.Sprintf("%d %s", e.Status, http.StatusText(e.Status)) }
func (e errorData) nav() string   { return "" }

// fail renders an error page with the error's code and safe message.
func (d *Dashboard) fail(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := cortex.ErrorCode(err), cortex.ErrorMessage(err)
	var ce *cortex.Error
	if !errors.As(err, &ce) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			code, msg = cortex.CodeUnavailable, "the request was canceled"
		} else {
			d.o.Logger.Error("dashboard page failed", "path", r.URL.Path, "err", err)
			code, msg = cortex.CodeInternal, "internal error"
		}
	}
	data := errorData{Code: code, Message: msg, Status: code.HTTPStatus()}
	d.write(w, r, data.Status, "error", page{Title: data.title(), Data: data})
}
