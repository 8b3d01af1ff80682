package httpapi_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/httpapi"
)

// every route of the handler, with parameters that make it answer.
func everyRoute() [][2]string {
	routes := [][2]string{{"GET", "/health"}, {"GET", "/api/openapi.json"}, {"POST", "/mcp"}, {"GET", "/"}, {"GET", "/dashboard"}}
	for _, a := range app.Actions() {
		path := a.Path
		if a.Method == http.MethodGet && minimal[a.Name] != "" {
			path += "?" + minimal[a.Name]
		}
		routes = append(routes, [2]string{a.Method, path})
	}
	return routes
}

func rawRequest(t *testing.T, srv *httptest.Server, method, path string, header map[string]string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}

// TestHostileHostAndOrigin: without tokens (the default setup) a request
// naming another host — a web page that rebound its DNS name to
// 127.0.0.1 — or coming from another origin is refused on every route,
// before any data is read; loopback names and the listen address pass.
func TestHostileHostAndOrigin(t *testing.T) {
	srv := newServer(t, httpapi.Options{Listen: "127.0.0.1:3100", AllowedHosts: []string{"cortex.internal"}})
	hostile := []map[string]string{
		{"Host": "evil.example"},
		{"Host": "evil.example:3100"},
		{"Host": "127.0.0.1.nip.io"},
		{"Host": "localhost.evil.example"},
		{"Origin": "http://evil.example"},
		{"Origin": "http://evil.example:3100"},
		{"Origin": "null"},
		{"Origin": "file://"},
		{"Host": "localhost:3100", "Origin": "https://attacker.test"},
	}
	for _, route := range everyRoute() {
		for _, h := range hostile {
			status, body, hdr := rawRequest(t, srv, route[0], route[1], h)
			if status != http.StatusForbidden || !strings.Contains(body, `"forbidden"`) {
				t.Errorf("%s %s with %v: %d %.200s", route[0], route[1], h, status, body)
			}
			if strings.Contains(body, "lavra") || strings.Contains(body, `"rows"`) {
				t.Errorf("%s %s with %v leaked data: %.200s", route[0], route[1], h, body)
			}
			for k := range hdr {
				if strings.HasPrefix(strings.ToLower(k), "access-control-") {
					t.Errorf("%s %s: CORS header %s", route[0], route[1], k)
				}
			}
		}
	}
	for _, h := range []map[string]string{
		{"Host": "localhost:3100"}, {"Host": "127.0.0.1:3100"}, {"Host": "[::1]:3100"}, {"Host": "LOCALHOST"},
		{"Host": "cortex.internal:3100"}, {"Origin": "http://localhost:3100"}, {"Origin": "http://127.0.0.1:3100"},
		{"Host": "cortex.internal", "Origin": "https://cortex.internal"},
	} {
		if status, body, _ := rawRequest(t, srv, "GET", "/api/status", h); status != http.StatusOK {
			t.Errorf("GET /api/status with %v: %d %.200s", h, status, body)
		}
	}
	// A preflight gets no CORS permission either.
	status, _, hdr := rawRequest(t, srv, "OPTIONS", "/api/status", map[string]string{"Origin": "http://localhost:3100",
		"Access-Control-Request-Method": "GET"})
	if status == http.StatusOK || hdr.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight: %d %v", status, hdr)
	}
}

// TestListenHostIsAllowed: a server listening on a named address answers
// to that name; on a wildcard address only loopback names and
// allowed_hosts pass.
func TestListenHostIsAllowed(t *testing.T) {
	srv := newServer(t, httpapi.Options{Listen: "myhost.lan:3100", ReadToken: readTok})
	if status, body, _ := rawRequest(t, srv, "GET", "/api/status", map[string]string{"Host": "myhost.lan:3100",
		"Authorization": "Bearer " + readTok}); status != 200 {
		t.Fatalf("listen host: %d %s", status, body)
	}
	wild := newServer(t, httpapi.Options{Listen: "0.0.0.0:3100", ReadToken: readTok})
	if status, _, _ := rawRequest(t, wild, "GET", "/api/status", map[string]string{"Host": "0.0.0.0:3100",
		"Authorization": "Bearer " + readTok}); status != 403 {
		t.Fatalf("wildcard host: %d", status)
	}
}

// TestFailedAuthenticationsAreRateLimited: after MaxAuthFailures wrong
// tokens a client is refused — even with the right token — until the
// window passes; other clients are not affected.
func TestFailedAuthenticationsAreRateLimited(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	srv := newServer(t, httpapi.Options{ReadToken: readTok, MaxAuthFailures: 3, AuthFailureWindow: time.Minute, Now: clock})
	auth := func(tok string) (int, http.Header) {
		status, _, hdr := rawRequest(t, srv, "GET", "/api/status", map[string]string{"Authorization": "Bearer " + tok})
		return status, hdr
	}
	for i := 0; i < 3; i++ {
		if status, _ := auth("wrong-token-guess"); status != 401 {
			t.Fatalf("guess %d: %d", i, status)
		}
	}
	status, hdr := auth(readTok)
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" {
		t.Fatalf("after 3 failures, the right token: %d %v", status, hdr)
	}
	mu.Lock()
	now = now.Add(61 * time.Second)
	mu.Unlock()
	if status, _ := auth(readTok); status != 200 {
		t.Fatalf("after the window: %d", status)
	}
	// Successful requests never count.
	for i := 0; i < 10; i++ {
		if status, _ := auth(readTok); status != 200 {
			t.Fatalf("good request %d: %d", i, status)
		}
	}
}

// TestLimitListener caps open connections: a third client waits until one
// of two open connections closes.
func TestLimitListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpapi.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	go srv.Serve(httpapi.LimitListener(ln, 2))
	defer srv.Shutdown(context.Background())
	if srv.IdleTimeout == 0 || srv.WriteTimeout == 0 || srv.ReadHeaderTimeout == 0 {
		t.Fatalf("timeouts unset: %+v", srv)
	}
	var conns []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
		conns = append(conns, c)
	}
	third, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	io.WriteString(third, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	third.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, _ := third.Read(make([]byte, 1)); n != 0 {
		t.Fatal("a third connection was served while two were open")
	}
	conns[0].Close()
	third.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	if n, err := third.Read(buf); err != nil || !strings.HasPrefix(string(buf[:n]), "HTTP/1.1 200") {
		t.Fatalf("third connection after a close: %q %v", buf[:n], err)
	}
	conns[1].Close()
}
