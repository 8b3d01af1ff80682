package transcript

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"

	"github.com/cortexhq/cortex"
)

// storedTextRows parses the real corpus as ingest does and returns its
// stored rows whose text a store may read from the record.
func storedTextRows(tb testing.TB) (rows []Result, long int) {
	tb.Helper()
	for _, f := range corpusFiles(tb, true) {
		data, err := os.ReadFile(f.Path)
		if err != nil {
			tb.Fatal(err)
		}
		_, rs, err := parseFile(tb, f.Path, data)
		if err != nil {
			continue // not a transcript
		}
		for _, r := range stored(rs) {
			if len(r.Entry.Text) >= MinStoredText && r.Entry.Role != cortex.RoleUser {
				long++
			}
			if TextFromRecord(r.Entry.Tool, r.Raw, &r.Entry) {
				rows = append(rows, r)
			}
		}
	}
	return rows, long
}

// Nearly every long Claude and Codex text is given back by its record on
// its own (the rest, and Gemini's, are kept by the store).
func TestStoredTextGivesBackMostLongTexts(t *testing.T) {
	rows, long := storedTextRows(t)
	byTool := map[cortex.Tool]int{}
	var reused TextReader // as ingest's workers use it, record after record
	for _, r := range rows {
		byTool[r.Entry.Tool]++
		text, ok := StoredText(r.Entry.Tool, r.Raw, r.Entry.ToolName)
		if !ok || text != r.Entry.Text {
			t.Fatalf("line %d: TextFromRecord holds but StoredText gives %q", r.Line, text)
		}
		if again, ok := reused.Text(r.Entry.Tool, r.Raw, r.Entry.ToolName); !ok || again != text {
			t.Fatalf("line %d: a reused TextReader gives %q", r.Line, again)
		}
	}
	t.Logf("%d of %d long texts read from their records (%v)", len(rows), long, byTool)
	if long == 0 || len(rows) < long*3/4 || byTool[cortex.ToolClaude] == 0 || byTool[cortex.ToolCodex] == 0 || byTool[cortex.ToolGemini] != 0 {
		t.Fatalf("%d of %d long texts read from their records (%v)", len(rows), long, byTool)
	}
	if _, ok := StoredText(cortex.ToolGemini, rows[0].Raw, ""); ok {
		t.Fatal("Gemini records are not parsed one by one")
	}
	if _, ok := StoredText(cortex.ToolClaude, []byte("not json"), ""); ok {
		t.Fatal("a record that is not JSON gives a text")
	}
}

// storedTextsPin is the SHA-256 of the texts StoredText gives for the real
// corpus. Stores hold no copy of these texts: a parser change that alters
// them changes what stored rows show. If this fails, decide whether old
// rows may show the new text (then update the pin and say so in the
// changelog), or keep the old extraction for them.
const storedTextsPin = "2aa8220a41161a177f31f337b2223ab662da8e48891f688bebd274d5af02e032"

func TestStoredTextPinned(t *testing.T) {
	rows, _ := storedTextRows(t)
	h := sha256.New()
	for _, r := range rows {
		text, _ := StoredText(r.Entry.Tool, r.Raw, r.Entry.ToolName)
		h.Write([]byte(text))
		h.Write([]byte{0})
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != storedTextsPin {
		t.Fatalf("the texts read from the real corpus's records changed (%d texts, sha256 %s)", len(rows), got)
	}
}

// BenchmarkStoredText is the cost of reading one row's text from its
// (decoded) record: a parse of the record.
func BenchmarkStoredText(b *testing.B) {
	rows, _ := storedTextRows(b)
	var size int64
	for _, r := range rows {
		size += int64(len(r.Raw))
	}
	b.ReportAllocs()
	b.ResetTimer()
	var t TextReader
	for b.Loop() {
		for _, r := range rows {
			if _, ok := t.Text(r.Entry.Tool, r.Raw, r.Entry.ToolName); !ok {
				b.Fatal("no text")
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(rows)), "ns/text")
	b.ReportMetric(float64(size)/float64(len(rows)), "record-bytes/text")
}
