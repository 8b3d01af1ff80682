// Package httpapi is Cortex's HTTP surface: the REST API (one route per
// action of the app registry), the MCP streamable-HTTP endpoint, the
// generated OpenAPI document and /health, behind one bearer-token
// middleware. It holds no logic of its own: every route decodes its
// parameters with the registry and calls the service.
package httpapi

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
)

// MaxBodyBytes bounds a request body.
const MaxBodyBytes = 1 << 20

// Options configure the handler.
type Options struct {
	// ReadToken grants cortex:read, AdminToken cortex:read and
	// cortex:admin. With neither set, requests are unauthenticated and
	// get cortex:read only (allowed on loopback listeners only; see
	// CheckListen); admin actions then need an admin token.
	ReadToken  string
	AdminToken string
	// MCP, when set, is served at /mcp behind the same authentication
	// (it reads the caller with CallerFrom).
	MCP http.Handler
	// Dashboard, when set, serves every path outside /api, /mcp and
	// /health (the web UI; it authenticates on its own, with the same
	// tokens).
	Dashboard http.Handler
	// Logger receives request and audit lines (nil: discarded).
	Logger *slog.Logger
	// Version is reported by /health and the OpenAPI document.
	Version string
	// Listen is the configured listen address: its host is accepted in
	// Host and Origin headers besides the loopback names.
	Listen string
	// AllowedHosts are further host names (or addresses) clients may use
	// to reach the server ([server] allowed_hosts).
	AllowedHosts []string
	// MaxAuthFailures failed authentications per client address within
	// AuthFailureWindow lock the client out until the oldest leaves the
	// window (defaults 10 and 1 minute).
	MaxAuthFailures   int
	AuthFailureWindow time.Duration
	// Now is the clock of the failure window (tests).
	Now func() time.Time
}

type callerKey struct{}

// CallerFrom returns the authenticated caller of a request (set by the
// middleware; the zero Caller, without scopes, otherwise).
func CallerFrom(r *http.Request) app.Caller {
	c, _ := r.Context().Value(callerKey{}).(app.Caller)
	return c
}

// CheckListen refuses a non-loopback listen address when no token is
// configured: an open Cortex must not be reachable from the network.
func CheckListen(addr string, o Options) error {
	if o.ReadToken != "" || o.AdminToken != "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return cortex.Errorf(cortex.CodeInvalid, "listen address %q: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return cortex.Errorf(cortex.CodeInvalid,
		"refusing to listen on %s without a token: set [server] read_token (CORTEX_READ_TOKEN) or listen on 127.0.0.1", addr)
}

// NewHandler returns the HTTP handler: /health, /api/openapi.json, one
// route per registry action, and /mcp.
func NewHandler(svc *app.Service, o Options) http.Handler {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxAuthFailures <= 0 {
		o.MaxAuthFailures = DefaultMaxAuthFailures
	}
	if o.AuthFailureWindow <= 0 {
		o.AuthFailureWindow = DefaultAuthFailureWindow
	}
	h := &handler{svc: svc, o: o, limiter: newAuthLimiter(o.MaxAuthFailures, o.AuthFailureWindow, o.Now)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": o.Version})
	})
	mux.Handle("GET /api/openapi.json", h.auth(app.ScopeRead, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, OpenAPI(o.Version))
	})))
	for _, a := range app.Actions() {
		mux.Handle(a.Method+" "+a.Path, h.auth(a.Scope, h.action(a)))
	}
	if o.MCP != nil {
		mux.Handle("/mcp", h.auth(app.ScopeRead, o.MCP))
	}
	notFound := func(w http.ResponseWriter, r *http.Request) {
		writeError(w, cortex.Errorf(cortex.CodeNotFound, "no route %s %s (see /api/openapi.json)", r.Method, r.URL.Path))
	}
	mux.HandleFunc("/api/", notFound)
	if o.Dashboard != nil {
		mux.Handle("/", o.Dashboard)
	} else {
		mux.HandleFunc("/", notFound)
	}
	// The host check comes first, before any route (the dashboard's
	// pages included) and before authentication.
	return h.logRequests(newHostGuard(o).wrap(mux))
}

// Defaults of the failed-authentication limit.
const (
	DefaultMaxAuthFailures   = 10
	DefaultAuthFailureWindow = time.Minute
)

type handler struct {
	svc     *app.Service
	o       Options
	limiter *authLimiter
}

// auth authenticates the bearer token and checks the route's scope
// before anything else runs.
func (h *handler) auth(scope app.Scope, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tokens := h.o.ReadToken != "" || h.o.AdminToken != ""
		client := clientKey(r.RemoteAddr)
		if tokens {
			if wait := h.limiter.blocked(client); wait > 0 {
				w.Header().Set("Retry-After", retrySeconds(wait))
				writeError(w, cortex.Errorf(cortex.CodeBusy,
					"too many failed authentications from %s; retry after %ss", client, retrySeconds(wait)))
				return
			}
		}
		c, err := h.authenticate(r)
		if err != nil {
			if tokens {
				h.limiter.fail(client)
				h.o.Logger.Warn("failed authentication", "remote", r.RemoteAddr, "path", r.URL.Path)
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="cortex"`)
			writeError(w, err)
			return
		}
		if !c.Has(scope) {
			writeError(w, cortex.Errorf(cortex.CodeForbidden, "forbidden: %s requires scope %s", r.URL.Path, scope))
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)))
	})
}

func (h *handler) authenticate(r *http.Request) (app.Caller, error) {
	c := app.Caller{Surface: cortex.SurfaceREST, Name: r.RemoteAddr}
	if strings.HasPrefix(r.URL.Path, "/mcp") {
		c.Surface = cortex.SurfaceMCP
	}
	got, hasAuth := bearer(r)
	if h.o.ReadToken == "" && h.o.AdminToken == "" {
		c.Scopes = []app.Scope{app.ScopeRead}
		return c, nil
	}
	if !hasAuth {
		return c, cortex.Errorf(cortex.CodeUnauthorized, "missing bearer token (Authorization: Bearer …)")
	}
	scopes, name, ok := TokenScopes(got, h.o.ReadToken, h.o.AdminToken)
	if !ok {
		return c, cortex.Errorf(cortex.CodeUnauthorized, "invalid bearer token")
	}
	c.Scopes, c.Name = scopes, name+"@"+r.RemoteAddr
	return c, nil
}

// TokenScopes returns the scopes a presented token grants (the admin
// token: read and admin; the read token: read) and the token's name;
// ok is false for any other token. Tokens are compared in constant time.
// The dashboard's login checks tokens with it too.
func TokenScopes(got, readToken, adminToken string) (scopes []app.Scope, name string, ok bool) {
	switch {
	case equal(got, adminToken):
		return []app.Scope{app.ScopeRead, app.ScopeAdmin}, "admin-token", true
	case equal(got, readToken):
		return []app.Scope{app.ScopeRead}, "read-token", true
	}
	return nil, "", false
}

// Bearer returns the bearer token of a request's Authorization header.
func Bearer(r *http.Request) (string, bool) { return bearer(r) }

// equal compares a presented token with a configured one in constant
// time; an unset token never matches.
func equal(got, want string) bool {
	if want == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func bearer(r *http.Request) (string, bool) {
	v := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// action serves one registry action.
func (h *handler) action(a app.Action) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var params any
		var err error
		if r.Method == http.MethodGet {
			q := r.URL.Query()
			for _, name := range a.PathParams() {
				if q.Has(name) {
					writeError(w, cortex.Errorf(cortex.CodeInvalid, "%s: %s is given in the path, not the query string", a.Name, name))
					return
				}
				q.Set(name, r.PathValue(name))
			}
			params, err = a.DecodeQuery(q)
		} else {
			if len(r.URL.Query()) > 0 {
				writeError(w, cortex.Errorf(cortex.CodeInvalid, "%s: send parameters as a JSON body, not in the query string", a.Name))
				return
			}
			var body []byte
			body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
			if err != nil {
				writeError(w, cortex.Errorf(cortex.CodeInvalid, "%s: request body: %v", a.Name, err))
				return
			}
			params, err = a.DecodeJSON(body)
		}
		if err != nil {
			writeError(w, err)
			return
		}
		res, err := h.svc.Call(r.Context(), CallerFrom(r), a, params)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Flush lets streaming handlers (MCP) flush through the wrapper.
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap exposes the underlying writer to http.ResponseController.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (h *handler) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		h.o.Logger.Debug("http request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
			"ms", time.Since(start).Milliseconds(), "remote", r.RemoteAddr)
	})
}

// ErrorBody is the JSON of every error response.
type ErrorBody struct {
	Error struct {
		Code    cortex.Code `json:"code"`
		Message string      `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, err error) {
	var body ErrorBody
	body.Error.Code, body.Error.Message = cortex.ErrorCode(err), cortex.ErrorMessage(err)
	if errors.Is(err, context.Canceled) {
		body.Error.Code = cortex.CodeUnavailable
	}
	writeJSON(w, body.Error.Code.HTTPStatus(), body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(fmt.Sprintf(`{"error":{"code":"internal","message":%q}}`, "encode response: "+err.Error()))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(b)
	_, _ = w.Write([]byte("\n"))
}
