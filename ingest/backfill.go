package ingest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/claim"
	"github.com/cortexhq/cortex/internal/proc"
	"github.com/cortexhq/cortex/rawcodec"
	"github.com/cortexhq/cortex/redact"
	"github.com/cortexhq/cortex/sqlite"
	"github.com/cortexhq/cortex/toolcall"
	"github.com/cortexhq/cortex/transcript"
	"github.com/cortexhq/cortex/voice"
)

// Event kinds a backfill can rebuild.
const (
	KindSkills = "skills"
	KindTools  = "mcp"
	KindHooks  = "hooks"
	KindUsers  = "users"
)

// EventKinds lists the backfill kinds.
func EventKinds() []string { return []string{KindBodies, KindSkills, KindTools, KindHooks, KindUsers} }

// userRoles are the roles of rows that can carry user events: typed text,
// interrupts and aborts (system), rejections (tool results).
var userRoles = []cortex.Role{cortex.RoleUser, cortex.RoleSystem, cortex.RoleToolResult}

// backfillRoles are the roles of the rows a backfill of kinds reads (nil:
// every row).
func backfillRoles(kinds []string) []cortex.Role {
	if len(kinds) == 1 && kinds[0] == KindUsers {
		return userRoles // the other rows carry no user event: skip decoding them
	}
	return nil
}

// BackfillScope is how many rows a backfill of kinds from afterID (and
// since) scans at most: the total of its progress.
func BackfillScope(ctx context.Context, store interface {
	CountTranscriptRecords(ctx context.Context, afterID int64, since time.Time, roles []cortex.Role) (int64, error)
}, kinds []string, afterID int64, since time.Time) (int64, error) {
	kinds, err := normalizeKinds(kinds)
	if err != nil {
		return 0, err
	}
	return store.CountTranscriptRecords(ctx, afterID, since, backfillRoles(kinds))
}

// BackfillStore is what a backfill needs from the database.
type BackfillStore interface {
	TranscriptRecords(ctx context.Context, afterID int64, since time.Time, roles []cortex.Role, limit int) ([]sqlite.StoredRecord, error)
	StoreEvents(ctx context.Context, recs []sqlite.EventRecord, dry *sqlite.DryRun) (cortex.EventCounts, error)
	locker
}

// BackfillOptions configures Backfill.
type BackfillOptions struct {
	// Kinds selects which events to rebuild (default: all).
	Kinds []string
	// Since limits the scan to rows at or after this time.
	Since time.Time
	// AfterID starts the scan after this row id (to continue a run that
	// stopped at Limit).
	AfterID int64
	// Limit bounds the rows scanned (0: no limit); Truncated reports a hit.
	Limit int
	// DryRun writes nothing and still reports what would be written.
	DryRun bool
	// BatchRows is the keyset batch size; each batch is one short write
	// transaction (default 2000).
	BatchRows int
	Progress  func(BackfillProgress)
	Redactor  *redact.Redactor
	Codec     *rawcodec.Codec
	// Holder names the caller in the single-flight lock (e.g. "cli").
	Holder string
	// Hostname is this machine's name (for the lock).
	Hostname string
}

// BackfillProgress is reported after every batch.
type BackfillProgress struct {
	Scanned int64
	LastID  int64
}

// BackfillResult reports a backfill.
type BackfillResult struct {
	Kinds   []string `json:"kinds"`
	DryRun  bool     `json:"dry_run"`
	Scanned int64    `json:"scanned_rows"`
	// Events counts what was (or, in a dry run, would be) stored: new rows
	// per table, events already stored, tool events merged into an existing
	// call's row.
	Events      cortex.EventCounts `json:"events"`
	ParseErrors int64              `json:"parse_errors"`
	// Truncated is set when Limit stopped the scan before the last row;
	// continue with AfterID = LastID.
	Truncated bool  `json:"truncated"`
	LastID    int64 `json:"last_id"`
	// VoicesRead counts user events read again by this binary's voice
	// rules (pending backfills only).
	VoicesRead int64 `json:"voices_read,omitempty"`
	// CallFactsDerived counts tool calls whose facts this binary's rules
	// derived again (pending backfills only).
	CallFactsDerived int64 `json:"call_facts_derived,omitempty"`
	// ClaimsRead counts assistant rows whose claims this binary's rules
	// read again (pending backfills only).
	ClaimsRead int64    `json:"claims_read,omitempty"`
	Elapsed    Duration `json:"elapsed"`
	Errors     []string `json:"errors,omitempty"`
	// SkillBodies reports the skill-body pass (kind bodies).
	SkillBodies *SkillBodyResult `json:"skill_bodies,omitempty"`
}

// Backfill rebuilds events from the records stored in the database (not
// from transcript files, which may be gone): a keyset scan by row id in
// batches, each batch's events written in one short transaction with
// INSERT OR IGNORE / merge semantics, so running it again adds nothing.
// Only one backfill runs at a time per database; a second one fails fast
// with code busy.
func Backfill(ctx context.Context, store BackfillStore, opts BackfillOptions) (BackfillResult, error) {
	start := time.Now()
	kinds, err := normalizeKinds(opts.Kinds)
	if err != nil {
		return BackfillResult{}, err
	}
	res := BackfillResult{Kinds: kinds, DryRun: opts.DryRun}
	if opts.Limit < 0 {
		return res, cortex.Errorf(cortex.CodeInvalid, "limit must be positive, got %d", opts.Limit)
	}
	if opts.BatchRows <= 0 {
		opts.BatchRows = 2000
	}
	if opts.Holder == "" {
		opts.Holder = "backfill"
	}
	release, err := beginMaintenance(ctx, store, &opts.Redactor, &opts.Codec, opts.Holder, opts.Hostname)
	if err != nil {
		return res, err
	}
	defer release()
	want := map[string]bool{}
	for _, k := range kinds {
		want[k] = true
	}
	roles := backfillRoles(kinds)
	var dry *sqlite.DryRun
	if opts.DryRun {
		dry = sqlite.NewDryRun()
	}
	after := opts.AfterID
	rowKinds := slices.DeleteFunc(slices.Clone(kinds), func(k string) bool { return k == KindBodies })
	for len(rowKinds) > 0 {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		n := opts.BatchRows
		if opts.Limit > 0 {
			left := int64(opts.Limit) - res.Scanned
			if left <= 0 {
				more, err := store.TranscriptRecords(ctx, after, opts.Since, roles, 1)
				if err != nil {
					return res, err
				}
				res.Truncated = len(more) > 0
				break
			}
			n = int(min(int64(n), left))
		}
		rows, err := store.TranscriptRecords(ctx, after, opts.Since, roles, n)
		if err != nil {
			return res, err
		}
		if len(rows) == 0 {
			break
		}
		recs := make([]sqlite.EventRecord, 0, len(rows))
		for _, r := range rows {
			after = r.ID
			res.Scanned++
			ev, err := extractStored(opts, r)
			if err != nil {
				res.ParseErrors++
				if len(res.Errors) < 20 {
					res.Errors = append(res.Errors, fmt.Sprintf("row %d: %v", r.ID, err))
				}
				continue
			}
			if !want[KindSkills] {
				ev.Skills = nil
			}
			if !want[KindTools] {
				ev.Tools = nil
			}
			if !want[KindHooks] {
				ev.Hooks = nil
			}
			if !want[KindUsers] {
				ev.Users = nil
			}
			if ev.Empty() {
				continue
			}
			recs = append(recs, sqlite.EventRecord{LogID: r.ID, Hostname: r.Hostname, Entry: r.Entry, Events: ev})
		}
		if len(recs) > 0 {
			c, err := store.StoreEvents(ctx, recs, dry)
			if err != nil {
				return res, err
			}
			res.Events.Add(c)
		}
		res.LastID = after
		if opts.Progress != nil {
			opts.Progress(BackfillProgress{Scanned: res.Scanned, LastID: after})
		}
	}
	if want[KindBodies] && !res.Truncated {
		bs, ok := store.(SkillBodyStore)
		if !ok {
			return res, cortex.Errorf(cortex.CodeInternal, "this store keeps no skill bodies")
		}
		b, err := ResolveSkillBodies(ctx, bs, SkillBodyOptions{All: true, DryRun: opts.DryRun, Codec: opts.Codec})
		if err != nil {
			return res, err
		}
		res.SkillBodies = &b
	}
	res.Elapsed = Duration(time.Since(start))
	if c, ok := store.(pendingClearer); ok && !opts.DryRun && !res.Truncated && opts.AfterID == 0 && opts.Since.IsZero() {
		for _, k := range kinds {
			if err := c.ClearPendingBackfill(ctx, k); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// pendingClearer is a store that records which migrations' backfills ran.
type pendingClearer interface {
	ClearPendingBackfill(ctx context.Context, kind string) error
}

// PendingStore is a store whose migrations can ask for a backfill.
type PendingStore interface {
	BackfillStore
	pendingClearer
	PendingBackfills(ctx context.Context) ([]string, error)
}

// BackfillPending runs the backfills that migrations asked for (event
// kinds added after rows were stored), once: a complete run clears them.
// It returns a zero result and ran=false when nothing is pending.
func BackfillPending(ctx context.Context, db PendingStore, opts BackfillOptions) (res BackfillResult, ran bool, err error) {
	kinds, err := db.PendingBackfills(ctx)
	if err != nil {
		return res, false, err
	}
	if len(kinds) > 0 {
		opts.Kinds, opts.AfterID, opts.Limit, opts.Since, opts.DryRun = kinds, 0, 0, time.Time{}, false
		if res, err = Backfill(ctx, db, opts); err != nil {
			return res, true, err
		}
		ran = true
	}
	if vs, ok := db.(VoiceStore); ok {
		n, err := RefreshVoices(ctx, vs, opts)
		res.VoicesRead = n
		ran = ran || n > 0
		if err != nil {
			return res, ran, err
		}
	}
	if cs, ok := db.(CallFactsStore); ok {
		n, err := RefreshCallFacts(ctx, cs, opts)
		res.CallFactsDerived = n
		ran = ran || n > 0
		if err != nil {
			return res, ran, err
		}
	}
	if cs, ok := db.(ClaimStore); ok {
		n, err := RefreshClaims(ctx, cs, opts)
		res.ClaimsRead = n
		ran = ran || n > 0
		if err != nil {
			return res, ran, err
		}
	}
	return res, ran, nil
}

// VoiceStore is a store of user events with their stored readings.
type VoiceStore interface {
	StaleVoices(ctx context.Context, version int, after int64, limit int) ([]sqlite.UserAct, error)
	SetVoices(ctx context.Context, readings []sqlite.VoiceReading) error
	locker
}

// RefreshVoices reads again the user events whose stored reading is
// missing or of other rules than this binary's (voice.Version), in
// batches of one transaction each, and returns how many it read. It runs
// under the backfill lock.
func RefreshVoices(ctx context.Context, db VoiceStore, opts BackfillOptions) (int64, error) {
	return refreshStale(ctx, db, opts, voice.Version, db.StaleVoices, func(a sqlite.UserAct) int64 { return a.ID },
		func(a sqlite.UserAct) sqlite.VoiceReading {
			r := sqlite.VoiceReading{ID: a.ID, Version: voice.Version}
			if a.Text != "" {
				r.Voice = voice.Encode(voice.Read(a.Text, nil))
			}
			return r
		}, db.SetVoices)
}

// CallFactsStore is a store of tool calls with their stored facts.
type CallFactsStore interface {
	StaleCallFacts(ctx context.Context, version int, after int64, limit int) ([]sqlite.StaleCall, error)
	SetCallFacts(ctx context.Context, facts []sqlite.CallFacts) error
	locker
}

// RefreshCallFacts derives again the facts of the tool calls whose stored
// facts are missing or of other rules than this binary's
// (toolcall.Version), in batches of one transaction each, and returns how
// many it derived. It runs under the backfill lock.
func RefreshCallFacts(ctx context.Context, db CallFactsStore, opts BackfillOptions) (int64, error) {
	return refreshStale(ctx, db, opts, toolcall.Version, db.StaleCallFacts, func(c sqlite.StaleCall) int64 { return c.ID },
		func(c sqlite.StaleCall) sqlite.CallFacts {
			return sqlite.CallFacts{ID: c.ID, Facts: toolcall.Read(c.Call), Version: toolcall.Version}
		}, db.SetCallFacts)
}

// ClaimStore is a store of assistant rows with their stored claims.
type ClaimStore interface {
	StaleClaims(ctx context.Context, version int, after int64, limit int) ([]sqlite.StaleClaim, error)
	SetClaims(ctx context.Context, readings []sqlite.ClaimReading) error
	locker
}

// RefreshClaims reads again the claims of the assistant rows whose stored
// claims are missing or of other rules than this binary's (claim.Version),
// in batches of one transaction each, and returns how many it read. It
// runs under the backfill lock.
func RefreshClaims(ctx context.Context, db ClaimStore, opts BackfillOptions) (int64, error) {
	return refreshStale(ctx, db, opts, claim.Version, db.StaleClaims, func(r sqlite.StaleClaim) int64 { return r.ID },
		func(r sqlite.StaleClaim) sqlite.ClaimReading {
			return sqlite.ClaimReading{ID: r.ID, Kinds: claim.Of(r.Role, r.Text), Version: claim.Version}
		}, db.SetClaims)
}

// refreshStale derives again, with derive, the stored values that stale
// (a store's listing by rules version, after an id, at most limit) returns
// as not of this version, stores them with set, and returns how many (see
// refresh).
func refreshStale[S, R any](ctx context.Context, db locker, opts BackfillOptions, version int,
	stale func(ctx context.Context, version int, after int64, limit int) ([]S, error),
	id func(S) int64, derive func(S) R, set func(ctx context.Context, values []R) error) (int64, error) {
	someStale := func() (bool, error) {
		found, err := stale(ctx, version, 0, 1)
		return len(found) > 0, err
	}
	return refresh(ctx, db, opts, someStale, func(after int64, limit int) (int, int64, error) {
		found, err := stale(ctx, version, after, limit)
		if err != nil || len(found) == 0 {
			return 0, after, err
		}
		values := make([]R, len(found))
		for i, f := range found {
			values[i], after = derive(f), id(f)
		}
		return len(found), after, set(ctx, values)
	})
}

// refreshBatch is how many stored derivations one refresh transaction
// writes.
const refreshBatch = 2000

// refresh runs batch (which derives again up to limit stale values after
// an id, stores them and returns how many and the last id) until nothing
// is stale, under the backfill lock, taken only when stale says something
// is.
func refresh(ctx context.Context, db locker, opts BackfillOptions, stale func() (bool, error),
	batch func(after int64, limit int) (int, int64, error)) (int64, error) {
	if found, err := stale(); err != nil || !found {
		return 0, err
	}
	if opts.Holder == "" {
		opts.Holder = "backfill"
	}
	release, err := db.AcquireLock(ctx, "event backfill", opts.Holder, os.Getpid(), opts.Hostname, proc.Alive, 6*time.Hour)
	if err != nil {
		return 0, err
	}
	defer release()
	var total, after int64
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n, last, err := batch(after, refreshBatch)
		after = last
		total += int64(n)
		if err != nil || n == 0 {
			return total, err
		}
		if opts.Progress != nil {
			opts.Progress(BackfillProgress{Scanned: total, LastID: after})
		}
	}
}

// extractStored rebuilds a stored record's events exactly as ingest did:
// the stored raw JSON is already redacted; extracted free text is
// redacted again.
func extractStored(opts BackfillOptions, r sqlite.StoredRecord) (cortex.Events, error) {
	raw, err := opts.Codec.Decode(r.Raw)
	if err != nil {
		return cortex.Events{}, err
	}
	if len(raw) == 0 {
		return cortex.Events{}, nil
	}
	ev, err := transcript.ExtractEvents(r.Entry.Tool, &r.Entry, raw)
	if err != nil {
		return cortex.Events{}, err
	}
	RedactEvents(opts.Redactor, &ev)
	ReadVoices(&ev)
	return ev, nil
}

func normalizeKinds(kinds []string) ([]string, error) {
	if len(kinds) == 0 {
		return EventKinds(), nil
	}
	seen := map[string]bool{}
	var out []string
	for _, k := range kinds {
		k = strings.ToLower(strings.TrimSpace(k))
		switch k {
		case "skill", "skills":
			k = KindSkills
		case "mcp", "mcp-events", "tools", "tool":
			k = KindTools
		case "hook", "hooks":
			k = KindHooks
		case "user", "users":
			k = KindUsers
		case "body", "bodies", "versions", "skill-bodies":
			k = KindBodies
		default:
			return nil, cortex.Errorf(cortex.CodeInvalid, "unknown event kind %q (use skills, mcp, hooks, users or bodies)", k)
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

// locker takes the store's single-flight maintenance lock.
type locker interface {
	AcquireLock(ctx context.Context, name, holder string, pid int, host string, alive func(int) bool, staleAfter time.Duration) (func(), error)
}

// beginMaintenance fills the defaults a maintenance run over the stored
// records shares (the rules, the raw-record codec) and takes the
// single-flight lock that backfill and rescan share: one of them at a
// time per database, a second fails fast with code busy.
func beginMaintenance(ctx context.Context, store locker, red **redact.Redactor, codec **rawcodec.Codec, holder, host string) (func(), error) {
	if *red == nil {
		*red = redact.New()
	}
	if *codec == nil {
		c, err := rawcodec.New()
		if err != nil {
			return nil, err
		}
		*codec = c
	}
	return store.AcquireLock(ctx, "event backfill", holder, os.Getpid(), host, proc.Alive, 6*time.Hour)
}
