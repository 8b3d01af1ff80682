package cortex

import (
	"time"

	"github.com/cortexhq/cortex/claim"
)

// Source is a transcript file's checkpoint: what Cortex has read of it.
type Source struct {
	ID   int64
	Path string
	// Kind is the file format ("claude", "codex", "gemini-json",
	// "gemini-jsonl") or "unsupported" for files that are not transcripts.
	Kind string
	Tool Tool
	// Size and ModTimeNS describe the file when it was last read to the end.
	Size      int64
	ModTimeNS int64
	// PrefixHash is the SHA-256 of the first min(Offset, 64 KiB) bytes and
	// AnchorHash of the 4 KiB before Offset: together they detect a file
	// rewritten under us.
	PrefixHash string
	AnchorHash string
	// HeadHash is the SHA-256 of the first KiB (the whole file when
	// shorter): the file's content identity, which follows it when it is
	// moved or renamed.
	HeadHash string
	// MovedFrom, set on a batch's source, is the path the file had when
	// it was last read: the store moves the source (and its rows) to
	// Path.
	MovedFrom string
	// Offset is the byte offset up to which records are stored; Line the
	// number of lines before it.
	Offset int64
	Line   int64
	// ParserState is the parser's sticky state at Offset (JSON).
	ParserState []byte
	// PendingBytes counts bytes of an incomplete trailing record left for
	// the next read.
	PendingBytes int64
	// Complete is set when the file was read to its end.
	Complete       bool
	Records        int64
	Rewrites       int64
	FirstIndexedAt time.Time
	LastIndexedAt  time.Time
	LastError      string
}

// ImportRecord is one parsed record on its way into the store.
type ImportRecord struct {
	Entry Entry
	// Raw is the redacted original JSON (as read, or compressed by
	// rawcodec): the store compresses the records of a batch's new rows
	// together, in blocks.
	Raw []byte
	// ContentHash identifies the record's content; a stored record whose
	// hash changed is updated in place (last write wins).
	ContentHash string
	// Line is the record's line (or message index) in the file.
	Line int64
	// Meta is Entry.MetadataJSON(), rendered by the caller (off the writer).
	Meta string
	// Events are the record's normalized events, stored with its row.
	Events Events
	// Claims is what an assistant row's text claims (package claim), read
	// by the caller (off the writer) when ClaimsRead is set; the writer
	// reads it itself otherwise.
	Claims     claim.Kinds
	ClaimsRead bool
	// TextFromRecord is set (by the caller, off the writer) when the
	// entry's text is what reading Raw again gives (see
	// transcript.TextFromRecord): a store may leave it out.
	TextFromRecord bool
}

// ParseError is a record Cortex could not use.
type ParseError struct {
	Line    int64
	Offset  int64
	Error   string
	Preview string
}

// UnknownType counts records of a type this version does not understand.
type UnknownType struct {
	Version string
	Type    string
	Count   int64
}

// ImportBatch is one write transaction of ingest: records of one file plus
// the checkpoint to store with them, so that a crash never leaves the
// checkpoint ahead of (or behind) the stored rows.
type ImportBatch struct {
	// Source carries the identity and the checkpoint to store after this
	// batch (ID may be zero for a new file).
	Source Source
	// Reset clears the source's parse errors and unknown-type counts before
	// this batch: the file is being re-read from the start.
	Reset bool
	// Rewritten counts a detected rewrite.
	Rewritten   bool
	Records     []ImportRecord
	ParseErrors []ParseError
	Unknown     []UnknownType
	// Usage is the token usage of the batch's model responses (also of
	// records not stored as rows, such as Codex token_count events),
	// deduplicated by the store per session and key.
	Usage []TokenUsage
	// Summaries are session summaries to attach, as titles, to the
	// sessions of their leaf messages.
	Summaries []SessionSummary
	// Hostname, AppName and SourceTag are stored on every row.
	Hostname  string
	SourceTag string
}

// ImportResult reports what a batch did.
type ImportResult struct {
	SourceID   int64
	Inserted   int64
	Updated    int64
	Duplicates int64
	Events     EventCounts
}

// EventCounts reports what event writing did: new rows per table, and
// events that were already stored (or, for tool calls, merged into an
// existing call's row).
type EventCounts struct {
	Skills     int64 `json:"skill_events"`
	Tools      int64 `json:"mcp_events"`
	Hooks      int64 `json:"hook_events"`
	Users      int64 `json:"user_events"`
	Duplicates int64 `json:"duplicates"`
	Merged     int64 `json:"tool_events_merged"`
}

// Add adds o to c.
func (c *EventCounts) Add(o EventCounts) {
	c.Skills += o.Skills
	c.Tools += o.Tools
	c.Hooks += o.Hooks
	c.Users += o.Users
	c.Duplicates += o.Duplicates
	c.Merged += o.Merged
}

// RawBytes is the size of the batch's stored raw records.
func (b *ImportBatch) RawBytes() int {
	n := 0
	for i := range b.Records {
		n += len(b.Records[i].Raw) + len(b.Records[i].Entry.Text)
	}
	return n
}
