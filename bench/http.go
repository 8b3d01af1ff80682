package bench

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/httpapi"
	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/sqlite"
)

// Defaults of HTTPLoad.
const (
	DefaultHTTPReaders        = 50
	DefaultHTTPRequestTimeout = 60 * time.Second
	// maxErrorSamples bounds the error bodies kept verbatim in the report.
	maxErrorSamples = 5
	// maxErrorBody bounds the bytes kept of one error body.
	maxErrorBody = 512
)

// Routes of the HTTP load mix (HTTPRouteLatency.Route).
const (
	RouteStatus           = "status"
	RouteSearch           = "search"
	RouteSkillIncidents   = "skill-incidents"
	RouteSkillInvestigate = "skill-investigate"
	RouteSkillsSummary    = "skills-summary"
	RouteMCPErrors        = "mcp-events-errors"
	RouteAbuseIncidents   = "abuse-incidents"
)

// HTTPRoutes are the routes of the load mix, in mix order.
func HTTPRoutes() []string {
	return []string{RouteStatus, RouteSearch, RouteSkillIncidents, RouteSkillInvestigate, RouteSkillsSummary,
		RouteMCPErrors, RouteAbuseIncidents}
}

// mixSequence is the weighted request mix every reader cycles through,
// interleaved (status, search, skill-incidents, …, status, search, …):
// cheap listings dominate, as from a dashboard or an agent polling the
// API, with the expensive investigation and abuse scoring rarer.
func mixSequence() []string {
	weights := []struct {
		route string
		n     int
	}{
		{RouteStatus, 3}, {RouteSearch, 3}, {RouteSkillIncidents, 2}, {RouteSkillInvestigate, 1},
		{RouteSkillsSummary, 2}, {RouteMCPErrors, 2}, {RouteAbuseIncidents, 1},
	}
	var seq []string
	for more := true; more; {
		more = false
		for i := range weights {
			if weights[i].n > 0 {
				seq = append(seq, weights[i].route)
				weights[i].n--
				more = true
			}
		}
	}
	return seq
}

// HTTPLoadOptions configures HTTPLoad.
type HTTPLoadOptions struct {
	Corpus string // folder to index
	DBPath string // database to create (must not exist)
	// Readers is the number of concurrent REST clients (default 50).
	Readers int
	// DurationAfter keeps the readers going this long after the ingest
	// finished (default 0: stop with the ingest).
	DurationAfter time.Duration
	// RequestTimeout bounds one request, body included (default 60 s); a
	// request that exceeds it counts as an error.
	RequestTimeout time.Duration
	// Workers are the ingest's parallel parsers (default: one per CPU but
	// one).
	Workers int
	// Now is the service clock that anchors since=30d (default time.Now).
	Now func() time.Time
	// Progress, when set, is called about once a second while the load runs.
	Progress func(HTTPProgress)
}

// HTTPProgress is a running total reported while HTTPLoad runs.
type HTTPProgress struct {
	Ingest     ingest.Progress
	IngestDone bool
	Requests   int64
	Errors     int64
}

// HTTPRouteLatency is the latency distribution of one route (or of all).
type HTTPRouteLatency struct {
	Route    string  `json:"route"`
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	P50MS    float64 `json:"p50_ms"`
	P95MS    float64 `json:"p95_ms"`
	P99MS    float64 `json:"p99_ms"`
	MaxMS    float64 `json:"max_ms"`
}

// HTTPError is one failed request kept verbatim.
type HTTPError struct {
	Route  string  `json:"route"`
	URL    string  `json:"url"`
	Status int     `json:"status,omitempty"` // 0: transport error
	Body   string  `json:"body"`             // error body (bounded) or transport error
	AtSec  float64 `json:"at_sec"`           // seconds after the start
	MS     float64 `json:"ms"`
}

// HTTPErrorKind counts failures of one route with the same status and
// message.
type HTTPErrorKind struct {
	Route   string `json:"route"`
	Status  int    `json:"status,omitempty"`
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// HTTPLoadReport is what HTTPLoad measured.
type HTTPLoadReport struct {
	Corpus  string `json:"corpus"`
	Readers int    `json:"readers"`
	// Ingest while the readers ran.
	CorpusBytes   int64   `json:"corpus_bytes"`
	Files         int     `json:"files"`
	Records       int64   `json:"records"`
	Rows          int64   `json:"rows_inserted"`
	IngestSeconds float64 `json:"ingest_seconds"`
	RecordsPerSec float64 `json:"records_per_sec"`
	RowsPerSec    float64 `json:"rows_per_sec"`
	MBPerSec      float64 `json:"mb_per_sec"`
	// Readers: from the start of the ingest to the last response.
	Seconds        float64            `json:"seconds"`
	Requests       int64              `json:"requests"`
	RequestsPerSec float64            `json:"requests_per_sec"`
	Errors         int64              `json:"errors"`
	Overall        HTTPRouteLatency   `json:"overall"`
	Routes         []HTTPRouteLatency `json:"routes"` // slowest p95 first
	ErrorKinds     []HTTPErrorKind    `json:"error_kinds,omitempty"`
	ErrorSamples   []HTTPError        `json:"error_samples,omitempty"`
	// SkillsInvestigated counts the distinct skills the readers
	// investigated (found through the skills summary).
	SkillsInvestigated int            `json:"skills_investigated"`
	PeakRSSMB          float64        `json:"peak_rss_mb"`
	DBBytes            int64          `json:"db_bytes"`
	Summary            ingest.Summary `json:"summary"`
}

// HTTPLoad indexes a corpus into a new database while concurrent readers
// query the REST API served from the same store over a loopback listener,
// and reports the ingest throughput and the request latencies. Every
// transport error and every non-200 answer counts as an error.
func HTTPLoad(ctx context.Context, o HTTPLoadOptions) (HTTPLoadReport, error) {
	if o.Readers <= 0 {
		o.Readers = DefaultHTTPReaders
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultHTTPRequestTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	rep := HTTPLoadReport{Corpus: o.Corpus, Readers: o.Readers}
	if _, err := os.Stat(o.DBPath); err == nil {
		return rep, fmt.Errorf("database %s already exists; bench needs a fresh one", o.DBPath)
	}
	db, err := sqlite.Open(ctx, o.DBPath, sqlite.Options{Now: o.Now})
	if err != nil {
		return rep, err
	}
	defer db.Close()
	svc := app.New(db)
	svc.Now = o.Now

	token := rand.Text()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return rep, err
	}
	srv := &http.Server{Handler: httpapi.NewHandler(svc, httpapi.Options{ReadToken: token, Version: cortex.Version()}),
		ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()

	l := &loader{
		base:  "http://" + ln.Addr().String(),
		token: token,
		client: &http.Client{Timeout: o.RequestTimeout, Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        o.Readers * 2,
			MaxIdleConnsPerHost: o.Readers * 2,
			IdleConnTimeout:     90 * time.Second,
		}},
		start: time.Now(),
		kinds: map[errorKey]int64{},
	}
	defer l.client.CloseIdleConnections()

	// The readers run until stop is closed; requests in flight then finish
	// (bounded by the request timeout) so that stopping adds no errors.
	stop := make(chan struct{})
	results := make([]readerResult, o.Readers)
	var readers sync.WaitGroup
	for i := range o.Readers {
		readers.Go(func() { results[i] = l.read(ctx, i, stop) })
	}

	var (
		progMu     sync.Mutex
		prog       ingest.Progress
		ingestDone atomic.Bool
	)
	tickDone := make(chan struct{})
	var ticker sync.WaitGroup
	if o.Progress != nil {
		ticker.Go(func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-tickDone:
					return
				case <-t.C:
				}
				progMu.Lock()
				p := prog
				progMu.Unlock()
				o.Progress(HTTPProgress{Ingest: p, IngestDone: ingestDone.Load(), Requests: l.requests.Load(),
					Errors: l.errors.Load()})
			}
		})
	}

	host, _ := os.Hostname()
	ingestStart := time.Now()
	sum, ierr := ingest.Index(ctx, db, ingest.Options{Paths: []string{o.Corpus}, Hostname: host, Workers: o.Workers,
		Now: o.Now, Progress: func(p ingest.Progress) {
			progMu.Lock()
			prog = p
			progMu.Unlock()
		}})
	ingestEl := time.Since(ingestStart)
	ingestDone.Store(true)
	if ierr == nil && o.DurationAfter > 0 {
		select {
		case <-time.After(o.DurationAfter):
		case <-ctx.Done():
		}
	}
	close(stop)
	readers.Wait()
	el := time.Since(l.start)
	close(tickDone)
	ticker.Wait()
	if ierr != nil {
		return rep, ierr
	}
	if sum.Canceled || ctx.Err() != nil {
		return rep, cmp.Or(ctx.Err(), context.Canceled)
	}
	select {
	case err := <-serveErr:
		if !errors.Is(err, http.ErrServerClosed) {
			return rep, fmt.Errorf("REST server: %w", err)
		}
	default:
	}

	rep.Summary = sum
	rep.CorpusBytes = sum.BytesRead
	rep.Files = sum.FilesRead + sum.FilesResumed
	rep.Records = sum.Records
	rep.Rows = sum.Inserted
	rep.IngestSeconds = ingestEl.Seconds()
	rep.RecordsPerSec = float64(sum.Records) / ingestEl.Seconds()
	rep.RowsPerSec = float64(sum.Inserted) / ingestEl.Seconds()
	rep.MBPerSec = float64(sum.BytesRead) / 1e6 / ingestEl.Seconds()
	rep.Seconds = el.Seconds()
	l.summarize(&rep, results)
	rep.PeakRSSMB = PeakRSSMB()
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(o.DBPath + suffix); err == nil {
			rep.DBBytes += fi.Size()
		}
	}
	return rep, nil
}

// loader is the state the readers share.
type loader struct {
	base, token string
	client      *http.Client
	start       time.Time

	requests, errors atomic.Int64
	// skills are the skill names the last skills summary listed.
	skills atomic.Pointer[[]string]

	mu      sync.Mutex
	samples []HTTPError
	kinds   map[errorKey]int64
}

type errorKey struct {
	route   string
	status  int
	message string
}

// readerResult is what one reader recorded: latencies (ms) and error
// counts per route, and the skills it investigated.
type readerResult struct {
	ms     map[string][]float64
	errors map[string]int64
	skills map[string]bool
}

// read is one reader: it cycles through the weighted mix, starting at its
// own offset so the readers do not move in lockstep.
func (l *loader) read(ctx context.Context, id int, stop <-chan struct{}) readerResult {
	res := readerResult{ms: map[string][]float64{}, errors: map[string]int64{}, skills: map[string]bool{}}
	seq := mixSequence()
	for n := id; ; n++ {
		select {
		case <-stop:
			return res
		case <-ctx.Done():
			return res
		default:
		}
		route := seq[n%len(seq)]
		u := l.url(route, n/len(seq)+id, &res)
		d, err := l.get(ctx, route, u, route == RouteSkillsSummary)
		if err != nil && ctx.Err() != nil {
			return res // interrupted: not a measurement
		}
		res.ms[route] = append(res.ms[route], d)
		l.requests.Add(1)
		if err != nil {
			res.errors[route]++
			l.errors.Add(1)
		}
	}
}

// url builds the request of a route; turn varies the search word and the
// skill investigated.
func (l *loader) url(route string, turn int, res *readerResult) string {
	q := url.Values{}
	path := ""
	switch route {
	case RouteStatus:
		path = "/api/status"
	case RouteSearch:
		// Common words of agent transcripts, in turn.
		words := []string{"error", "test", "function", "build", "file"}
		path = "/api/search"
		q.Set("query", words[turn%len(words)])
	case RouteSkillIncidents:
		path = "/api/ai/skill-incidents"
		q.Set("since", "30d")
	case RouteSkillInvestigate:
		path = "/api/ai/skill-investigate"
		if p := l.skills.Load(); p != nil && len(*p) > 0 {
			s := (*p)[turn%len(*p)]
			q.Set("skill", s)
			res.skills[s] = true
		}
	case RouteSkillsSummary:
		path = "/api/ai/skills"
		q.Set("summary", "true")
	case RouteMCPErrors:
		path = "/api/ai/mcp-events"
		q.Set("errors", "true")
	case RouteAbuseIncidents:
		path = "/api/ai/incidents"
	}
	if len(q) == 0 {
		return l.base + path
	}
	return l.base + path + "?" + q.Encode()
}

// maxSkillsPicked bounds the skills investigated to the most used ones.
const maxSkillsPicked = 10

// get performs one request and returns its latency in ms (to the last
// byte of the body). With skills set it decodes a skills summary and
// publishes the skill names for skill-investigate.
func (l *loader) get(ctx context.Context, route, u string, skills bool) (float64, error) {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+l.token)
	resp, err := l.client.Do(req)
	if err != nil {
		ms := msSince(start)
		if ctx.Err() == nil {
			l.fail(route, u, 0, err.Error(), start, ms)
		}
		return ms, err
	}
	body, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	ms := msSince(start)
	switch {
	case rerr != nil:
		if ctx.Err() == nil {
			l.fail(route, u, 0, "reading the body: "+rerr.Error(), start, ms)
		}
		return ms, rerr
	case resp.StatusCode != http.StatusOK:
		if ctx.Err() == nil {
			l.fail(route, u, resp.StatusCode, string(body), start, ms)
		}
		return ms, fmt.Errorf("%s: status %d", route, resp.StatusCode)
	}
	if skills {
		var list cortex.EventList[cortex.SkillSummary]
		if err := json.Unmarshal(body, &list); err != nil {
			l.fail(route, u, resp.StatusCode, "decoding the skills summary: "+err.Error(), start, ms)
			return ms, err
		}
		names := make([]string, 0, min(len(list.Events), maxSkillsPicked))
		for _, s := range list.Events {
			if s.SkillName != "" && len(names) < maxSkillsPicked {
				names = append(names, s.SkillName)
			}
		}
		if len(names) > 0 {
			l.skills.Store(&names)
		}
	}
	return ms, nil
}

// fail records a failed request.
func (l *loader) fail(route, u string, status int, body string, start time.Time, ms float64) {
	msg := strings.TrimSpace(body)
	if status != 0 {
		var eb httpapi.ErrorBody
		if json.Unmarshal([]byte(body), &eb) == nil && eb.Error.Message != "" {
			msg = string(eb.Error.Code) + ": " + eb.Error.Message
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kinds[errorKey{route, status, firstLine(msg, 160)}]++
	if len(l.samples) < maxErrorSamples {
		l.samples = append(l.samples, HTTPError{Route: route, URL: strings.TrimPrefix(u, l.base), Status: status,
			Body: firstLine(strings.TrimSpace(body), maxErrorBody), AtSec: start.Sub(l.start).Seconds(), MS: ms})
	}
}

// summarize merges the readers' results into the report.
func (l *loader) summarize(rep *HTTPLoadReport, results []readerResult) {
	all := []float64{}
	skills := map[string]bool{}
	for _, route := range HTTPRoutes() {
		var d []float64
		var errs int64
		for _, r := range results {
			d = append(d, r.ms[route]...)
			errs += r.errors[route]
		}
		all = append(all, d...)
		rep.Routes = append(rep.Routes, latency(route, d, errs))
		rep.Errors += errs
	}
	for _, r := range results {
		for s := range r.skills {
			skills[s] = true
		}
	}
	rep.SkillsInvestigated = len(skills)
	slices.SortStableFunc(rep.Routes, func(a, b HTTPRouteLatency) int { return cmp.Compare(b.P95MS, a.P95MS) })
	rep.Overall = latency("all", all, rep.Errors)
	rep.Requests = rep.Overall.Requests
	if rep.Seconds > 0 {
		rep.RequestsPerSec = float64(rep.Requests) / rep.Seconds
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	rep.ErrorSamples = slices.Clone(l.samples)
	for k, n := range l.kinds {
		rep.ErrorKinds = append(rep.ErrorKinds, HTTPErrorKind{Route: k.route, Status: k.status, Message: k.message, Count: n})
	}
	slices.SortFunc(rep.ErrorKinds, func(a, b HTTPErrorKind) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Route, b.Route), strings.Compare(a.Message, b.Message))
	})
}

// latency sorts d and summarizes it.
func latency(route string, d []float64, errs int64) HTTPRouteLatency {
	slices.Sort(d)
	out := HTTPRouteLatency{Route: route, Requests: int64(len(d)), Errors: errs,
		P50MS: percentile(d, 50), P95MS: percentile(d, 95), P99MS: percentile(d, 99)}
	if len(d) > 0 {
		out.MaxMS = d[len(d)-1]
	}
	return out
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

// firstLine returns s on one line, bounded to n bytes.
func firstLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}
