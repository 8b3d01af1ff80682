package dashboard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/httpapi"
	"github.com/cortexhq/cortex/httpapi/dashboard"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/internal/teststore"
	"github.com/cortexhq/cortex/sqlite"
)

// BenchmarkPages renders every page of the dashboard through the real
// handler (no network), on the store CORTEX_BENCH_DB names (the 5M-row
// benchmark store, opened read-only) or else on the real corpus.
//
// Each page is first loaded once and its expensive reads are allowed to
// finish ("cold-ms", reported per page: what a first visitor waits for in
// total, though the page itself answers within its budget and reloads);
// the timed loop then measures the page as readers see it afterwards,
// with the cache warm. The cache's TTL is set past the run so no
// background refresh competes with the measurement.
func BenchmarkPages(b *testing.B) {
	ctx := context.Background()
	var db *sqlite.DB
	if path := os.Getenv("CORTEX_BENCH_DB"); path != "" {
		var err error
		if db, err = sqlite.Open(ctx, path, sqlite.Options{ReadOnly: true}); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
	} else {
		db, _ = teststore.Indexed(b, testcorpus.Real(b))
	}
	svc := app.New(db)
	dash, err := dashboard.New(svc, dashboard.Options{Budget: 10 * time.Minute, CacheTTL: 24 * time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(dash.Close)
	h := httpapi.NewHandler(svc, httpapi.Options{Dashboard: dash})
	serve := func(b *testing.B, path string) string {
		rec := httptest.NewRecorder()
		// A loopback host: the handler refuses others (DNS-rebinding guard).
		h.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1"+path, nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d\n%.400s", path, rec.Code, rec.Body.String())
		}
		return rec.Body.String()
	}
	first := func(b *testing.B, body, prefix string) string {
		for _, m := range regexp.MustCompile(`href="(`+regexp.QuoteMeta(prefix)+`[^"#]*)`).FindAllStringSubmatch(body, -1) {
			return strings.ReplaceAll(m[1], "&amp;", "&")
		}
		b.Fatalf("no link %s… in the page", prefix)
		return ""
	}
	pages := []struct{ name, path string }{{"overview", "/"}, {"incidents", "/incidents"}}
	incidents := serve(b, "/incidents")
	skills := serve(b, "/skills?since=all")
	pages = append(pages,
		struct{ name, path string }{"incident", first(b, incidents, "/incidents/")},
		struct{ name, path string }{"sessions", "/sessions"},
		struct{ name, path string }{"session", first(b, incidents, "/sessions/")},
		struct{ name, path string }{"search", "/search?query=error"},
		struct{ name, path string }{"skills", "/skills"},
		struct{ name, path string }{"skill", first(b, skills, "/skills/")},
		struct{ name, path string }{"mcp-servers", "/mcp-servers"},
		struct{ name, path string }{"hooks", "/hooks"},
		struct{ name, path string }{"llm", "/llm"},
	)
	session := serve(b, pages[4].path)
	pages = append(pages, struct{ name, path string }{"row", first(b, session, "/rows/")})
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			start := time.Now()
			serve(b, p.path)
			cold := time.Since(start)
			for b.Loop() {
				serve(b, p.path)
			}
			b.ReportMetric(float64(cold.Microseconds())/1000, "cold-ms")
		})
	}
}
