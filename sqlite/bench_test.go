package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
)

const benchBatchRows = 2000

// benchVocab is a word list; words are drawn with a Zipf distribution so
// that a few are very common and most are rare, as in transcripts.
var benchVocab = func() []string {
	base := strings.Fields(`the a to of and in is for that it with on this be as are not you file
		function error test build run go cargo npm git commit diff return value string config server
		request response json status update fix change check add remove path line code type import package
		module struct field method interface query database index search result output input log message
		user assistant tool call session project directory command flag option default version release
		deploy docker image container kubernetes pod service network port http https api token auth key`)
	out := append([]string(nil), base...)
	for i := 0; len(out) < 20000; i++ {
		out = append(out, fmt.Sprintf("w%x", i*2654435761%1000003))
	}
	return out
}()

// benchCorpus generates realistic rows: ~600 bytes of text, ~1.5 KB of
// incompressible raw (the caller stores compressed JSON).
type benchCorpus struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	texts []string
	raws  [][]byte
}

func newBenchCorpus(seed uint64) *benchCorpus {
	r := rand.New(rand.NewPCG(seed, 42))
	c := &benchCorpus{r: r, zipf: rand.NewZipf(r, 1.1, 4, uint64(len(benchVocab)-1))}
	for range 4096 {
		var b strings.Builder
		for b.Len() < 560+r.IntN(80) {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(benchVocab[c.zipf.Uint64()])
		}
		c.texts = append(c.texts, b.String())
		raw := make([]byte, 1400+r.IntN(200))
		for i := range raw {
			raw[i] = byte(r.Uint32())
		}
		c.raws = append(c.raws, raw)
	}
	return c
}

var benchRoles = []cortex.Role{cortex.RoleUser, cortex.RoleAssistant, cortex.RoleAssistant, cortex.RoleAssistant,
	cortex.RoleToolCall, cortex.RoleToolCall, cortex.RoleToolResult, cortex.RoleToolResult, cortex.RoleToolResult, cortex.RoleThinking}

// batch returns the n-th batch: one transcript file (one session) of
// benchBatchRows records with unique keys.
func (c *benchCorpus) batch(n int, base time.Time) cortex.ImportBatch {
	path := fmt.Sprintf("/home/u/.claude/projects/bench/%08d.jsonl", n)
	session := fmt.Sprintf("sess-%08d", n)
	recs := make([]cortex.ImportRecord, benchBatchRows)
	for i := range recs {
		k := c.r.IntN(len(c.texts))
		role := benchRoles[c.r.IntN(len(benchRoles))]
		e := cortex.Entry{
			Tool: cortex.ToolClaude, Timestamp: base.Add(time.Duration(n*benchBatchRows+i) * time.Second), Role: role,
			Kind: "assistant", Text: c.texts[k], SessionID: session, Project: "/home/u/src/bench",
			RecordKey: fmt.Sprintf("u:%08d-%05d", n, i), Severity: cortex.SevInfo, ToolVersion: "2.0.14",
			Meta: map[string]string{"uuid": fmt.Sprintf("%08d-%05d", n, i)},
		}
		if role == cortex.RoleToolCall {
			e.ToolName = "Bash"
		}
		recs[i] = cortex.ImportRecord{Entry: e, Raw: c.raws[k], ContentHash: fmt.Sprintf("%024x", n*benchBatchRows+i),
			Line: int64(i + 1), Meta: e.MetadataJSON()}
	}
	return cortex.ImportBatch{
		Source:   cortex.Source{Path: path, Kind: "claude", Tool: cortex.ToolClaude, Size: 5 << 20, Offset: 5 << 20, Line: benchBatchRows, Complete: true},
		Records:  recs,
		Hostname: "bench-host", SourceTag: "transcripts",
	}
}

func BenchmarkImportBatches(b *testing.B) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	c := newBenchCorpus(1)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	var bytes int64
	b.ResetTimer()
	for b.Loop() {
		bt := c.batch(n, base)
		n++
		bytes += int64(bt.RawBytes())
		res, err := db.ImportBatches(ctx, []cortex.ImportBatch{bt})
		if err != nil {
			b.Fatal(err)
		}
		if res[0].Inserted != benchBatchRows {
			b.Fatalf("inserted %d", res[0].Inserted)
		}
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(n*benchBatchRows)/secs, "rows/s")
	b.ReportMetric(float64(bytes)/1e6/secs, "MB/s")
}

// BenchmarkSearch searches a store of ~200k rows built once.
func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "search.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	c := newBenchCorpus(2)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const batches = 100 // 200k rows
	start := time.Now()
	for i := 0; i < batches; i += 5 {
		var bs []cortex.ImportBatch
		for j := i; j < i+5; j++ {
			bt := c.batch(j, base)
			if j%10 == 0 {
				// A rare term: in 20 rows of the whole store.
				bt.Records[7].Entry.Text += " zygomorphic"
				bt.Records[7].Entry.Role = cortex.RoleUser
				bt.Records[1500].Entry.Text += " zygomorphic"
				bt.Records[1500].Entry.Role = cortex.RoleUser
			}
			bs = append(bs, bt)
		}
		if _, err := db.ImportBatches(ctx, bs); err != nil {
			b.Fatal(err)
		}
	}
	var common int
	if err := db.r.QueryRow(`SELECT count(*) FROM logs_fts WHERE logs_fts MATCH '"error"'`).Scan(&common); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %d rows in %v; %d rows match the common term", batches*benchBatchRows, time.Since(start).Round(time.Millisecond), common)

	for _, c := range []struct {
		name  string
		p     cortex.SearchParams
		check func(res cortex.SearchResult) bool
	}{
		{"common", cortex.SearchParams{Query: "error", Limit: 50}, func(r cortex.SearchResult) bool { return r.Truncated }},
		{"common-ranked", cortex.SearchParams{Query: "error", Limit: 50, Rank: true}, func(r cortex.SearchResult) bool { return r.Truncated }},
		{"common-in-session", cortex.SearchParams{Query: "error", Limit: 50, Session: "sess-00000042"}, func(r cortex.SearchResult) bool { return r.Truncated }},
		{"rare", cortex.SearchParams{Query: "zygomorphic", Limit: 50}, func(r cortex.SearchResult) bool { return len(r.Hits) == 20 && !r.Truncated }},
		{"phrase", cortex.SearchParams{Query: `"the error"`, Limit: 50}, func(r cortex.SearchResult) bool { return len(r.Hits) > 0 }},
		{"two-words", cortex.SearchParams{Query: "docker kubernetes", Limit: 50}, func(r cortex.SearchResult) bool { return len(r.Hits) > 0 }},
	} {
		b.Run(c.name, func(b *testing.B) {
			res, err := db.Search(ctx, c.p)
			if err != nil {
				b.Fatal(err)
			}
			if !c.check(res) {
				b.Fatalf("unexpected result: %d hits, truncated %v", len(res.Hits), res.Truncated)
			}
			for b.Loop() {
				if _, err := db.Search(ctx, c.p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
