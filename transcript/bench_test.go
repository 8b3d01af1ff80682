package transcript

import (
	"bytes"
	"os"
	"testing"

	"github.com/cortexhq/cortex"
)

// benchFiles loads the real corpus transcripts of one top-level folder once.
func benchFiles(b *testing.B, folder string) ([][]byte, []FileContext, int64) {
	b.Helper()
	var datas [][]byte
	var ctxs []FileContext
	var total int64
	for _, f := range corpusFiles(b, true) {
		if f.Folder != folder {
			continue
		}
		data, err := os.ReadFile(f.Path)
		if err != nil {
			b.Fatal(err)
		}
		if len(data) == 0 {
			continue
		}
		format, err := Sniff(head(data, sniffHead))
		if err != nil {
			b.Fatalf("%s: %v", f.Rel, err)
		}
		datas = append(datas, data)
		ctxs = append(ctxs, ContextFromPath(f.Path, format))
		total += int64(len(data))
	}
	if len(datas) == 0 {
		b.Skipf("no %s files", folder)
	}
	return datas, ctxs, total
}

// benchJSONL reads and parses whole files as ingest does; it returns the
// number of stored entries so the work cannot be optimized away.
func benchJSONL(b *testing.B, data []byte, p RecordParser) int {
	lr := NewLineReader(bytes.NewReader(data), 0, 1)
	n := 0
	for {
		l, err := lr.Next()
		if err != nil {
			return n
		}
		for _, r := range ParseLine(p, l.Data, l.No, l.Complete) {
			if r.Err != nil {
				b.Fatalf("line %d: %v", l.No, r.Err)
			}
			if r.Skip == "" {
				n++
			}
		}
	}
}

func BenchmarkClaudeParse(b *testing.B) {
	datas, ctxs, total := benchFiles(b, "claude")
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	entries := 0
	for b.Loop() {
		entries = 0
		for i, data := range datas {
			entries += benchJSONL(b, data, NewClaudeParser(ctxs[i]))
		}
	}
	b.ReportMetric(float64(entries), "entries/op")
}

func BenchmarkCodexParse(b *testing.B) {
	datas, ctxs, total := benchFiles(b, "codex")
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	entries := 0
	for b.Loop() {
		entries = 0
		for i, data := range datas {
			entries += benchJSONL(b, data, NewCodexParser(ctxs[i], CodexState{}))
		}
	}
	b.ReportMetric(float64(entries), "entries/op")
}

func BenchmarkGeminiParse(b *testing.B) {
	datas, ctxs, total := benchFiles(b, "gemini")
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	entries := 0
	for b.Loop() {
		entries = 0
		for i, data := range datas {
			rs, err := ParseGemini(ctxs[i], data)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range rs {
				if r.Skip == "" && r.Err == nil {
					entries++
				}
			}
		}
	}
	b.ReportMetric(float64(entries), "entries/op")
}

// BenchmarkSniff measures format detection on 64 KiB heads.
func BenchmarkSniff(b *testing.B) {
	var heads [][]byte
	for _, folder := range []string{"claude", "codex", "gemini"} {
		datas, _, _ := benchFiles(b, folder)
		for _, d := range datas {
			heads = append(heads, head(d, sniffHead))
		}
	}
	var total int64
	for _, h := range heads {
		total += int64(len(h))
	}
	b.SetBytes(total)
	b.ResetTimer()
	for b.Loop() {
		for _, h := range heads {
			if _, err := Sniff(h); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkExtractEvents measures backfill extraction: ExtractEvents over
// every stored record of the real corpus (raw bytes as stored, entry
// fields as the logs row keeps them).
func BenchmarkExtractEvents(b *testing.B) {
	type rec struct {
		e   cortex.Entry
		raw []byte
	}
	var recs []rec
	var total int64
	for _, folder := range []string{"claude", "codex", "gemini"} {
		datas, ctxs, _ := benchFiles(b, folder)
		for i, data := range datas {
			_, rs, err := parseFile(b, ctxs[i].Path, data)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range stored(rs) {
				e := cortex.Entry{Tool: r.Entry.Tool, Kind: r.Entry.Kind, Role: r.Entry.Role}
				if id, ok := r.Entry.Meta["turn_id"]; ok {
					e.Meta = map[string]string{"turn_id": id}
				}
				recs = append(recs, rec{e, r.Raw})
				total += int64(len(r.Raw))
			}
		}
	}
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	events := 0
	for b.Loop() {
		events = 0
		for i := range recs {
			ev, err := ExtractEvents(recs[i].e.Tool, &recs[i].e, recs[i].raw)
			if err != nil {
				b.Fatal(err)
			}
			events += len(ev.Skills) + len(ev.Tools) + len(ev.Hooks)
		}
	}
	b.ReportMetric(float64(events), "events/op")
}

// BenchmarkElideBlobs: the copy of every Claude record without its blobs
// that ingest makes instead of a plain copy.
func BenchmarkElideBlobs(b *testing.B) {
	datas, _, total := benchFiles(b, "claude")
	var lines [][]byte
	for _, data := range datas {
		lines = append(lines, bytes.Split(data, []byte("\n"))...)
	}
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	elided := 0
	for b.Loop() {
		elided = 0
		for _, l := range lines {
			_, n := ElideBlobs(l)
			elided += n
		}
	}
	b.ReportMetric(float64(elided), "elided-bytes/op")
}
