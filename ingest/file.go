package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/claim"
	"github.com/cortexhq/cortex/transcript"
)

const (
	// KindUnsupported marks files that are not transcripts.
	KindUnsupported = "unsupported"
	// KindEmpty marks empty files.
	KindEmpty = "empty"

	prefixBytes = 64 << 10
	anchorBytes = 4 << 10
	// maxDocumentBytes bounds a Gemini chat file, read whole.
	maxDocumentBytes = 512 << 20
	previewBytes     = 240
)

// reader is a worker's per-goroutine state: reused buffers and parsers.
type reader struct {
	store    Store
	opts     *Options
	inFlight chan error
	// projects caches Claude project folders resolved against the file
	// system (folder name → directory, "" when none exists).
	projects sync.Map
	// Buffers reused from file to file (a worker reads one at a time):
	// nothing of a file's run refers to them once it is done.
	lines        *transcript.LineReader
	head, prefix []byte
	tail         []byte
	texts        transcript.TextReader
}

// lineReader returns the worker's line reader, reset to read f.
func (r *reader) lineReader(f io.Reader, offset, firstLine int64) *transcript.LineReader {
	if r.lines == nil {
		r.lines = transcript.NewLineReader(f, offset, firstLine)
	} else {
		r.lines.Reset(f, offset, firstLine)
	}
	return r.lines
}

// claudeProject is the directory a Claude project folder was named after,
// when it exists on this machine (see transcript.ResolveClaudeProject).
func (r *reader) claudeProject(name string) string {
	if v, ok := r.projects.Load(name); ok {
		return v.(string)
	}
	dir := transcript.ResolveClaudeProject(name, func(p string) bool {
		fi, err := os.Stat(filepath.FromSlash(p))
		return err == nil && fi.IsDir()
	})
	r.projects.Store(name, dir)
	return dir
}

func newReader(store Store, opts *Options) *reader {
	return &reader{store: store, opts: opts}
}

// fileRun is the state of reading one file.
type fileRun struct {
	r       *reader
	j       job
	out     chan<- batchMsg
	src     cortex.Source
	format  transcript.Format
	stats   fileStats
	batch   cortex.ImportBatch
	bytes   int64        // file bytes not yet reported in a batch
	raw     int          // raw bytes in the current batch
	pending []chan error // commit outcomes of batches in flight, oldest first
	// occurrences numbers identical records without an id.
	occ      map[string]int64
	resuming bool
	codex    *transcript.CodexParser
	claude   *transcript.ClaudeParser
	prefix   []byte // the first prefixBytes of the file
	prefixOn bool   // collecting prefix (the read started inside it)
	// untimed indexes records of the current batch that precede every
	// timestamp seen so far; they take the next known time.
	untimed []int
	mtime   time.Time
	tail    []byte // the last anchorBytes before the offset
	failed  error
}

// file reads one file and sends its batches to the writer.
func (r *reader) file(ctx context.Context, j job, out chan<- batchMsg) {
	fr := &fileRun{r: r, j: j, out: out, occ: map[string]int64{}, tail: r.tail[:0]}
	fr.stats.skipped = map[string]int64{}
	defer func() {
		if cap(fr.tail) <= 4*anchorBytes {
			r.tail = fr.tail[:0]
		}
	}()
	fr.src = cortex.Source{ID: j.prev.ID, Path: j.c.path}
	if j.has && j.prev.Path != j.c.path {
		fr.src.MovedFrom = j.prev.Path
	}
	if err := fr.run(ctx); err != nil && fr.failed == nil {
		fr.failed = err
	}
	fr.finish(ctx)
}

func (fr *fileRun) run(ctx context.Context) error {
	f, err := os.Open(fr.j.c.path)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer f.Close()
	size, mtime, err := statNS(f)
	if err != nil {
		return err
	}
	fr.src.Size, fr.src.ModTimeNS = size, mtime
	fr.mtime = time.Unix(0, mtime).UTC()
	if size == 0 {
		fr.stats.outcome = "empty"
		fr.src.Kind = string(fr.j.c.format)
		if fr.src.Kind == "" {
			fr.src.Kind = KindEmpty
		}
		fr.src.Tool = toolOf(fr.j.c.format)
		fr.src.Complete = true
		fr.batch.Reset = true
		return nil
	}
	if cap(fr.r.head) < prefixBytes {
		fr.r.head = make([]byte, prefixBytes)
	}
	head := fr.r.head[:min(size, prefixBytes)]
	if _, err := io.ReadFull(f, head); err != nil {
		return fmt.Errorf("read: %w", err)
	}
	fr.src.HeadHash = headHash(head)
	format := fr.j.c.format
	if fr.j.has && fr.j.prev.Kind != KindUnsupported && fr.j.prev.Kind != KindEmpty && fr.j.prev.Kind != "" {
		format = transcript.Format(fr.j.prev.Kind)
	}
	if format == "" {
		var first []byte
		format, first, err = sniffFile(f, head, size)
		if err != nil {
			fr.stats.outcome = "unsupported"
			fr.src.Kind = KindUnsupported
			fr.src.Complete = true
			fr.src.LastError = describeUnsupported(first)
			fr.src.ParserState = []byte(sniffState)
			if fr.j.c.explicit {
				fr.stats.err = fr.src.LastError
			}
			return nil
		}
	}
	fr.format = format
	fr.src.Kind = string(format)
	fr.src.Tool = format.Tool()
	fr.batch.Hostname = fr.r.opts.Hostname
	fr.batch.SourceTag = "transcript://" + string(format)
	ctxFile := transcript.ContextFromPath(fr.j.c.path, format)
	ctxFile.ModTime = time.Unix(0, mtime)
	if name, ok := transcript.ClaudeProjectFolder(fr.j.c.path); ok && format == transcript.FormatClaude {
		// The folder name is a lossy encoding of the project path: prefer
		// the directory it names when that exists here.
		if dir := fr.r.claudeProject(name); dir != "" {
			ctxFile.Project = dir
		}
	}
	if ctxFile.SessionID == "" || format == transcript.FormatClaude && !looksLikeID(ctxFile.SessionID) {
		if s := transcript.SessionFromHead(head, format); s != "" && ctxFile.AgentID == "" {
			ctxFile.SessionID = s
		}
	}
	if ctxFile.AgentID != "" {
		ctxFile.AgentType = readAgentType(fr.j.c.path)
	}
	if format == transcript.FormatGeminiJSON || format == transcript.FormatGeminiJSONL {
		return fr.readDocument(ctx, f, size, ctxFile)
	}
	return fr.readLines(ctx, f, size, head, ctxFile)
}

// decideStart chooses where to resume: the stored offset when the bytes
// before it are unchanged, else the start of the file.
func (fr *fileRun) decideStart(f *os.File, size int64, head []byte) (offset, line int64, state []byte, err error) {
	p := fr.j.prev
	if !fr.j.has || fr.r.opts.Force || p.Offset == 0 {
		fr.stats.outcome = "read"
		fr.batch.Reset = true
		return 0, 0, nil, nil
	}
	rewritten := false
	switch {
	case size < p.Offset:
		rewritten = true
	case hashOf(head[:min(int64(len(head)), p.Offset)]) != p.PrefixHash:
		rewritten = true
	default:
		a, err := readAnchor(f, p.Offset)
		if err != nil {
			return 0, 0, nil, err
		}
		rewritten = hashOf(a) != p.AnchorHash
	}
	if rewritten {
		fr.stats.outcome = "rewritten"
		fr.batch.Reset = true
		fr.batch.Rewritten = true
		return 0, 0, nil, nil
	}
	fr.stats.outcome = "resumed"
	fr.resuming = true
	return p.Offset, p.Line, p.ParserState, nil
}

func readAnchor(f *os.File, off int64) ([]byte, error) {
	start := max(0, off-anchorBytes)
	b := make([]byte, off-start)
	if _, err := f.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read checkpoint anchor: %w", err)
	}
	return b, nil
}

func (fr *fileRun) readLines(ctx context.Context, f *os.File, size int64, head []byte, ctxFile transcript.FileContext) error {
	offset, line, state, err := fr.decideStart(f, size, head)
	if err != nil {
		return err
	}
	if offset > 0 {
		a, err := readAnchor(f, offset)
		if err != nil {
			return err
		}
		fr.tail = append(fr.tail[:0], a...)
		fr.src.PrefixHash = fr.j.prev.PrefixHash
		if offset < prefixBytes {
			fr.prefix = append([]byte(nil), head[:offset]...)
			fr.prefixOn = true
		}
	}
	var parser transcript.RecordParser
	var codexState transcript.CodexState
	var claudeState transcript.ClaudeState
	if len(state) > 0 {
		var err error
		if fr.format == transcript.FormatCodex {
			err = json.Unmarshal(state, &codexState)
		} else {
			err = json.Unmarshal(state, &claudeState)
		}
		if err != nil {
			// Unreadable state: re-read from the start (the ledger dedupes).
			offset, line, fr.resuming, fr.stats.outcome = 0, 0, false, "read"
			codexState, claudeState = transcript.CodexState{}, transcript.ClaudeState{}
			fr.batch.Reset = true
			fr.tail = fr.tail[:0]
		}
	}
	if fr.format == transcript.FormatCodex {
		fr.codex = transcript.NewCodexParser(ctxFile, codexState)
		parser = fr.codex
	} else {
		fr.claude = transcript.NewClaudeParserAt(ctxFile, claudeState)
		parser = fr.claude
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return fmt.Errorf("seek: %w", err)
	}
	fr.src.Offset, fr.src.Line = offset, line
	if offset == 0 {
		if cap(fr.r.prefix) < prefixBytes {
			fr.r.prefix = make([]byte, 0, prefixBytes)
		}
		fr.prefix = fr.r.prefix[:0]
		fr.prefixOn = true
		fr.tail = fr.tail[:0]
	}
	lr := fr.r.lineReader(f, offset, line+1)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if fr.failed != nil {
			return fr.failed
		}
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if l.TooLong {
			fr.parseError(l.No, l.Start, fmt.Sprintf("record exceeds %d MiB and was skipped", transcript.MaxRecordBytes>>20), nil)
			fr.advance(l)
			continue
		}
		// Secrets are redacted before parsing, so the stored raw record, the
		// entry and its events all come from the same redacted bytes (backfill
		// re-extracts events from the stored raw and must find the same).
		line, _ := fr.r.opts.Redactor.JSON(l.Data)
		results := transcript.ParseLine(parser, line, l.No, l.Complete)
		if len(results) == 1 && errors.Is(results[0].Err, transcript.ErrTruncated) {
			// An incomplete trailing record: leave it for the next read.
			fr.src.PendingBytes = l.End - l.Start
			fr.stats.pending = true
			break
		}
		for i := range results {
			if err := fr.result(ctx, &results[i], l.Start); err != nil {
				return err
			}
		}
		fr.advance(l)
		if fr.full() {
			if err := fr.flush(ctx, false); err != nil {
				return err
			}
		}
	}
	fr.src.Complete = true
	return nil
}

// advance moves the checkpoint past a consumed line and keeps the hashes of
// the bytes before it current.
func (fr *fileRun) advance(l transcript.Line) {
	fr.bytes += l.End - l.Start
	fr.src.Offset, fr.src.Line = l.End, l.No
	raw := l.Raw
	if raw == nil {
		// A skipped over-long line: its bytes are unknown here, so the
		// hashes will not match and the next read conservatively starts
		// over (the ledger keeps that duplicate-free).
		raw = []byte{0}
	}
	if fr.prefixOn && len(fr.prefix) < prefixBytes {
		fr.prefix = append(fr.prefix, raw[:min(len(raw), prefixBytes-len(fr.prefix))]...)
	}
	if len(raw) >= anchorBytes {
		// Only the last anchorBytes count: a long line replaces the tail
		// (appending it whole grew the buffer to the line's size).
		fr.tail = append(fr.tail[:0], raw[len(raw)-anchorBytes:]...)
		return
	}
	fr.tail = append(fr.tail, raw...)
	if len(fr.tail) > 2*anchorBytes {
		fr.tail = append(fr.tail[:0], fr.tail[len(fr.tail)-anchorBytes:]...)
	}
}

func (fr *fileRun) readDocument(ctx context.Context, f *os.File, size int64, ctxFile transcript.FileContext) error {
	if size > maxDocumentBytes {
		return fmt.Errorf("chat file is larger than %d MiB", maxDocumentBytes>>20)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("seek: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxDocumentBytes+1))
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	// Chat files are rewritten in place: always read whole; unchanged
	// messages dedupe, changed ones are updated.
	fr.stats.outcome = "read"
	fr.batch.Reset = true
	redacted, _ := fr.r.opts.Redactor.JSON(data)
	results, err := transcript.ParseGemini(ctxFile, redacted)
	if err != nil {
		msg := string(fr.r.opts.Redactor.Opaque([]byte(err.Error())))
		fr.src.LastError = msg
		fr.stats.err = msg
		fr.stats.outcome = "failed"
	}
	for i := range results {
		if err := fr.result(ctx, &results[i], 0); err != nil {
			return err
		}
		if fr.full() {
			fr.src.Offset = 0
			if err := fr.flush(ctx, false); err != nil {
				return err
			}
		}
	}
	fr.bytes = int64(len(data))
	fr.src.Offset = int64(len(data))
	fr.src.PrefixHash = hashOf(data[:min(len(data), prefixBytes)])
	fr.src.AnchorHash = hashOf(data[max(0, len(data)-anchorBytes):])
	fr.src.Complete = true
	return nil
}

// result turns one parse result into a record, a skip, or a parse error,
// and keeps the token usage and session summary it carries (skipped
// records carry them too).
func (fr *fileRun) result(ctx context.Context, res *transcript.Result, lineStart int64) error {
	if res.Err == nil {
		if u := res.Usage; u != nil && u.SessionID != "" {
			if u.Timestamp.IsZero() {
				u.Timestamp = fr.mtime
			}
			fr.batch.Usage = append(fr.batch.Usage, *u)
		}
		if sm := res.Summary; sm != nil {
			text, _ := fr.r.opts.Redactor.String(sm.Text)
			fr.batch.Summaries = append(fr.batch.Summaries, cortex.SessionSummary{LeafUUID: sm.LeafUUID, Text: text})
		}
	}
	switch {
	case res.Err != nil:
		fr.parseError(res.Line, lineStart, res.Err.Error(), res.Raw)
		return nil
	case res.Skip != "":
		fr.stats.skipped[res.Skip]++
		if res.Skip == transcript.SkipUnknownType {
			fr.stats.unknown++
			fr.unknown(res.Version, res.Type)
		}
		return nil
	}
	fr.stats.records++
	if res.Warn != "" {
		fr.stats.warnings++
		fr.batch.ParseErrors = append(fr.batch.ParseErrors, cortex.ParseError{
			Line: res.Line, Offset: lineStart, Error: res.Warn, Preview: fr.preview(res.Raw)})
	}
	e := res.Entry
	if strings.HasPrefix(e.RecordKey, "h:") {
		n, err := fr.occurrence(ctx, e.RecordKey)
		if err != nil {
			return err
		}
		e.RecordKey += "#" + strconv.FormatInt(n, 10)
	}
	red := fr.r.opts.Redactor
	raw := res.Raw // already redacted (see readLines)
	// Extracted text is unescaped JSON: redact it again (a secret written
	// with JSON escapes only shows in the decoded form).
	e.Text, _ = red.String(e.Text)
	var events cortex.Events
	if !fr.r.opts.NoEvents {
		events = res.Events
		RedactEvents(red, &events)
		ReadVoices(&events)
	}
	// The store compresses the batch's records together (in blocks): a
	// copy, as the line buffer is reused — without the opaque blobs of a
	// record its agent gave an id (see transcript.ElideBlobs; a record keyed
	// by its content keeps them, as its key is their hash). The content
	// hash is the stored form's, so a rescan that redacts the stored record
	// again gives the hash a re-read of the file gives.
	var enc []byte
	if transcript.KeyedByID(e.RecordKey) {
		var n int
		enc, n = transcript.ElideBlobs(raw)
		fr.stats.blobBytes += int64(n)
	} else {
		enc = bytes.Clone(raw)
	}
	sum := sha256.Sum256(enc)
	fr.raw += len(enc)
	if e.Timestamp.IsZero() {
		fr.untimed = append(fr.untimed, len(fr.batch.Records))
	} else if !e.TimestampEstimated {
		fr.settle(e.Timestamp)
	}
	rec := cortex.ImportRecord{Entry: e, Raw: enc, ContentHash: hex.EncodeToString(sum[:12]), Line: res.Line,
		Meta: e.MetadataJSON(), Events: events}
	if claim.Applies(string(e.Role)) {
		rec.Claims, rec.ClaimsRead = claim.Of(string(e.Role), e.Text), true
	}
	// The store may leave a long text out and read it from the record;
	// assistant prose that claims something about tools stays (the MCP
	// lens reads it in bulk, and it is ~1% of the assistant rows).
	rec.TextFromRecord = !fr.r.opts.keepTexts && rec.Claims&claim.Tool == 0 && fr.r.texts.FromRecord(e.Tool, raw, &rec.Entry)
	fr.batch.Records = append(fr.batch.Records, rec)
	return nil
}

// occurrence numbers records without an id that share the same content, so
// identical lines stay distinct records while a re-read maps each to the
// same key again.
func (fr *fileRun) occurrence(ctx context.Context, key string) (int64, error) {
	n, ok := fr.occ[key]
	if !ok && fr.resuming && fr.j.prev.ID != 0 {
		var err error
		n, err = fr.r.store.CountKeys(ctx, fr.j.prev.ID, key+"#")
		if err != nil {
			return 0, err
		}
	}
	n++
	fr.occ[key] = n
	return n, nil
}

func (fr *fileRun) unknown(version, typ string) {
	for i := range fr.batch.Unknown {
		u := &fr.batch.Unknown[i]
		if u.Version == version && u.Type == typ {
			u.Count++
			return
		}
	}
	fr.batch.Unknown = append(fr.batch.Unknown, cortex.UnknownType{Version: version, Type: typ, Count: 1})
}

func (fr *fileRun) parseError(line, offset int64, msg string, raw []byte) {
	fr.stats.parseErrors++
	// A JSON parser's message quotes the bad input: redacted like it.
	msg = string(fr.r.opts.Redactor.Opaque([]byte(msg)))
	fr.batch.ParseErrors = append(fr.batch.ParseErrors, cortex.ParseError{
		Line: line, Offset: offset, Error: msg, Preview: fr.preview(raw)})
}

// preview is a bounded, redacted, printable excerpt of a bad record.
func (fr *fileRun) preview(raw []byte) string {
	if len(raw) > previewBytes*4 {
		raw = raw[:previewBytes*4]
	}
	s := strings.ToValidUTF8(string(fr.r.opts.Redactor.Opaque(raw)), "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > previewBytes {
		s = s[:previewBytes]
		s = strings.ToValidUTF8(s, "")
	}
	return s
}

// settle gives records that preceded every timestamp the time t of the
// first timestamped record after them.
func (fr *fileRun) settle(t time.Time) {
	for _, i := range fr.untimed {
		fr.batch.Records[i].Entry.Timestamp = t
	}
	fr.untimed = fr.untimed[:0]
}

func (fr *fileRun) full() bool {
	n := len(fr.batch.Records)
	if len(fr.untimed) > 0 && n < 4*fr.r.opts.BatchRecords {
		return false // wait for a timestamp to settle them
	}
	return n >= fr.r.opts.BatchRecords || fr.raw >= fr.r.opts.BatchBytes ||
		len(fr.batch.ParseErrors) >= fr.r.opts.BatchRecords
}

// maxInFlight bounds the batches of one file awaiting commit, so the writer
// can group several into one transaction while memory stays bounded.
const maxInFlight = 4

// flush sends the current batch with the checkpoint as of now. A failed
// commit of an earlier batch stops the file.
func (fr *fileRun) flush(ctx context.Context, last bool) error {
	for len(fr.pending) >= maxInFlight {
		if err := fr.waitOne(); err != nil {
			return err
		}
	}
	if fr.failed != nil {
		return fr.failed
	}
	if len(fr.untimed) > 0 {
		// No timestamp anywhere after them: the file's modification time.
		fr.settle(fr.mtime)
	}
	b := fr.batch
	b.Source = fr.src
	var state any
	switch {
	case fr.codex != nil:
		state = fr.codex.State()
	case fr.claude != nil:
		state = fr.claude.State()
	}
	if state != nil {
		if st, err := json.Marshal(state); err == nil {
			b.Source.ParserState = st
		}
	}
	if fr.format != transcript.FormatGeminiJSON && fr.format != transcript.FormatGeminiJSONL {
		if b.Source.Offset > 0 && len(fr.prefix) > 0 {
			b.Source.PrefixHash = hashOf(fr.prefix[:min(int64(len(fr.prefix)), b.Source.Offset)])
		}
		t := fr.tail
		if len(t) > anchorBytes {
			t = t[len(t)-anchorBytes:]
		}
		if b.Source.Offset > 0 {
			b.Source.AnchorHash = hashOf(t)
		}
	}
	if !last {
		b.Source.Complete = false
	}
	if b.Source.Complete {
		// The next scan skips the file while size and mtime stay as seen.
		b.Source.Size = b.Source.Offset + b.Source.PendingBytes
		if fr.format == transcript.FormatGeminiJSON || fr.format == transcript.FormatGeminiJSONL || fr.stats.outcome == "unsupported" || fr.stats.outcome == "empty" {
			b.Source.Size = fr.src.Size
		}
	}
	done := make(chan error, 1)
	msg := batchMsg{b: b, done: done, last: last, bytes: fr.bytes}
	if last {
		msg.stats = fr.stats
	}
	select {
	case fr.out <- msg:
	case <-ctx.Done():
		if last {
			// The writer must still account for the file.
			fr.out <- msg
		} else {
			return ctx.Err()
		}
	}
	fr.pending = append(fr.pending, done)
	fr.bytes = 0
	fr.raw = 0
	fr.batch = cortex.ImportBatch{Hostname: fr.batch.Hostname, SourceTag: fr.batch.SourceTag}
	return nil
}

// waitOne waits for the oldest batch in flight to commit.
func (fr *fileRun) waitOne() error {
	err := <-fr.pending[0]
	fr.pending = fr.pending[1:]
	if err != nil && fr.failed == nil {
		fr.failed = err
	}
	return err
}

// wait waits for every batch in flight and returns the first failure.
func (fr *fileRun) wait() error {
	for len(fr.pending) > 0 {
		_ = fr.waitOne()
	}
	return fr.failed
}

// finish sends the file's last batch (which carries its final checkpoint and
// counters), or reports a failure.
func (fr *fileRun) finish(ctx context.Context) {
	if fr.failed != nil {
		if errors.Is(fr.failed, context.Canceled) || ctx.Err() != nil {
			fr.stats.err = "canceled"
		} else if fr.stats.err == "" {
			fr.stats.err = fr.failed.Error()
		}
		fr.stats.outcome = "failed"
		_ = fr.wait()
		fr.out <- batchMsg{early: cortex.Errorf(cortex.CodeUnavailable, "%s", fr.stats.err), stats: fr.stats,
			b: cortex.ImportBatch{Source: fr.src}}
		return
	}
	// The last batch carries the file's counters; the writer accounts for
	// its outcome, so the worker moves on without waiting for the commit.
	if err := fr.flush(ctx, true); err != nil {
		fr.failed = err
		fr.stats.outcome = "failed"
		fr.stats.err = err.Error()
		fr.out <- batchMsg{early: cortex.Errorf(cortex.CodeUnavailable, "%s", fr.stats.err), stats: fr.stats}
	}
}

func hashOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:16])
}

func toolOf(f transcript.Format) cortex.Tool {
	if f == "" {
		return ""
	}
	return f.Tool()
}

func looksLikeID(s string) bool {
	return len(s) >= 8 && !strings.ContainsAny(s, " /") && s != "full" && s != "raw_transcript"
}

// readAgentType reads a subagent's sidecar <file>.meta.json.
func readAgentType(path string) string {
	meta := strings.TrimSuffix(path, ".jsonl") + ".meta.json"
	b, err := os.ReadFile(meta)
	if err != nil || len(b) > 1<<20 {
		return ""
	}
	var m struct {
		AgentType string `json:"agentType"`
	}
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	return m.AgentType
}

// sniffState marks an unsupported source with the version of the content
// sniffing that judged it; a source judged by an older version is sniffed
// again (version 2 reads first records over 64 KiB whole).
const sniffState = `{"sniff":2}`

// resniff reports whether an unchanged file must be read again anyway: a
// file named on the command line that is not a transcript is reported on
// every run, and one judged by an older sniffer is judged again.
func resniff(c candidate, prev cortex.Source) bool {
	return prev.Kind == KindUnsupported && (c.explicit || string(prev.ParserState) != sniffState)
}

// sniffRecords bounds how many first records sniffFile reads whole.
const sniffRecords = 3

// sniffFile identifies a file's format from its head, or — when the head
// (the first 64 KiB) ends inside the first records — from its first
// records read whole, whatever their size (up to transcript.MaxRecordBytes
// each). It returns the bytes it judged.
func sniffFile(f *os.File, head []byte, size int64) (transcript.Format, []byte, error) {
	format, err := transcript.Sniff(head)
	if err == nil || int64(len(head)) >= size || bytes.Count(head, []byte("\n")) >= sniffRecords {
		return format, head, err
	}
	lr := transcript.NewLineReader(io.NewSectionReader(f, 0, size), 0, 1)
	var first []byte
	for n := 0; n < sniffRecords; n++ {
		l, lerr := lr.Next()
		if lerr != nil || l.TooLong {
			break
		}
		first = append(append(first, l.Data...), '\n')
	}
	if len(first) <= len(head) {
		return format, head, err
	}
	format, err = transcript.Sniff(first)
	return format, first, err
}

// describeUnsupported says why a file is not a transcript.
func describeUnsupported(head []byte) string {
	t := bytes.TrimLeft(head, " \t\r\n")
	switch {
	case bytes.IndexByte(head, 0) >= 0:
		return "not a transcript: binary content"
	case len(t) == 0:
		return "not a transcript: only whitespace"
	case t[0] != '{':
		return "not a transcript: content is not JSON"
	}
	return "not a transcript: JSON of no supported agent format"
}
