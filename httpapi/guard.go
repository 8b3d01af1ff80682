package httpapi

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cortexhq/cortex"
)

// hostGuard refuses a request whose Host header, or Origin header when it
// has one, names a host this server does not answer to: loopback names, the
// configured listen address and Options.AllowedHosts. A web page that
// rebinds its own DNS name to 127.0.0.1 sends its own name as Host, so it
// can no longer read the store (DNS rebinding), and a page of another
// origin cannot drive the API through the user's browser. It wraps every
// route, pages added later included; no CORS header is ever sent.
type hostGuard struct {
	listenHost string
	allowed    map[string]bool
}

func newHostGuard(o Options) *hostGuard {
	g := &hostGuard{allowed: map[string]bool{}}
	if h, _, err := net.SplitHostPort(o.Listen); err == nil {
		if ip := net.ParseIP(h); h != "" && (ip == nil || !ip.IsUnspecified()) {
			g.listenHost = normalHost(h)
		}
	}
	for _, h := range o.AllowedHosts {
		if h = normalHost(h); h != "" {
			g.allowed[h] = true
		}
	}
	return g
}

// normalHost lower-cases a host name and strips a port, brackets and a
// trailing dot.
func normalHost(h string) string {
	h = strings.TrimSpace(h)
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// allows reports whether host (a Host header or an origin's host, with or
// without a port) is one this server answers to.
func (g *hostGuard) allows(host string) bool {
	h := normalHost(host)
	switch {
	case h == "localhost":
		return true
	case h == g.listenHost && h != "":
		return true
	case g.allowed[h]:
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func (g *hostGuard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// An empty Host only comes from HTTP/1.0 clients, never a browser.
		if r.Host != "" && !g.allows(r.Host) {
			writeError(w, cortex.Errorf(cortex.CodeForbidden,
				"host %q is not allowed (DNS rebinding protection): use 127.0.0.1 or localhost, or add it to [server] allowed_hosts",
				cortex.CutUTF8(r.Host, 200)))
			return
		}
		if origin, ok := r.Header["Origin"]; ok {
			if len(origin) != 1 || !g.originAllowed(origin[0]) {
				writeError(w, cortex.Errorf(cortex.CodeForbidden,
					"origin %q is not allowed: Cortex answers no cross-origin requests", cortex.CutUTF8(strings.Join(origin, ","), 200)))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// originAllowed accepts an http(s) origin whose host this server answers
// to; "null" (sandboxed frames, file: pages) and anything else is refused.
func (g *hostGuard) originAllowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return g.allows(u.Host)
}

// authLimiter counts failed authentications per client address over a
// sliding window; a client over the limit is refused (even with a valid
// token) until its oldest failure leaves the window, so a token cannot be
// guessed at network speed.
type authLimiter struct {
	mu       sync.Mutex
	max      int
	window   time.Duration
	now      func() time.Time
	failures map[string][]time.Time
}

// maxTrackedClients bounds the limiter's memory: when more clients have
// recent failures, the oldest entries are dropped.
const maxTrackedClients = 10000

func newAuthLimiter(max int, window time.Duration, now func() time.Time) *authLimiter {
	if now == nil {
		now = time.Now
	}
	return &authLimiter{max: max, window: window, now: now, failures: map[string][]time.Time{}}
}

func clientKey(remoteAddr string) string {
	if h, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return h
	}
	return remoteAddr
}

// blocked returns how long a client must wait, or 0.
func (l *authLimiter) blocked(client string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	fs := l.recent(client)
	if len(fs) < l.max {
		return 0
	}
	return fs[len(fs)-l.max].Add(l.window).Sub(l.now())
}

// fail records a failed authentication.
func (l *authLimiter) fail(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fs := l.recent(client)
	if len(fs) >= l.max {
		fs = fs[len(fs)-l.max+1:]
	}
	if _, ok := l.failures[client]; !ok && len(l.failures) >= maxTrackedClients {
		l.evict()
	}
	l.failures[client] = append(fs, l.now())
}

// recent drops failures that left the window and returns the rest.
func (l *authLimiter) recent(client string) []time.Time {
	fs := l.failures[client]
	cut := l.now().Add(-l.window)
	i := 0
	for i < len(fs) && !fs[i].After(cut) {
		i++
	}
	fs = fs[i:]
	if len(fs) == 0 {
		delete(l.failures, client)
	} else {
		l.failures[client] = fs
	}
	return fs
}

// evict drops every client without recent failures, then, if still full,
// the one whose last failure is oldest.
func (l *authLimiter) evict() {
	oldest, at := "", time.Time{}
	for c := range l.failures {
		fs := l.recent(c)
		if len(fs) > 0 && (oldest == "" || fs[len(fs)-1].Before(at)) {
			oldest, at = c, fs[len(fs)-1]
		}
	}
	if len(l.failures) >= maxTrackedClients {
		delete(l.failures, oldest)
	}
}

func retrySeconds(d time.Duration) string {
	return strconv.FormatInt(int64(d.Seconds())+1, 10)
}

// LimitListener returns a listener that accepts at most n connections at
// once; further clients wait in the kernel's backlog until one closes.
func LimitListener(ln net.Listener, n int) net.Listener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, n)}
}

type limitListener struct {
	net.Listener
	sem chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.sem <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// Server timeouts and limits of NewServer.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 60 * time.Second
	// WriteTimeout bounds a whole response; the slowest actions (an
	// investigation over a large store) answer within seconds.
	WriteTimeout = 5 * time.Minute
	IdleTimeout  = 2 * time.Minute
	// DefaultMaxConnections is the default cap of open connections.
	DefaultMaxConnections = 256
	// MaxHeaderBytes bounds request headers.
	MaxHeaderBytes = 64 << 10
)

// NewServer returns an http.Server for h with Cortex's timeouts: a slow or
// idle client cannot hold a connection forever. Serve it on a listener
// wrapped by LimitListener.
func NewServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: ReadHeaderTimeout, ReadTimeout: ReadTimeout,
		WriteTimeout: WriteTimeout, IdleTimeout: IdleTimeout, MaxHeaderBytes: MaxHeaderBytes}
}
