package transcript

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/valyala/fastjson"
)

// maxEntryText is the longest Entry.Text a parser can produce, read off the
// code: the largest builder is a Claude user record's (tool results bounded
// to MaxErrorHead+MaxErrorTail each, plus text, all under one builder of
// MaxErrorHead+MaxErrorTail+MaxUserText). Every other text is built under a
// smaller bound (tool result labels: a name cut to 256 bytes + a head/tail
// body of at most MaxErrorHead+MaxErrorTail+64 bytes).
const maxEntryText = MaxErrorHead + MaxErrorTail + MaxUserText

// realCorpusDir returns the real transcript corpus directory, or skips the
// test when it is not available. CORTEX_REAL_CORPUS overrides the default
// location (../../shared/corpus/real relative to this package).
func realCorpusDir(tb testing.TB) string { return testcorpus.Real(tb) }

// readCorpusFile reads a file of the real corpus by its path relative to
// the corpus root, skipping the test when the corpus is absent.
func readCorpusFile(tb testing.TB, rel string) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(realCorpusDir(tb), filepath.FromSlash(rel)))
	if err != nil {
		tb.Fatalf("read corpus file: %v", err)
	}
	return data
}

// corpusFile is one file of the real corpus.
type corpusFile struct {
	Rel    string // slash path relative to the corpus root
	Path   string
	Folder string // top-level folder: claude, codex, gemini
}

// notTranscript reports whether a corpus file is a sidecar/config file
// rather than a transcript, judged by its name and location only.
func notTranscript(rel string) bool {
	base := filepath.Base(rel)
	switch {
	case base == "metadata.json", base == "settings.json", base == "settings.local.json",
		base == "hooks.json", base == "config.toml", base == "SOURCES.md",
		strings.HasSuffix(base, ".meta.json"):
		return true
	case strings.Contains("/"+rel, "/config/."):
		return true
	}
	return false
}

// corpusFiles lists the corpus files; transcripts selects transcripts
// (true) or sidecar/config files (false).
func corpusFiles(tb testing.TB, transcripts bool) []corpusFile {
	tb.Helper()
	root := realCorpusDir(tb)
	var out []corpusFile
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if notTranscript(rel) == transcripts {
			return nil
		}
		folder, _, _ := strings.Cut(rel, "/")
		out = append(out, corpusFile{Rel: rel, Path: p, Folder: folder})
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rel < out[j].Rel })
	if len(out) == 0 {
		tb.Fatalf("no files found under %s", root)
	}
	return out
}

// folderTool maps a corpus top-level folder to the agent whose
// transcripts it holds.
var folderTool = map[string]cortex.Tool{"claude": cortex.ToolClaude, "codex": cortex.ToolCodex, "gemini": cortex.ToolGemini}

// parseJSONL parses a whole JSONL transcript the way ingest does: a
// LineReader and ParseLine with one parser per file.
func parseJSONL(tb testing.TB, p RecordParser, data []byte) []Result {
	tb.Helper()
	var out []Result
	eachLine(tb, data, func(l Line) {
		if l.TooLong {
			tb.Fatalf("line %d too long", l.No)
		}
		for _, r := range ParseLine(p, l.Data, l.No, l.Complete) {
			r.Raw = append([]byte(nil), r.Raw...) // Raw aliases the line buffer
			out = append(out, r)
		}
	})
	return out
}

// eachLine calls fn with every line of a JSONL file as ingest reads it (a
// LineReader; l.Data aliases its buffer until the next call).
func eachLine(tb testing.TB, data []byte, fn func(l Line)) {
	tb.Helper()
	lr := NewLineReader(bytes.NewReader(data), 0, 1)
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			tb.Fatal(err)
		}
		fn(l)
	}
}

// eachCorpusRecord calls fn with every JSON record of the real corpus's
// transcripts (of folder, or all when folder is ""), parsed.
func eachCorpusRecord(tb testing.TB, folder string, fn func(f corpusFile, l Line, v *fastjson.Value)) {
	tb.Helper()
	var p fastjson.Parser
	for _, f := range corpusFiles(tb, true) {
		if folder != "" && f.Folder != folder {
			continue
		}
		data, err := os.ReadFile(f.Path)
		if err != nil {
			tb.Fatal(err)
		}
		eachLine(tb, data, func(l Line) {
			if v, err := p.ParseBytes(l.Data); err == nil {
				fn(f, l, v)
			}
		})
	}
}

// parseFile sniffs data and parses it with the matching parser.
func parseFile(tb testing.TB, path string, data []byte) (Format, []Result, error) {
	tb.Helper()
	head := data
	if len(head) > 64<<10 {
		head = head[:64<<10]
	}
	f, err := Sniff(head)
	if err != nil {
		return "", nil, err
	}
	ctx := ContextFromPath(path, f)
	switch f {
	case FormatClaude:
		return f, parseJSONL(tb, NewClaudeParser(ctx), data), nil
	case FormatCodex:
		return f, parseJSONL(tb, NewCodexParser(ctx, CodexState{}), data), nil
	}
	res, err := ParseGemini(ctx, data)
	return f, res, err
}

// stored returns the results that would be stored as entries.
func stored(rs []Result) []Result {
	var out []Result
	for _, r := range rs {
		if r.Err == nil && r.Skip == "" {
			out = append(out, r)
		}
	}
	return out
}

// parseClaudeLines parses lines with one Claude parser (complete lines).
func parseClaudeLines(tb testing.TB, ctx FileContext, lines ...string) []Result {
	tb.Helper()
	p := NewClaudeParser(ctx)
	var out []Result
	for i, l := range lines {
		out = append(out, ParseLine(p, []byte(l), int64(i+1), true)...)
	}
	return out
}

// readTestdata reads a file under testdata/.
func readTestdata(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(name)))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// testdataLines returns the non-empty lines of a testdata file.
func testdataLines(tb testing.TB, name string) []string {
	tb.Helper()
	var out []string
	for _, l := range strings.Split(string(readTestdata(tb, name)), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
