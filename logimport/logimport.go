// Package logimport imports log files as non-AI log rows (ai_tool NULL):
// plain syslog text (RFC 3164 / RFC 5424 lines, with or without PRI, as
// in /var/log/syslog), JSON lines (common field names for time, level,
// message, host and app) and `journalctl -o json` exports.
//
// Files are checkpointed like transcripts (see package ingest): an
// unchanged file costs a stat, an appended one resumes at its stored
// offset, and a rewritten or truncated one (detected by hashes of the
// bytes before the offset) is read again from its start. Every line is
// claimed in the import ledger under a key made of its content hash and
// its occurrence number, so a re-read never stores a line twice, and a
// rotated file that keeps some old lines adds only the new ones. Lines
// are redacted before they are parsed or stored, as transcripts are.
package logimport

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/rawcodec"
	"github.com/cortexhq/cortex/redact"
	"github.com/cortexhq/cortex/sqlite"
	"github.com/cortexhq/cortex/syslogd"
)

const (
	prefixBytes = 64 << 10
	anchorBytes = 4 << 10
	// SourcePrefix starts the source of imported rows and the key of their
	// checkpoint: "file:<absolute path>".
	SourcePrefix = "file:"
	// DefaultBatchRows bounds the rows of one write transaction.
	DefaultBatchRows = 2000
	// DefaultMaxLineBytes cuts longer lines (stored cut, marked truncated).
	DefaultMaxLineBytes = 64 << 10
	// DefaultSettleAge: a last line without LF is imported once the file
	// has not changed for this long (before, it may still be being written).
	DefaultSettleAge = 5 * time.Second
)

// Store is what an import needs from the database.
type Store interface {
	Source(ctx context.Context, path string) (cortex.Source, bool, error)
	LogKeyCounts(ctx context.Context, sourceID int64, bases []string) (map[string]int64, error)
	ImportLogs(ctx context.Context, bs []sqlite.LogBatch) ([]sqlite.LogImportResult, error)
}

// Options configures Import.
type Options struct {
	// Format is auto (detected per file from its first lines; a file keeps
	// the format it was first read with), syslog, json or journald-json.
	Format string
	// Host is stored on lines that name no host (default "localhost").
	Host string
	// Force re-reads every file from its start (the ledger still dedupes).
	Force        bool
	BatchRows    int
	MaxLineBytes int
	SettleAge    time.Duration
	// Location is the time zone of RFC 3164 stamps (default: local time).
	Location *time.Location
	Redactor *redact.Redactor
	Codec    *rawcodec.Codec
	Logger   *slog.Logger
	Now      func() time.Time
}

func (o *Options) defaults() error {
	if o.Format == "" {
		o.Format = FormatAuto
	}
	if !slices.Contains(Formats(), o.Format) {
		return cortex.Errorf(cortex.CodeInvalid, "unknown log format %q (use %s)", o.Format, strings.Join(Formats(), ", "))
	}
	if o.Host == "" {
		o.Host = "localhost"
	}
	if o.BatchRows <= 0 {
		o.BatchRows = DefaultBatchRows
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.SettleAge <= 0 {
		o.SettleAge = DefaultSettleAge
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	if o.Redactor == nil {
		o.Redactor = redact.New()
	}
	if o.Codec == nil {
		c, err := rawcodec.New()
		if err != nil {
			return fmt.Errorf("log import: %w", err)
		}
		o.Codec = c
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// Outcomes of a file (FileResult.Outcome).
const (
	OutcomeRead      = "read"
	OutcomeResumed   = "resumed"
	OutcomeRewritten = "rewritten"
	OutcomeUnchanged = "unchanged"
	OutcomeEmpty     = "empty"
	OutcomeFailed    = "failed"
)

// FileResult reports what happened to one file.
type FileResult struct {
	Path    string `json:"path"`
	Format  string `json:"format,omitempty"`
	Outcome string `json:"outcome"`
	// Lines counts the lines read; Inserted/Duplicates what the store did
	// with them; Malformed lines stored whole with a parse-error note;
	// Truncated lines cut to the size limit.
	Lines      int64 `json:"lines"`
	Inserted   int64 `json:"rows_inserted"`
	Duplicates int64 `json:"duplicates_skipped"`
	Malformed  int64 `json:"malformed"`
	Truncated  int64 `json:"truncated"`
	// PendingBytes is a last line without LF left for the next import.
	PendingBytes int64  `json:"pending_bytes,omitempty"`
	Error        string `json:"error,omitempty"`
}

// Summary reports what Import did.
type Summary struct {
	Files      []FileResult `json:"files"`
	Lines      int64        `json:"lines"`
	Inserted   int64        `json:"rows_inserted"`
	Duplicates int64        `json:"duplicates_skipped"`
	Malformed  int64        `json:"malformed"`
	Failed     int          `json:"files_failed"`
	ElapsedS   float64      `json:"elapsed_s"`
	LinesPerS  float64      `json:"lines_per_sec"`
}

// Import reads the log files at paths into store. A file that cannot be
// read is reported in its FileResult (Outcome failed) and the others go
// on; a store failure stops the import and is returned (what was
// committed stays, and the next import resumes from the checkpoints).
func Import(ctx context.Context, store Store, paths []string, opts Options) (Summary, error) {
	if err := opts.defaults(); err != nil {
		return Summary{}, err
	}
	start := opts.Now()
	sum := Summary{Files: []FileResult{}}
	p := syslogd.NewParser(opts.Location)
	for _, path := range paths {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		fr := &fileRun{store: store, opts: &opts, parser: p, occ: map[string]int64{}}
		res, err := fr.run(ctx, path)
		sum.Files = append(sum.Files, res)
		sum.Lines += res.Lines
		sum.Inserted += res.Inserted
		sum.Duplicates += res.Duplicates
		sum.Malformed += res.Malformed
		if res.Outcome == OutcomeFailed {
			sum.Failed++
		}
		if err != nil {
			return sum, err
		}
	}
	// The lines are searchable once the search index caught up.
	if ss, ok := store.(searchStore); ok {
		if _, err := ss.IndexSearch(ctx, nil); err != nil {
			return sum, err
		}
	}
	if secs := opts.Now().Sub(start).Seconds(); secs > 0 {
		sum.ElapsedS = math.Round(secs*1000) / 1000
		sum.LinesPerS = math.Round(float64(sum.Lines) / secs)
	}
	return sum, nil
}

// searchStore is a store whose search index is written behind its rows.
type searchStore interface {
	IndexSearch(ctx context.Context, progress func(sqlite.SearchProgress)) (sqlite.SearchProgress, error)
}

// fileRun is the state of importing one file.
type fileRun struct {
	store  Store
	opts   *Options
	parser *syslogd.Parser
	f      *os.File
	res    FileResult
	src    cortex.Source
	prev   cortex.Source
	has    bool
	format string
	mtime  time.Time
	// lastTS is the last stated timestamp: lines without one (stack
	// traces, continuation lines) take it.
	lastTS time.Time
	rows   []pendingRow
	// occ numbers identical lines; resuming says the keys of lines before
	// the start offset must be counted in the ledger.
	occ       map[string]int64
	resuming  bool
	reset     bool
	rewritten bool
}

// pendingRow is a row waiting for its ledger key's occurrence number.
type pendingRow struct {
	row  sqlite.LogRow
	base string
}

// run imports one file. The error is a store failure; file problems are
// reported in the result.
func (fr *fileRun) run(ctx context.Context, path string) (FileResult, error) {
	fr.res.Path = path
	abs, err := filepath.Abs(path)
	if err != nil {
		return fr.fail(err), nil
	}
	fr.res.Path = abs
	f, err := os.Open(abs)
	if err != nil {
		return fr.fail(err), nil
	}
	defer f.Close()
	fr.f = f
	fi, err := f.Stat()
	if err != nil {
		return fr.fail(err), nil
	}
	if fi.IsDir() {
		return fr.fail(errors.New("is a directory (name the log files)")), nil
	}
	size := fi.Size()
	fr.mtime = fi.ModTime()
	key := SourcePrefix + abs
	fr.prev, fr.has, err = fr.store.Source(ctx, key)
	if err != nil {
		return fr.fail(err), err
	}
	if fr.has && !strings.HasPrefix(fr.prev.Kind, kindPrefix) {
		fr.has = false // not a log-file checkpoint: never the case for "file:" keys, but be safe
	}
	fr.src = cortex.Source{Path: key, Size: size, ModTimeNS: fr.mtime.UnixNano()}
	if fr.has && !fr.opts.Force && fr.prev.Complete && fr.prev.Size == size && fr.prev.ModTimeNS == fr.src.ModTimeNS {
		fr.res.Outcome, fr.res.Format = OutcomeUnchanged, strings.TrimPrefix(fr.prev.Kind, kindPrefix)
		return fr.res, nil
	}
	head := make([]byte, min(size, prefixBytes))
	if _, err := io.ReadFull(f, head); err != nil {
		return fr.fail(fmt.Errorf("read: %w", err)), nil
	}
	fr.format = fr.opts.Format
	if fr.format == FormatAuto {
		if fr.has && !fr.opts.Force {
			fr.format = strings.TrimPrefix(fr.prev.Kind, kindPrefix)
		} else {
			fr.format = Sniff(head)
		}
	}
	fr.res.Format = fr.format
	fr.src.Kind = kindPrefix + fr.format
	offset, line, err := fr.decideStart(head, size)
	if err != nil {
		return fr.fail(err), nil
	}
	if size == 0 {
		fr.res.Outcome = OutcomeEmpty
	}
	if err := fr.read(ctx, offset, line); err != nil {
		var ce *cortex.Error
		if errors.As(err, &ce) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return fr.fail(err), err
		}
		return fr.fail(err), nil
	}
	return fr.res, nil
}

func (fr *fileRun) fail(err error) FileResult {
	fr.res.Outcome = OutcomeFailed
	var ce *cortex.Error
	var pe *os.PathError
	switch {
	case errors.As(err, &ce):
		fr.res.Error = cortex.ErrorMessage(err)
	case errors.As(err, &pe):
		fr.res.Error = pe.Err.Error()
	default:
		fr.res.Error = err.Error()
	}
	return fr.res
}

// decideStart chooses where to read from: the stored offset when the bytes
// before it are unchanged, else the start.
func (fr *fileRun) decideStart(head []byte, size int64) (offset, line int64, err error) {
	p := fr.prev
	if !fr.has || fr.opts.Force || p.Offset == 0 {
		fr.res.Outcome, fr.reset = OutcomeRead, true
		return 0, 0, nil
	}
	rewritten := size < p.Offset || hashOf(head[:min(int64(len(head)), p.Offset)]) != p.PrefixHash
	if !rewritten {
		a, err := fr.anchor(p.Offset)
		if err != nil {
			return 0, 0, err
		}
		rewritten = hashOf(a) != p.AnchorHash
	}
	if rewritten {
		fr.res.Outcome, fr.reset, fr.rewritten = OutcomeRewritten, true, true
		return 0, 0, nil
	}
	fr.res.Outcome, fr.resuming = OutcomeResumed, true
	return p.Offset, p.Line, nil
}

// anchor returns the anchorBytes before off.
func (fr *fileRun) anchor(off int64) ([]byte, error) {
	start := max(0, off-anchorBytes)
	b := make([]byte, off-start)
	if _, err := fr.f.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read checkpoint anchor: %w", err)
	}
	return b, nil
}

// read reads lines from offset, flushing batches with their checkpoint.
func (fr *fileRun) read(ctx context.Context, offset, line int64) error {
	if _, err := fr.f.Seek(offset, io.SeekStart); err != nil {
		return fmt.Errorf("seek: %w", err)
	}
	fr.src.Offset, fr.src.Line = offset, line
	settled := fr.opts.Now().Sub(fr.mtime) >= fr.opts.SettleAge
	br := bufio.NewReaderSize(fr.f, 64<<10)
	var buf []byte
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, wire, consumed, hasLF, err := readLine(br, fr.opts.MaxLineBytes, &buf)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read: %w", err)
		}
		if consumed == 0 && errors.Is(err, io.EOF) {
			break
		}
		if !hasLF && !settled {
			// A last line still being written: next time.
			fr.src.PendingBytes = int64(consumed)
			fr.res.PendingBytes = int64(consumed)
			break
		}
		line++
		if len(bytes.TrimSpace(data)) > 0 {
			fr.line(data, wire, line)
		}
		fr.src.Offset += int64(consumed)
		fr.src.Line = line
		if len(fr.rows) >= fr.opts.BatchRows {
			if err := fr.flush(ctx, false); err != nil {
				return err
			}
		}
		if !hasLF {
			break
		}
	}
	return fr.flush(ctx, true)
}

// readLine reads one line, keeping at most max bytes of it. wire is its
// length without the terminator (LF or CRLF), consumed its length in the
// file; hasLF says the line was terminated.
func readLine(br *bufio.Reader, max int, buf *[]byte) (data []byte, wire, consumed int, hasLF bool, err error) {
	*buf = (*buf)[:0]
	cr := false
	for {
		chunk, e := br.ReadSlice('\n')
		if e == nil {
			chunk, hasLF = chunk[:len(chunk)-1], true
			consumed++
		}
		if len(chunk) > 0 {
			cr = chunk[len(chunk)-1] == '\r'
		}
		wire += len(chunk)
		consumed += len(chunk)
		if room := max - len(*buf); room > 0 {
			*buf = append(*buf, chunk[:min(len(chunk), room)]...)
		}
		if e == nil {
			break
		}
		if errors.Is(e, bufio.ErrBufferFull) {
			continue
		}
		err = e
		break
	}
	data = *buf
	if cr && hasLF {
		// CRLF: the CR is part of the terminator, not of the line.
		if len(data) == wire {
			data = data[:len(data)-1]
		}
		wire--
	}
	return data, wire, consumed, hasLF, err
}

// line turns one line into a pending row.
func (fr *fileRun) line(data []byte, wire int, no int64) {
	fr.res.Lines++
	red := fr.opts.Redactor
	raw, _ := red.Bytes(data)
	var rec record
	switch fr.format {
	case FormatJSON:
		rec = parseJSON(raw)
	case FormatJournald:
		rec = parseJournald(raw)
	default:
		rec = parseSyslogLine(fr.parser, raw, fr.mtime)
	}
	if fr.format != FormatSyslog {
		// Text decoded from JSON escapes: redact again (a secret written
		// with escapes only shows in the decoded form).
		rec.text, _ = red.String(rec.text)
	}
	meta := rec.meta
	if meta == nil {
		meta = map[string]string{}
	}
	if rec.malformed != "" {
		meta["parse_error"] = rec.malformed
		fr.res.Malformed++
	}
	if wire > len(data) {
		meta["truncated"] = "true"
		meta["original_bytes"] = strconv.Itoa(wire)
		fr.res.Truncated++
	}
	r := sqlite.LogRow{Timestamp: rec.ts, Hostname: rec.host, Facility: rec.facility, Severity: rec.sev, AppName: rec.app,
		Message: rec.text, Source: fr.src.Path, Malformed: rec.malformed != "", Line: no}
	switch {
	case !r.Timestamp.IsZero():
		fr.lastTS = r.Timestamp
	case !fr.lastTS.IsZero():
		r.Timestamp = fr.lastTS
		meta["timestamp_estimated"] = "true"
	default:
		r.Timestamp = fr.mtime.UTC()
		meta["timestamp_estimated"] = "true"
	}
	if r.Hostname == "" {
		r.Hostname = fr.opts.Host
	}
	if r.Severity == "" {
		if sev, ok := syslogd.SeverityFromText(r.Message); ok {
			r.Severity = sev
			meta["severity_from"] = "text"
		} else if fr.format == FormatSyslog || rec.malformed != "" {
			r.Severity = cortex.SevNotice
		} else {
			r.Severity = cortex.SevInfo
		}
	}
	if len(meta) > 0 {
		if b, err := json.Marshal(meta); err == nil {
			r.Meta = string(b)
		}
	}
	r.Raw = fr.opts.Codec.Encode(nil, raw)
	sum := sha256.Sum256(raw)
	fr.rows = append(fr.rows, pendingRow{row: r, base: "h:" + hex.EncodeToString(sum[:12])})
}

// flush numbers the pending rows' keys and stores them with the checkpoint.
func (fr *fileRun) flush(ctx context.Context, last bool) error {
	if fr.resuming && fr.prev.ID != 0 {
		var unknown []string
		seen := map[string]bool{}
		for _, p := range fr.rows {
			if _, ok := fr.occ[p.base]; !ok && !seen[p.base] {
				seen[p.base] = true
				unknown = append(unknown, p.base)
			}
		}
		counts, err := fr.store.LogKeyCounts(ctx, fr.prev.ID, unknown)
		if err != nil {
			return err
		}
		for k, n := range counts {
			fr.occ[k] = n
		}
	}
	rows := make([]sqlite.LogRow, len(fr.rows))
	for i, p := range fr.rows {
		fr.occ[p.base]++
		rows[i] = p.row
		rows[i].Key = p.base + "#" + strconv.FormatInt(fr.occ[p.base], 10)
	}
	b := sqlite.LogBatch{Source: fr.src, Reset: fr.reset, Rewritten: fr.rewritten, Rows: rows}
	if b.Source.Offset > 0 {
		prefix := make([]byte, min(b.Source.Offset, prefixBytes))
		if _, err := fr.f.ReadAt(prefix, 0); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read checkpoint prefix: %w", err)
		}
		a, err := fr.anchor(b.Source.Offset)
		if err != nil {
			return err
		}
		b.Source.PrefixHash, b.Source.AnchorHash = hashOf(prefix), hashOf(a)
	}
	// A pending last line keeps the file incomplete, so the next import
	// reads it even when the file has not changed since.
	b.Source.Complete = last && b.Source.PendingBytes == 0
	if last {
		// The next import skips the file while size and mtime stay as seen.
		b.Source.Size = b.Source.Offset + b.Source.PendingBytes
	}
	res, err := fr.store.ImportLogs(ctx, []sqlite.LogBatch{b})
	if err != nil {
		return err
	}
	fr.res.Inserted += res[0].Inserted
	fr.res.Duplicates += res[0].Duplicates
	fr.prev.ID = res[0].SourceID
	fr.rows = fr.rows[:0]
	fr.reset, fr.rewritten = false, false
	return nil
}

func hashOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:16])
}
