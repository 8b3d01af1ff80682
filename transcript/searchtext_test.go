package transcript

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fastjson"
)

// In every Claude tool result of the real corpus, the full-text index
// leaves out the structured copy's file snapshots and copies and keeps its other strings: a command's output, a
// patch's lines.
func TestSearchTextLeavesOutFileSnapshots(t *testing.T) {
	var snapshots, kept int
	eachCorpusRecord(t, "claude", func(f corpusFile, l Line, v *fastjson.Value) {
		if v.Type() != fastjson.TypeObject {
			return
		}
		tur := v.Get("toolUseResult")
		if tur == nil || tur.Type() != fastjson.TypeObject {
			return
		}
		text := SearchText(nil, l.Data)
		lines := map[string]bool{}
		for _, s := range bytes.Split(text, []byte("\n")) {
			lines[string(s)] = true
		}
		var outputs [][]byte
		for _, k := range []string{"stdout", "stderr"} {
			if o := tur.Get(k); o != nil {
				outputs = append(outputs, bytes.TrimSpace(SearchText(nil, o.MarshalTo(nil))))
			}
		}
		// The copied fields add nothing: the record without them is
		// indexed the same.
		if len(tur.GetStringBytes("originalFile")) > 0 {
			snapshots++
		}
		base := SearchText(nil, v.MarshalTo(nil)) // (marshalled the same way)
		for _, k := range []string{"originalFile", "originalFileContents", "file", "oldString", "newString", "filenames", "oldTodos", "newTodos"} {
			tur.Del(k)
		}
		if !bytes.Equal(SearchText(nil, v.MarshalTo(nil)), base) {
			t.Fatalf("%s:%d: a file snapshot or copy is indexed", f.Rel, l.No)
		}
		for _, o := range outputs {
			for _, ol := range bytes.Split(o, []byte("\n")) {
				if !bytes.Contains(text, bytes.TrimSpace(ol)) {
					t.Fatalf("%s:%d: a command's output is not indexed: %q", f.Rel, l.No, ol)
				}
			}
		}
		for _, h := range tur.GetArray("structuredPatch") {
			for _, pl := range h.GetArray("lines") {
				if s := pl.GetStringBytes(); len(s) > 0 && !lines[string(s)] && !bytes.Contains(text, bytes.TrimSpace(s)) {
					t.Fatalf("%s:%d: a patch line %q is not indexed", f.Rel, l.No, s)
				}
				kept++
			}
		}
	})
	t.Logf("%d file snapshots left out, %d patch lines kept", snapshots, kept)
	if snapshots == 0 || kept == 0 {
		t.Fatalf("%d snapshots, %d patch lines: the corpus should have both", snapshots, kept)
	}
}

// A long value the record's text already holds is indexed once; short
// values and values said only once are all kept.
func TestSearchTextSaysARepeatOnce(t *testing.T) {
	out := strings.Repeat("ok  \tgithub.com/acme/widget/store\t0.412s\n", 3)
	outJSON, _ := json.Marshal(out)
	tests := []struct {
		name, record string
		want         map[string]int // substring → times in the text
	}{
		{"claude command: result text and the structured copy's stdout",
			`{"type":"user","message":{"content":[{"type":"tool_result","content":` + string(outJSON) + `}]},"toolUseResult":{"stdout":` + string(outJSON) + `,"stderr":""}}`,
			map[string]int{"acme/widget/store\t0.412s": 3}},
		{"codex command end: stdout, aggregated_output and formatted_output",
			`{"type":"event_msg","payload":{"type":"exec_command_end","stdout":` + string(outJSON) + `,"aggregated_output":` + string(outJSON) + `,"formatted_output":` + string(outJSON) + `}}`,
			map[string]int{"acme/widget/store\t0.412s": 3}},
		{"a repeat inside a longer value is left out",
			`{"a":"before ` + strings.TrimSuffix(out, "\n") + ` after","b":` + string(outJSON) + `}`,
			map[string]int{"acme/widget/store\t0.412s": 3, "before": 1, "after": 1}},
		{"short values are kept however often said",
			`{"a":"go test ./...","b":"go test ./...","c":["go test ./...","go test ./..."]}`,
			map[string]int{"go test ./...": 4}},
		{"different long values are all kept",
			`{"a":"` + strings.Repeat("first value ", 8) + `","b":"` + strings.Repeat("second value ", 8) + `"}`,
			map[string]int{"first value": 8, "second value": 8}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := string(SearchText(nil, []byte(tc.record)))
			for s, n := range tc.want {
				if got := strings.Count(text, s); got != n {
					t.Errorf("%q is in the text %d times, want %d:\n%s", s, got, n, text)
				}
			}
		})
	}
}

// Leaving repeats out loses nothing: on every record of the real corpus,
// every line of the text with repeats kept is in the text indexed.
func TestSearchTextRepeatsLoseNothing(t *testing.T) {
	var full, kept int
	eachCorpusRecord(t, "", func(f corpusFile, l Line, v *fastjson.Value) {
		all := textWalker{budget: math.MinInt / 2} // never finds room to look for a repeat
		all.value(v, 0)
		text := SearchText(nil, l.Data)
		full += len(all.dst)
		kept += len(text)
		for _, line := range bytes.Split(all.dst, []byte("\n")) {
			if line = bytes.TrimSpace(line); len(line) > 0 && !bytes.Contains(text, line) {
				t.Fatalf("%s:%d: %q is not indexed", f.Rel, l.No, line)
			}
		}
	})
	t.Logf("indexed text %d → %d bytes (%.1f%% repeats left out)", full, kept, 100*float64(full-kept)/float64(full))
	if kept >= full {
		t.Fatalf("no repeat left out of the real corpus's %d bytes of text", full)
	}
}

// A record of many long values that repeat a long text stays linear: the
// search for repeats has a budget.
func BenchmarkSearchTextRepeats(b *testing.B) {
	val := strings.Repeat("x", 100)
	var rec strings.Builder
	rec.WriteString(`{"big":"` + strings.Repeat("some long text of a tool's output ", 30000) + `","many":[`)
	for i := range 20000 {
		if i > 0 {
			rec.WriteByte(',')
		}
		rec.WriteString(`"` + val + strconv.Itoa(i) + `"`)
	}
	rec.WriteString(`]}`)
	raw := []byte(rec.String())
	b.SetBytes(int64(len(raw)))
	var dst []byte
	for b.Loop() {
		dst = SearchText(dst[:0], raw)
	}
}

// BenchmarkRecordSearchText reads the search text of every Claude record
// of the real corpus, as the search indexer's workers do: "each" with a
// parser and a buffer per record (RecordSearchText), "reader" with one
// SearchTextReader for all.
func BenchmarkRecordSearchText(b *testing.B) {
	datas, _, total := benchFiles(b, "claude")
	var recs [][]byte
	for _, d := range datas {
		for _, l := range bytes.Split(d, []byte("\n")) {
			if len(l) > 0 {
				recs = append(recs, l)
			}
		}
	}
	b.Run("each", func(b *testing.B) {
		b.SetBytes(total)
		b.ReportAllocs()
		for b.Loop() {
			for _, r := range recs {
				RecordSearchText(true, r, "")
			}
		}
	})
	b.Run("reader", func(b *testing.B) {
		b.SetBytes(total)
		b.ReportAllocs()
		var tr SearchTextReader
		for b.Loop() {
			for _, r := range recs {
				tr.RecordText(true, r, "")
			}
		}
	})
}

// TestSearchTextReaderMatchesSearchText: one SearchTextReader reading
// every real record in turn (its parser and buffer reused) gives each the
// text SearchText gives it alone, and a text it returned stays as it was.
func TestSearchTextReaderMatchesSearchText(t *testing.T) {
	var tr SearchTextReader
	var prev, prevWant []byte
	n := 0
	eachCorpusRecord(t, "", func(f corpusFile, l Line, v *fastjson.Value) {
		got := tr.RecordText(true, l.Data, "not said")
		want := SearchText(nil, l.Data)
		if !bytes.Equal(got, want) {
			t.Fatalf("%s:%d: reader text differs from SearchText", f.Rel, l.No)
		}
		if !bytes.Equal(prev, prevWant) {
			t.Fatalf("%s:%d: reading this record changed the previous record's text", f.Rel, l.No)
		}
		prev, prevWant = got, want
		n++
	})
	if n == 0 {
		t.Fatal("no records read")
	}
	for _, tc := range []struct {
		name, raw, message, want string
	}{
		{"not JSON keeps message and record", `{"type":"user",`, "hello", "hello\n{\"type\":\"user\","},
		{"no record", ``, "hello", "hello\n"},
	} {
		if got := string(tr.RecordText(true, []byte(tc.raw), tc.message)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := string(tr.RecordText(false, []byte(`{"a":"b"}`), "a log line")); got != "a log line" {
		t.Errorf("log line: %q", got)
	}
}
