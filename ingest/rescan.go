package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/rawcodec"
	"github.com/cortexhq/cortex/redact"
	"github.com/cortexhq/cortex/sqlite"
	"github.com/cortexhq/cortex/transcript"
)

// RescanStore is what a rescan needs from the database.
type RescanStore interface {
	RowsForRescan(ctx context.Context, afterID int64, n int) ([]sqlite.RescanRow, error)
	ApplyRescan(ctx context.Context, ups []sqlite.RescanUpdate) error
	RedactColumns(ctx context.Context, fix func(string) (string, bool), dryRun bool) (int64, error)
	Scrub(ctx context.Context) error
	locker
}

// RescanOptions configures Rescan.
type RescanOptions struct {
	DryRun    bool
	BatchRows int // rows per transaction (default 1000)
	Redactor  *redact.Redactor
	Codec     *rawcodec.Codec
	Holder    string
	Hostname  string
	Progress  func(scanned int64)
}

// RescanResult reports a rescan (in a dry run: what it would change).
type RescanResult struct {
	DryRun  bool  `json:"dry_run"`
	Scanned int64 `json:"scanned_rows"`
	// RawRecords and Messages count rows whose raw record or searchable
	// text (re-indexed) changed; Values the other stored texts (event
	// previews and arguments, hook commands, parse errors, audited
	// errors).
	RawRecords  int64    `json:"raw_records_redacted"`
	Messages    int64    `json:"messages_redacted"`
	Values      int64    `json:"other_values_redacted"`
	Redactions  int64    `json:"redactions"`
	Elapsed     Duration `json:"elapsed"`
	RulesActive int      `json:"rules"`
}

// Rescan re-redacts everything stored with the current rules: every row's
// raw record (decompressed, redacted as JSON, recompressed; its ledger
// entry follows), its searchable text (and its full-text entry), and the
// other stored free texts. Each batch of rows is one transaction, so an
// interrupted rescan keeps what it did and a second run finds nothing
// left. It shares the maintenance lock of the event backfill.
func Rescan(ctx context.Context, store RescanStore, opts RescanOptions) (RescanResult, error) {
	start := time.Now()
	res := RescanResult{DryRun: opts.DryRun}
	if opts.BatchRows <= 0 {
		opts.BatchRows = 1000
	}
	if opts.Holder == "" {
		opts.Holder = "rescan"
	}
	release, err := beginMaintenance(ctx, store, &opts.Redactor, &opts.Codec, opts.Holder, opts.Hostname)
	if err != nil {
		return res, err
	}
	defer release()
	res.RulesActive = len(opts.Redactor.Rules())
	red := opts.Redactor
	var after int64
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		rows, err := store.RowsForRescan(ctx, after, opts.BatchRows)
		if err != nil {
			return res, err
		}
		if len(rows) == 0 {
			break
		}
		var ups []sqlite.RescanUpdate
		for _, r := range rows {
			after = r.ID
			res.Scanned++
			u := sqlite.RescanUpdate{ID: r.ID}
			if len(r.Raw) > 0 {
				raw, err := opts.Codec.Decode(r.Raw)
				if err != nil {
					return res, cortex.WrapError(cortex.CodeUnavailable, err, "row %d: cannot decode its raw record: %v", r.ID, err)
				}
				var out []byte
				var n int
				if r.Transcript {
					out, n = red.JSON(raw)
				} else {
					out, n = red.Bytes(raw)
				}
				if n > 0 {
					sum := sha256.Sum256(out)
					u.Raw, u.ContentHash, u.KeyHash = opts.Codec.Encode(nil, out), hex.EncodeToString(sum[:12]), transcript.ContentKey(out)
					res.RawRecords++
					res.Redactions += int64(n)
				}
			}
			if msg, n := red.String(r.Message); n > 0 {
				u.Message = &msg
				res.Messages++
				res.Redactions += int64(n)
			} else if u.Raw != nil && r.FromRecord {
				// The text was read from the record, which changes: it
				// stays what it was, now stored.
				u.Message = &r.Message
			}
			if u.Raw != nil || u.Message != nil {
				ups = append(ups, u)
			}
		}
		if !opts.DryRun {
			if err := store.ApplyRescan(ctx, ups); err != nil {
				return res, err
			}
		}
		if opts.Progress != nil {
			opts.Progress(res.Scanned)
		}
	}
	n, err := store.RedactColumns(ctx, func(s string) (string, bool) {
		out, k := red.String(s)
		return out, k > 0
	}, opts.DryRun)
	res.Values = n
	if err == nil && !opts.DryRun && res.RawRecords+res.Messages+res.Values > 0 {
		err = store.Scrub(ctx)
	}
	res.Elapsed = Duration(time.Since(start))
	return res, err
}
