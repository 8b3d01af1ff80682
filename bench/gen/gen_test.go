package gen

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	uuidRE  = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	apiIDRE = regexp.MustCompile(`\b(?:toolu|msg|req|call)_[A-Za-z0-9]{20,}`)

	claudeSessRE = regexp.MustCompile(`^claude/projects/(-[^/]+)/([0-9a-f-]{36})\.jsonl$`)
	claudeTopRE  = regexp.MustCompile(`^claude/projects/(-[^/]+)/agent-([0-9a-f]+)\.jsonl$`)
	claudeSubRE  = regexp.MustCompile(`^claude/projects/(-[^/]+)/([0-9a-f-]{36})/subagents/agent-([0-9a-z]+)\.jsonl$`)
	codexRE      = regexp.MustCompile(`^codex/sessions/(\d{4})/(\d\d)/(\d\d)/rollout-(\d{4})-(\d\d)-(\d\d)T\d\d-\d\d-\d\d-([0-9a-f-]{36})\.jsonl$`)
	geminiRE     = regexp.MustCompile(`^gemini/tmp/([0-9a-f]{64})/chats/session-\d{4}-\d\d-\d\dT\d\d-\d\d-([0-9a-f]{8})\.json$`)
)

// realCorpus locates the real corpus or skips the test.
func realCorpus(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("CORTEX_REAL_CORPUS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "corpus", "real")
	}
	if _, err := os.Stat(dir); err != nil {
		tb.Skipf("real corpus not available at %s (set CORTEX_REAL_CORPUS): %v", dir, err)
	}
	return dir
}

// run generates into a fresh directory and returns the result and events.
func run(tb testing.TB, src string, target, seed int64) (string, Result, []fileEvent) {
	tb.Helper()
	out := filepath.Join(tb.TempDir(), "out")
	var events []fileEvent
	res, err := generate(context.Background(), Options{
		SourceDir: src, OutDir: out, TargetBytes: target, Seed: seed, Now: testNow,
	}, func(e fileEvent) { events = append(events, e) })
	if err != nil {
		tb.Fatalf("generate: %v", err)
	}
	return out, res, events
}

// tree hashes every file under dir by relative path.
func tree(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	m := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		m[filepath.ToSlash(rel)] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sameTree(a, b map[string][32]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func read(t *testing.T, dir, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGenerateRealCorpus(t *testing.T) {
	src := realCorpus(t)
	const target = 5 << 20
	out, res, events := run(t, src, target, 42)

	if res.Bytes < target || res.Files != len(events) || res.Copies != 1 {
		t.Fatalf("unexpected result %+v (%d events)", res, len(events))
	}
	for _, tool := range []string{toolClaude, toolCodex, toolGemini} {
		if res.ByTool[tool].Files == 0 {
			t.Errorf("no %s files in a %d-byte corpus: %+v", tool, target, res.ByTool)
		}
	}
	files, size, err := ScanStats(out)
	if err != nil || files != res.Files || size != res.Bytes {
		t.Errorf("ScanStats = %d, %d, %v; result %d, %d", files, size, err, res.Files, res.Bytes)
	}

	t.Run("determinism", func(t *testing.T) {
		again, _, _ := run(t, src, target, 42)
		if !sameTree(tree(t, out), tree(t, again)) {
			t.Error("two runs with the same seed differ")
		}
		other, _, _ := run(t, src, target, 43)
		if sameTree(tree(t, out), tree(t, other)) {
			t.Error("a different seed produced the same corpus")
		}
	})
	t.Run("content", func(t *testing.T) { checkContent(t, src, out, events) })
	t.Run("no source uuids", func(t *testing.T) { checkNoSourceUUIDs(t, src, out, events) })
	t.Run("layout", func(t *testing.T) { checkLayout(t, out, events) })
}

// A short window puts every session's end in it: a slice of new
// transcripts, as a store receives them (bench generate --days 1).
func TestGenerateWindow(t *testing.T) {
	src := realCorpus(t)
	ends := func(window time.Duration) (in, all int) {
		out := filepath.Join(t.TempDir(), "out")
		var events []fileEvent
		if _, err := generate(context.Background(), Options{SourceDir: src, OutDir: out, TargetBytes: 2 << 20, Seed: 5,
			Now: testNow, Window: window}, func(e fileEvent) { events = append(events, e) }); err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			var last time.Time
			for _, ts := range structuralTimes(t, e.Tool, read(t, out, e.Dst)) {
				if ts.After(last) {
					last = ts
				}
			}
			if last.IsZero() {
				continue
			}
			if last.After(testNow) {
				t.Errorf("%s ends after Now: %s", e.Dst, last)
			}
			all++
			if !last.Before(testNow.Add(-24 * time.Hour)) {
				in++
			}
		}
		return in, all
	}
	if in, all := ends(24 * time.Hour); all == 0 || in < all*9/10 {
		t.Errorf("a one-day window: %d of %d files end in the last day", in, all)
	}
	if in, all := ends(0); all == 0 || in > all/2 {
		t.Errorf("the default window: %d of %d files end in the last day", in, all)
	}
}

// TestGenerateFullCopy checks every source file once (one complete copy), so
// the joined "}{" lines and the megabyte line are always covered.
func TestGenerateFullCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	src := realCorpus(t)
	c, err := discover(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	out, res, events := run(t, src, c.bytes, 1)
	if res.Copies != 1 || res.Bytes != c.bytes {
		t.Fatalf("one copy expected, got %+v (source %d bytes)", res, c.bytes)
	}
	if joined := checkContent(t, src, out, events); joined == 0 {
		t.Error("no joined }{ line was checked")
	}
	checkLayout(t, out, events)
}

// checkContent verifies sizes, line structure, JSON validity and timestamp
// ranges of every output against its source. It returns how many joined
// multi-record lines it compared.
func checkContent(t *testing.T, src, out string, events []fileEvent) (joined int) {
	t.Helper()
	lo, hi := testNow.Add(-Window), testNow
	for _, e := range events {
		s, o := read(t, src, e.Src), read(t, out, e.Dst)
		if len(s) != len(o) {
			t.Errorf("%s: size %d -> %d", e.Dst, len(s), len(o))
			continue
		}
		sl, ol := bytes.Split(s, []byte{'\n'}), bytes.Split(o, []byte{'\n'})
		if len(sl) != len(ol) {
			t.Errorf("%s: %d lines, source %s has %d", e.Dst, len(ol), e.Src, len(sl))
			continue
		}
		for i := range sl {
			if json.Valid(sl[i]) {
				if !json.Valid(ol[i]) {
					t.Errorf("%s:%d: line is no longer valid JSON", e.Dst, i+1)
				}
				continue
			}
			ns, nerr := records(sl[i])
			no, _ := records(ol[i])
			if ns != no {
				t.Errorf("%s:%d: %d records, source had %d", e.Dst, i+1, no, ns)
			}
			if ns > 1 && nerr == nil {
				joined++
			}
		}
		if json.Valid(s) != json.Valid(o) {
			t.Errorf("%s: whole-document validity changed", e.Dst)
		}
		for _, ts := range structuralTimes(t, e.Tool, o) {
			if ts.Before(lo) || ts.After(hi) {
				t.Errorf("%s: timestamp %s outside [%s, %s]", e.Dst, ts, lo, hi)
				break
			}
		}
	}
	return joined
}

// records counts the JSON values on one line; err is nil if the line is a
// concatenation of complete values.
func records(line []byte) (int, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	n := 0
	for {
		var v json.RawMessage
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

// decodeAll decodes every JSON record of a JSONL file (joined lines too).
func decodeAll(b []byte) []map[string]any {
	var out []map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return out
		}
		out = append(out, m)
	}
}

// structuralTimes returns the record-level timestamps of a transcript.
func structuralTimes(t *testing.T, tool string, b []byte) []time.Time {
	t.Helper()
	var raw []string
	if tool == toolGemini {
		var doc struct {
			StartTime, LastUpdated string
			Messages               []struct{ Timestamp string }
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("gemini output is not JSON: %v", err)
		}
		raw = append(raw, doc.StartTime, doc.LastUpdated)
		for _, m := range doc.Messages {
			raw = append(raw, m.Timestamp)
		}
	} else {
		for _, rec := range decodeAll(b) {
			if s, ok := rec["timestamp"].(string); ok {
				raw = append(raw, s)
			}
		}
	}
	var out []time.Time
	for _, s := range raw {
		if s == "" {
			continue
		}
		ts, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("bad timestamp %q: %v", s, err)
		}
		out = append(out, ts)
	}
	return out
}

func checkNoSourceUUIDs(t *testing.T, src, out string, events []fileEvent) {
	orig := map[string]bool{}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		for _, u := range uuidRE.FindAll(b, -1) {
			orig[strings.ToLower(string(u))] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	err = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		for _, u := range append(uuidRE.FindAll(b, -1), uuidRE.FindAll([]byte(p), -1)...) {
			if orig[strings.ToLower(string(u))] {
				t.Errorf("%s still contains source uuid %s", p, u)
			}
			found++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < len(events) {
		t.Errorf("only %d uuids in %d files", found, len(events))
	}
}

func checkLayout(t *testing.T, out string, events []fileEvent) {
	byName := map[string]bool{}
	for _, e := range events {
		byName[e.Dst] = true
	}
	for _, e := range events {
		b := read(t, out, e.Dst)
		switch e.Tool {
		case toolClaude:
			checkClaude(t, e, b, byName)
		case toolCodex:
			m := codexRE.FindStringSubmatch(e.Dst)
			if m == nil || m[1] != m[4] || m[2] != m[5] || m[3] != m[6] {
				t.Errorf("bad codex path %s", e.Dst)
				continue
			}
			if id := codexSessionID(b); id != "" && id != m[7] {
				t.Errorf("%s: session_meta id %s does not match the file name", e.Dst, id)
			}
		case toolGemini:
			m := geminiRE.FindStringSubmatch(e.Dst)
			var doc struct{ SessionID, ProjectHash string }
			if m == nil || json.Unmarshal(b, &doc) != nil {
				t.Errorf("bad gemini path or content %s", e.Dst)
				continue
			}
			if !strings.HasPrefix(doc.SessionID, m[2]) || doc.ProjectHash != m[1] {
				t.Errorf("%s: name does not match sessionId %s / projectHash %s", e.Dst, doc.SessionID, doc.ProjectHash)
			}
		}
	}
}

func checkClaude(t *testing.T, e fileEvent, b []byte, byName map[string]bool) {
	t.Helper()
	sess := firstJSONString(b, `"sessionId":"`)
	agent := firstJSONString(b, `"agentId":"`)
	switch {
	case claudeSessRE.MatchString(e.Dst):
		m := claudeSessRE.FindStringSubmatch(e.Dst)
		want := "claude/projects/" + m[1] + "/" + sess + ".jsonl"
		if sess != "" && sess != m[2] && !byName[want] {
			t.Errorf("%s: named neither after its sessionId %s nor colliding with it", e.Dst, sess)
		}
	case claudeSubRE.MatchString(e.Dst):
		m := claudeSubRE.FindStringSubmatch(e.Dst)
		if sess != m[2] || !byName["claude/projects/"+m[1]+"/"+m[2]+".jsonl"] {
			t.Errorf("%s: subagent not attached to its session %s", e.Dst, sess)
		}
		if agent != "" && agent != m[3] {
			t.Errorf("%s: agentId %s does not match the file name", e.Dst, agent)
		}
	case claudeTopRE.MatchString(e.Dst):
		if m := claudeTopRE.FindStringSubmatch(e.Dst); agent != "" && agent != m[2] {
			t.Errorf("%s: agentId %s does not match the file name", e.Dst, agent)
		}
	default:
		t.Errorf("bad claude path %s", e.Dst)
	}
}

// miniCorpus copies a few real files (plus files that must be skipped) into
// a temporary source tree.
func miniCorpus(t *testing.T) (string, int64) {
	real := realCorpus(t)
	dir := t.TempDir()
	var total int64
	var copyRel func(rel string, counted bool)
	copyRel = func(rel string, counted bool) {
		b, err := os.ReadFile(filepath.Join(real, rel))
		if err != nil {
			t.Skipf("mini corpus file missing: %v", err)
		}
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if counted {
			total += int64(len(b))
		}
	}
	const claudeP = "claude/claude-code-log/-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20"
	copyRel(claudeP+".jsonl", true)
	copyRel(claudeP+"/subagents/agent-a2271d1.jsonl", true)
	copyRel("claude/claude-code-log/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl", true)
	copyRel("claude/entireio-skills/a9/139b2b27ad/1/raw_transcript", true)
	copyRel("claude/entireio-skills/a9/139b2b27ad/1/metadata.json", false)
	copyRel("claude/entireio-cli/config/.claude/settings.json", false)
	copyRel("codex/claude-code-transcripts/sample_codex_session.jsonl", true)
	copyRel("gemini/entireio-cli/96/12b31cd788/0/full.jsonl", true)
	copyRel("gemini/entireio-cli/96/12b31cd788/0/metadata.json", false)
	return dir, total
}

func TestCopiesKeepLinks(t *testing.T) {
	src, total := miniCorpus(t)
	out, res, events := run(t, src, 3*total, 9)
	if res.Copies != 3 || res.Files != 18 || res.Bytes != 3*total {
		t.Fatalf("want 3 full copies of 6 files, got %+v", res)
	}
	bySrc := map[string][]fileEvent{}
	for _, e := range events {
		bySrc[e.Src] = append(bySrc[e.Src], e)
	}
	for rel, es := range bySrc {
		s := read(t, src, rel)
		var prevSess string
		for _, e := range es {
			o := read(t, out, e.Dst)
			sess := firstSession(e.Tool, o)
			if sess == "" || sess == firstSession(e.Tool, s) || sess == prevSess {
				t.Errorf("%s copy %d: session id %q not fresh", rel, e.Copy, sess)
			}
			prevSess = sess
			for _, re := range []*regexp.Regexp{uuidRE, apiIDRE} {
				if a, b := canonical(re, s), canonical(re, o); a != b {
					t.Errorf("%s copy %d: id link structure changed (%s)", rel, e.Copy, re)
				}
			}
			if a, b := parentLinks(s), parentLinks(o); a != b {
				t.Errorf("%s copy %d: parentUuid resolution %s, source %s", rel, e.Copy, b, a)
			}
			if a, b := timeDeltas(t, e.Tool, s), timeDeltas(t, e.Tool, o); a != b {
				t.Errorf("%s copy %d: relative timing changed", rel, e.Copy)
			}
		}
	}
}

// firstSession returns the session id a transcript declares.
func firstSession(tool string, b []byte) string {
	switch tool {
	case toolCodex:
		return codexSessionID(b)
	case toolGemini:
		return firstJSONString(b, `"sessionId": "`)
	}
	return firstJSONString(b, `"sessionId":"`)
}

// canonical renames every match of re to its first-seen index, which
// captures which occurrences are equal without the values themselves.
func canonical(re *regexp.Regexp, b []byte) string {
	seen := map[string]int{}
	var sb strings.Builder
	for _, m := range re.FindAll(b, -1) {
		k := strings.ToLower(string(m))
		if _, ok := seen[k]; !ok {
			seen[k] = len(seen)
		}
		sb.WriteString(strconv.Itoa(seen[k]))
		sb.WriteByte(',')
	}
	return sb.String()
}

// parentLinks reports, per record with a parentUuid, whether it resolves to
// a uuid of the same file.
func parentLinks(b []byte) string {
	recs := decodeAll(b)
	uuids := map[any]bool{}
	for _, r := range recs {
		uuids[r["uuid"]] = true
	}
	var sb strings.Builder
	for _, r := range recs {
		if p, ok := r["parentUuid"].(string); ok {
			if uuids[p] {
				sb.WriteByte('1')
			} else {
				sb.WriteByte('0')
			}
		}
	}
	return sb.String()
}

// timeDeltas lists every record timestamp relative to the first one.
func timeDeltas(t *testing.T, tool string, b []byte) string {
	ts := structuralTimes(t, tool, b)
	var sb strings.Builder
	for _, x := range ts {
		sb.WriteString(x.Sub(ts[0]).String())
		sb.WriteByte(',')
	}
	return sb.String()
}

func TestOutDirMustBeEmpty(t *testing.T) {
	src, total := miniCorpus(t)
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "keep.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := Options{SourceDir: src, OutDir: out, TargetBytes: total, Now: testNow}
	if _, err := Generate(context.Background(), opts); err == nil {
		t.Fatal("non-empty OutDir accepted without Overwrite")
	}
	opts.Overwrite = true
	for range 2 {
		if _, err := Generate(context.Background(), opts); err != nil {
			t.Fatalf("overwrite: %v", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Generate(ctx, opts); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: got %v", err)
	}
}

func TestSkipsNonTranscripts(t *testing.T) {
	src, _ := miniCorpus(t)
	c, err := discover(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range c.units {
		for _, f := range u.files {
			if base := path.Base(f.rel); base == "metadata.json" || strings.Contains(f.rel, "/config/") {
				t.Errorf("non-transcript %s was discovered", f.rel)
			}
		}
	}
	files := 0
	for _, u := range c.units {
		files += len(u.files)
	}
	if len(c.units) != 5 || files != 6 {
		t.Errorf("want 5 units with 6 files, got %d units with %d files", len(c.units), files)
	}
}

func TestProgress(t *testing.T) {
	src, _ := miniCorpus(t)
	var calls []int64
	res, err := Generate(context.Background(), Options{
		SourceDir: src, OutDir: filepath.Join(t.TempDir(), "out"), TargetBytes: 40 << 20, Now: testNow,
		Progress: func(n int64) { calls = append(calls, n) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != int(res.Bytes/progressStep) {
		t.Errorf("%d progress calls for %d bytes", len(calls), res.Bytes)
	}
	for i, n := range calls {
		if n < int64(i+1)*progressStep {
			t.Errorf("progress call %d reported %d bytes", i, n)
		}
	}
}

func BenchmarkGenerate(b *testing.B) {
	src := realCorpus(b)
	target := int64(64 << 20)
	if mb, err := strconv.Atoi(os.Getenv("CORTEX_GEN_BENCH_MB")); err == nil && mb > 0 {
		target = int64(mb) << 20
	}
	_, res, _ := run(b, src, target, 1)
	b.SetBytes(res.Bytes)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		out := filepath.Join(b.TempDir(), "out")
		b.StartTimer()
		if _, err := Generate(context.Background(), Options{SourceDir: src, OutDir: out, TargetBytes: target, Seed: int64(i), Now: testNow}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := os.RemoveAll(out); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

func BenchmarkScan(b *testing.B) {
	src := realCorpus(b)
	rels, _, err := listSources(src)
	if err != nil {
		b.Fatal(err)
	}
	var data [][]byte
	var total int64
	for _, rel := range rels {
		d, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, d)
		total += int64(len(d))
	}
	b.SetBytes(total)
	for b.Loop() {
		for _, d := range data {
			scan(d)
		}
	}
}
