// Package ingest reads transcript files into the store: discovery of the
// agents' folders, per-file checkpoints (append resume, rewrite detection,
// stat-only skip of unchanged files), parsing on worker goroutines and one
// writer that commits each batch together with its checkpoint.
package ingest

import (
	"context"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/rawcodec"
	"github.com/cortexhq/cortex/redact"
	"github.com/cortexhq/cortex/sqlite"
)

// Store is what ingest needs from the database.
type Store interface {
	// Sources returns every checkpoint by path. A store that also reads
	// one (SourceReader) may leave ParserState empty but for unsupported
	// files: Index reads the full checkpoint of each file it resumes.
	Sources(ctx context.Context) (map[string]cortex.Source, error)
	CountKeys(ctx context.Context, sourceID int64, prefix string) (int64, error)
	ImportBatches(ctx context.Context, bs []cortex.ImportBatch) ([]cortex.ImportResult, error)
}

// SourceReader is a store that reads the checkpoint of one path (ok=false
// when it has none).
type SourceReader interface {
	Source(ctx context.Context, path string) (cortex.Source, bool, error)
}

// Options configures Index.
type Options struct {
	// Paths are files or folders to index; empty means the default roots
	// under Home.
	Paths []string
	Home  string
	// Since skips files not modified since this time (zero: no limit).
	Since time.Time
	// Force re-reads every file from its start (rows are still never
	// duplicated: the import ledger dedupes).
	Force    bool
	Hostname string
	// NoEvents stores rows without extracting skill, tool-call and hook
	// events (they can be added later with Backfill).
	NoEvents bool
	// keepTexts keeps every row's text in the store, as stores did before
	// texts were read from records (tests compare the two).
	keepTexts bool
	// Workers parse files concurrently (default: one per CPU but one, and
	// at least one: see defaults).
	Workers int
	// BatchRecords and BatchBytes bound one write transaction.
	BatchRecords int
	BatchBytes   int
	// SearchAlong says when the search index is written: SearchAuto
	// (default) while the rows are stored when a CPU is left for it, else
	// after them.
	SearchAlong SearchMode
	// Progress, when set, is called after every committed batch;
	// SearchProgress after every transaction of the search index.
	Progress       func(Progress)
	SearchProgress func(sqlite.SearchProgress)
	Logger         *slog.Logger
	Redactor       *redact.Redactor
	Codec          *rawcodec.Codec
	Now            func() time.Time
}

// SearchMode says when Index writes the search index.
type SearchMode int

// Search modes.
const (
	SearchAuto SearchMode = iota
	SearchConcurrent
	SearchAfter
)

// Progress is a running total reported while indexing.
type Progress struct {
	FilesDone, FilesTotal int
	BytesDone, BytesTotal int64
	Inserted              int64
}

// FileError is a file that could not be (fully) indexed.
type FileError struct {
	Path  string `json:"path"`
	Error string `json:"error"`
	// Unsupported says the file's content is not a transcript of any
	// supported agent (retrying cannot help until it changes).
	Unsupported bool `json:"unsupported,omitempty"`
}

// Summary reports what an Index run did.
type Summary struct {
	Roots []string `json:"roots"`
	// Backfilled reports the backfill a migration asked for, run before
	// the files were read (rows stored before an event kind existed).
	Backfilled *BackfillResult `json:"backfilled,omitempty"`
	// Missing lists explicit paths that do not exist.
	Missing []string `json:"missing,omitempty"`
	// FilesSeen counts candidate files found.
	FilesSeen int `json:"files_seen"`
	// FilesUnchanged were skipped after a stat (unchanged since last read).
	FilesUnchanged int `json:"files_unchanged"`
	// FilesOlder were skipped by --since.
	FilesOlder int `json:"files_older"`
	// FilesRead were read from the start; FilesResumed from a checkpoint.
	FilesRead    int `json:"files_read"`
	FilesResumed int `json:"files_resumed"`
	// FilesRewritten were found rewritten or truncated and re-read.
	FilesRewritten int `json:"files_rewritten"`
	// FilesMoved were known files found under a new path (moved or
	// renamed): their source follows them, nothing is stored twice.
	FilesMoved int `json:"files_moved"`
	// FilesUnsupported are not transcripts of a supported agent.
	FilesUnsupported int `json:"files_unsupported"`
	FilesEmpty       int `json:"files_empty"`
	FilesFailed      int `json:"files_failed"`
	Symlinks         int `json:"symlinks_skipped"`
	// Records counts every record read (JSON objects, or Gemini messages);
	// Stored those handed to the store, and Inserted/Updated/Duplicates what
	// the store did with them; Skipped records understood but deliberately
	// not stored, by reason.
	Records    int64 `json:"records"`
	Stored     int64 `json:"records_stored"`
	Inserted   int64 `json:"rows_inserted"`
	Updated    int64 `json:"rows_updated"`
	Duplicates int64 `json:"duplicates_skipped"`
	// Transactions counts the write transactions (each holds one or more
	// batches, see the writer).
	Transactions int64 `json:"transactions"`
	// Events counts the skill, tool-call and hook events stored.
	Events cortex.EventCounts `json:"events"`
	// SkillBodies counts the skill loads tied to their body version (see
	// ResolveSkillBodies).
	SkillBodies  int              `json:"skill_bodies,omitempty"`
	Skipped      map[string]int64 `json:"records_skipped"`
	ParseErrors  int64            `json:"parse_errors"`
	Warnings     int64            `json:"warnings"`
	UnknownTypes int64            `json:"unknown_types"`
	// PendingFiles end with an incomplete record left for the next read.
	PendingFiles int   `json:"pending_partial_records"`
	BytesRead    int64 `json:"bytes_read"`
	// BlobBytesNotStored counts the bytes of opaque blobs (base64 images,
	// signatures, encrypted reasoning) the stored records left out (see
	// transcript.ElideBlobs).
	BlobBytesNotStored int64       `json:"blob_bytes_not_stored,omitempty"`
	Elapsed            Duration    `json:"elapsed"`
	RecordsPerS        float64     `json:"records_per_sec"`
	RowsPerS           float64     `json:"rows_per_sec"`
	MBPerS             float64     `json:"mb_per_sec"`
	Errors             []FileError `json:"errors,omitempty"`
	Canceled           bool        `json:"canceled,omitempty"`
	// Search reports the search index's work (rows are searchable when
	// it caught up); nil for a store without one.
	Search *SearchSummary `json:"search,omitempty"`
}

// Failure returns an error when the run could not index everything it was
// asked to — a file or folder that could not be read, a named path that
// does not exist, a named file that is not a transcript — and nil
// otherwise. Its code is the worst of them: unavailable (unreadable), then
// not_found (missing), then invalid (not a transcript).
func (s Summary) Failure() error {
	if len(s.Errors) == 0 && len(s.Missing) == 0 {
		return nil
	}
	code := cortex.CodeInvalid
	if len(s.Missing) > 0 {
		code = cortex.CodeNotFound
	}
	for _, e := range s.Errors {
		if !e.Unsupported {
			code = cortex.CodeUnavailable
		}
	}
	n := len(s.Errors) + len(s.Missing)
	return cortex.Errorf(code, "%d of the paths to index failed (%s): %s", n, failureKinds(s), firstFailure(s))
}

func failureKinds(s Summary) string {
	var unreadable, unsupported int
	for _, e := range s.Errors {
		if e.Unsupported {
			unsupported++
		} else {
			unreadable++
		}
	}
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{unreadable, "unreadable or failed"}, {len(s.Missing), "missing"}, {unsupported, "not a transcript"}} {
		if p.n > 0 {
			parts = append(parts, strconv.Itoa(p.n)+" "+p.what)
		}
	}
	return strings.Join(parts, ", ")
}

func firstFailure(s Summary) string {
	if len(s.Errors) > 0 {
		return s.Errors[0].Path + ": " + s.Errors[0].Error
	}
	return s.Missing[0] + ": does not exist"
}

// Duration marshals as seconds with millisecond precision.
type Duration time.Duration

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(formatSeconds(time.Duration(d))), nil
}

func formatSeconds(d time.Duration) string {
	return trimFloat(d.Seconds())
}

// DefaultWorkers is how many files are parsed at once unless told: one
// per CPU but one, at least one. The writer is serial, and the ingest's
// pace: a parser per CPU left it waiting for a core (7.7 s of a 19.5 s
// stored phase on 2 CPUs, in a runtime trace), while one parser outpaces
// it. On 2 CPUs, 1 GB corpus, five interleaved pairs: 12.0–17.3 s (median
// 13.9) to stored rows with one parser, 14.7–17.3 s (median 16.2) with two.
func DefaultWorkers() int { return max(1, runtime.NumCPU()-1) }

func (o *Options) defaults() error {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers()
	}
	if o.BatchRecords <= 0 {
		o.BatchRecords = 2000
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = 8 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Redactor == nil {
		o.Redactor = redact.New()
	}
	if o.Codec == nil {
		c, err := rawcodec.New()
		if err != nil {
			return err
		}
		o.Codec = c
	}
	if o.Hostname == "" {
		o.Hostname = "localhost"
	}
	return nil
}
