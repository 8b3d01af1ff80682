// Package push sends a laptop's SQLite store to a team's PostgreSQL store
// (cortex push): the rows, events and session rollups that are new since
// the last push, the rows that changed or went away, and the store's
// status — in bounded transactions that each carry the store's push marks,
// so a push can be killed at any point and run again, and any number of
// laptops can push at once.
package push

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/postgres"
	"github.com/cortexhq/cortex/rawcodec"
	"github.com/cortexhq/cortex/redact"
	"github.com/cortexhq/cortex/sqlite"
	"github.com/cortexhq/cortex/store"
)

// DefaultBatchRows is how many rows one push transaction sends.
//
// Each logs row travels with the full text of its record and its word
// positions: 4,000 of them made a batch's live heap large enough that the
// garbage collector ran nearly non-stop under the 160 MiB soft limit
// (1 GB store: 154 s of CPU, 2,969 rows/s); at 1,000, 75 s and 3,518
// rows/s (docs/performance.md).
const DefaultBatchRows = 1000

// Options configure a push.
type Options struct {
	// Content is how much text to send (default store.ContentFull).
	Content store.Content
	// Hostname names the pushing machine on the team store.
	Hostname string
	// BatchRows bounds the rows of one transaction (default
	// DefaultBatchRows).
	BatchRows int
	// Progress, when set, is called after each transaction.
	Progress func(Progress)
}

// Progress reports a running push.
type Progress struct {
	Table string `json:"table"`
	Sent  int64  `json:"sent"`
	// Total is how many rows of the table this push sends.
	Total int64 `json:"total"`
}

// Result reports a push.
type Result struct {
	// Store is the team store (its URL without password).
	Store   string        `json:"store"`
	StoreNo int           `json:"store_no"`
	Content store.Content `json:"content"`
	// Reset says the rows were sent again because the content level
	// changed.
	Reset bool `json:"reset,omitempty"`
	// Inserted, Updated and Deleted count rows by table (every pushed
	// table is listed; 0 on a re-push).
	Inserted map[string]int64 `json:"inserted"`
	Updated  map[string]int64 `json:"updated"`
	Deleted  map[string]int64 `json:"deleted"`
	// Rows counts the rows sent (new, changed and deleted).
	Rows         int64   `json:"rows"`
	Transactions int     `json:"transactions"`
	Seconds      float64 `json:"seconds"`
	RowsPerSec   float64 `json:"rows_per_second"`
}

// Run pushes local to team.
func Run(ctx context.Context, local *sqlite.DB, team *postgres.DB, opts Options) (Result, error) {
	start := time.Now()
	if opts.Content == "" {
		opts.Content = store.ContentFull
	}
	if !opts.Content.Valid() {
		return Result{}, cortex.Errorf(cortex.CodeInvalid, "unknown content level %q (use full, redacted or none)", opts.Content)
	}
	if opts.BatchRows <= 0 {
		opts.BatchRows = DefaultBatchRows
	}
	res := Result{Store: team.Name(), Content: opts.Content, Inserted: map[string]int64{}, Updated: map[string]int64{},
		Deleted: map[string]int64{}}
	for _, t := range store.PushTables {
		res.Inserted[t.Name], res.Updated[t.Name], res.Deleted[t.Name] = 0, 0, 0
	}
	res.Updated["ai_sessions"] = 0
	res.Inserted[postgres.SkillBodiesTable], res.Updated[postgres.SkillBodiesTable], res.Deleted[postgres.SkillBodiesTable] = 0, 0, 0
	storeID, err := local.StoreID(ctx)
	if err != nil {
		return res, err
	}
	teamID, err := team.TeamID(ctx)
	if err != nil {
		return res, err
	}
	codec, err := rawcodec.New()
	if err != nil {
		return res, cortex.WrapError(cortex.CodeInternal, err, "raw record codec")
	}
	p := &pusher{ctx: ctx, local: local, team: team, opts: opts, storeID: storeID, res: &res, sentBodies: map[string]bool{},
		codec: codec}
	if opts.Content == store.ContentRedacted {
		p.redactor = redact.New()
	}
	for attempt := 0; ; attempt++ {
		err = p.run()
		if !errors.Is(err, postgres.ErrMoved) || attempt == 3 {
			break
		}
		// Another push of this store moved its marks: start again from
		// where it got.
	}
	if errors.Is(err, postgres.ErrMoved) {
		err = cortex.Errorf(cortex.CodeBusy, "another push of this store is running; try again")
	}
	res.Seconds = time.Since(start).Seconds()
	if res.Seconds > 0 {
		res.RowsPerSec = float64(res.Rows) / res.Seconds
	}
	if err != nil {
		return res, err
	}
	return res, local.MarkPushed(ctx, teamID, p.marks.Change)
}

type pusher struct {
	ctx      context.Context
	local    *sqlite.DB
	team     *postgres.DB
	opts     Options
	storeID  string
	redactor *redact.Redactor
	codec    *rawcodec.Codec
	res      *Result
	// marks are the team store's marks of this store, as of the last
	// batch; content the level it holds the rows at.
	marks postgres.Marks
	held  store.Content
	reset bool
	// sentBodies are the skill bodies this push has sent.
	sentBodies map[string]bool
}

func (p *pusher) run() error {
	ctx := p.ctx
	pu, err := p.team.Register(ctx, p.storeID, p.opts.Hostname)
	if err != nil {
		return err
	}
	p.res.StoreNo, p.marks, p.held = pu.StoreNo, pu.Marks, pu.Content
	reset := p.held != "" && p.held != p.opts.Content
	p.res.Reset, p.reset = reset, reset
	upTo, lastChange, err := p.local.MaxIDs(ctx)
	if err != nil {
		return err
	}
	// The level the team store holds: a reset keeps the old one until its
	// last batch, so a killed reset starts over.
	level := p.opts.Content
	if reset {
		level = p.held
	}
	for _, t := range store.PushTables {
		after := p.marks.Tables[t.Name]
		if reset {
			after = 0
		}
		total := max(0, upTo[t.Name]-after)
		var sent int64
		for {
			rows, err := p.local.ExportRows(ctx, t, after, upTo[t.Name], p.opts.BatchRows, p.skip(t)...)
			if err != nil {
				return err
			}
			if len(rows) == 0 {
				break
			}
			last := rows[len(rows)-1][0].(int64)
			b := p.batch()
			b.Content, b.Reset = level, reset
			b.Table, b.Rows = &t, p.strip(t, rows)
			if t.Name == "logs" {
				if b.Sessions, err = p.sessions(t, rows); err != nil {
					return err
				}
			}
			if err := p.bodies(&b, t, rows); err != nil {
				return err
			}
			b.To.Tables[t.Name] = max(b.To.Tables[t.Name], last)
			if err := p.apply(b); err != nil {
				return err
			}
			after, sent = last, sent+int64(len(rows))
			if p.opts.Progress != nil {
				p.opts.Progress(Progress{Table: t.Name, Sent: sent, Total: total})
			}
		}
	}
	if reset {
		// Every row was read after lastChange was: the changes up to it
		// are in what was sent.
		b := p.batch()
		b.Content, b.To.Change = p.opts.Content, lastChange
		return p.finish(b)
	}
	for p.marks.Change < lastChange {
		changes, err := p.local.Changes(ctx, p.marks.Change, lastChange, p.opts.BatchRows)
		if err != nil {
			return err
		}
		if len(changes) == 0 {
			break
		}
		b := p.batch()
		b.Content = level
		if err := p.changes(&b, changes); err != nil {
			return err
		}
		b.To.Change = changes[len(changes)-1].Seq
		if err := p.apply(b); err != nil {
			return err
		}
	}
	b := p.batch()
	b.Content = p.opts.Content
	return p.finish(b)
}

// batch starts a batch from the current marks.
func (p *pusher) batch() postgres.Batch {
	return postgres.Batch{StoreID: p.storeID, From: p.marks.Clone(), To: p.marks.Clone()}
}

// finish applies the last batch, with the store's snapshot.
func (p *pusher) finish(b postgres.Batch) error {
	snap, err := p.local.PushSnapshot(p.ctx)
	if err != nil {
		return err
	}
	if p.opts.Content == store.ContentNone {
		for i := range snap.RecentErrors {
			snap.RecentErrors[i].Preview = ""
		}
	}
	b.Snapshot = &snap
	return p.apply(b)
}

func (p *pusher) apply(b postgres.Batch) error {
	r, err := p.team.Apply(p.ctx, b)
	if err != nil {
		return err
	}
	for _, body := range b.Bodies {
		p.sentBodies[body.SHA256] = true
	}
	p.marks = b.To
	p.res.Transactions++
	for k, n := range r.Inserted {
		p.res.Inserted[k] += n
		p.res.Rows += n
	}
	for k, n := range r.Updated {
		p.res.Updated[k] += n
		if k != "ai_sessions" {
			p.res.Rows += n
		}
	}
	for k, n := range r.Deleted {
		p.res.Deleted[k] += n
		p.res.Rows += n
	}
	return nil
}

// changes adds to b the current state of the rows changes name: rows the
// team store has (id at most its mark) are sent again, or deleted when
// gone; rows it does not have yet will be sent whole.
func (p *pusher) changes(b *postgres.Batch, changes []store.Change) error {
	byTable := map[string]map[int64]bool{}
	var texts []store.SessionScope
	seen := map[store.SessionScope]bool{}
	for _, c := range changes {
		if c.Table == store.SessionTable.Name {
			if !seen[c.Session] {
				seen[c.Session] = true
				texts = append(texts, c.Session)
			}
			continue
		}
		if c.ID > p.marks.Tables[c.Table] {
			continue
		}
		if byTable[c.Table] == nil {
			byTable[c.Table] = map[int64]bool{}
		}
		byTable[c.Table][c.ID] = true
	}
	b.Changed, b.Deleted = map[string][][]any{}, map[string][]int64{}
	for _, t := range store.PushTables {
		ids := make([]int64, 0, len(byTable[t.Name]))
		for id := range byTable[t.Name] {
			ids = append(ids, id)
		}
		if len(ids) == 0 {
			continue
		}
		rows, err := p.local.ExportRowsByID(p.ctx, t, ids, p.skip(t)...)
		if err != nil {
			return err
		}
		found := map[int64]bool{}
		for _, r := range rows {
			found[r[0].(int64)] = true
		}
		for _, id := range ids {
			if !found[id] {
				b.Deleted[t.Name] = append(b.Deleted[t.Name], id)
			}
		}
		if t.Name == "logs" {
			if err := p.removedSessions(b, b.Deleted[t.Name]); err != nil {
				return err
			}
		}
		b.Changed[t.Name] = p.strip(t, rows)
		if err := p.bodies(b, t, rows); err != nil {
			return err
		}
		if t.Name == "logs" {
			s, err := p.sessions(t, rows)
			if err != nil {
				return err
			}
			b.Sessions = append(b.Sessions, s...)
		}
	}
	// Sessions whose title or first prompt changed: their rollups (a
	// session gone since is removed with its rows).
	if len(texts) > 0 {
		rows, err := p.local.ExportSessions(p.ctx, texts)
		if err != nil {
			return err
		}
		b.Sessions = append(b.Sessions, p.strip(store.SessionTable, rows)...)
	}
	return nil
}

// removedSessions adds to b the current rollups of the sessions deleted
// rows (purged on this store) belonged to, and the sessions left with no
// rows to remove.
func (p *pusher) removedSessions(b *postgres.Batch, deleted []int64) error {
	keys, err := p.team.SessionsOfRows(p.ctx, p.res.StoreNo, deleted)
	if err != nil || len(keys) == 0 {
		return err
	}
	rows, err := p.local.ExportSessions(p.ctx, keys)
	if err != nil {
		return err
	}
	left := map[store.SessionScope]bool{}
	for _, r := range rows {
		// store.SessionColumns start with the key.
		left[rowSession(r, 0, 1, 2)] = true
	}
	for _, k := range keys {
		if !left[k] {
			b.RemovedSessions = append(b.RemovedSessions, k)
		}
	}
	b.Sessions = append(b.Sessions, p.strip(store.SessionTable, rows)...)
	return nil
}

// rowSession is the session of an exported row, from its agent, session
// and host columns.
func rowSession(r []any, tool, session, host int) store.SessionScope {
	tl, _ := r[tool].(string)
	s, _ := r[session].(string)
	h, _ := r[host].(string)
	return store.SessionScope{Tool: cortex.Tool(tl), Session: s, Host: h}
}

// sessions returns the rollups of the sessions rows of logs belong to, at
// the content level.
func (p *pusher) sessions(t store.Table, rows [][]any) ([][]any, error) {
	tool, sess, host := t.Index("ai_tool"), t.Index("ai_session_id"), t.Index("hostname")
	seen := map[store.SessionScope]bool{}
	var keys []store.SessionScope
	for _, r := range rows {
		k := rowSession(r, tool, sess, host)
		if k.Tool == "" || k.Session == "" || seen[k] {
			continue
		}
		seen[k] = true
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	rows, err := p.local.ExportSessions(p.ctx, keys)
	return p.strip(store.SessionTable, rows), err
}

// bodies adds to b the skill bodies that rows of t (skill events) show and
// that the team store does not hold as this store does (all of them, once
// per push, when the content level changed), at the content level.
func (p *pusher) bodies(b *postgres.Batch, t store.Table, rows [][]any) error {
	col := t.Index("body_sha256")
	if t.Name != "ai_skill_events" || col < 0 {
		return nil
	}
	seen := map[string]bool{}
	var shas []string
	for _, r := range rows {
		if sha, _ := r[col].(string); sha != "" && !seen[sha] && !p.sentBodies[sha] {
			seen[sha] = true
			shas = append(shas, sha)
		}
	}
	if len(shas) == 0 {
		return nil
	}
	local, err := p.local.SkillBodies(p.ctx, shas, false)
	if err != nil {
		return err
	}
	held := map[string]store.SkillBody{}
	if !p.reset {
		if held, err = p.team.HeldBodies(p.ctx, p.res.StoreNo, shas); err != nil {
			return err
		}
	}
	var need []string
	for _, sha := range shas {
		l, ok := local[sha]
		h, has := held[sha]
		if ok && (!has || h.Complete != l.Complete || h.Bytes != l.Bytes || h.Lines != l.Lines || !h.FirstSeen.Equal(l.FirstSeen)) {
			need = append(need, sha)
		}
	}
	if len(need) == 0 {
		return nil
	}
	full, err := p.local.SkillBodies(p.ctx, need, true)
	if err != nil {
		return err
	}
	for _, sha := range need {
		body, ok := full[sha]
		if !ok {
			continue
		}
		switch p.opts.Content {
		case store.ContentNone:
			body.Body = ""
		case store.ContentRedacted:
			body.Body, _ = p.redactor.String(body.Body)
		}
		b.Bodies = append(b.Bodies, body)
	}
	return nil
}

// skip lists the columns of t the content level neither sends nor reads
// (a redacted push reads the records for their search text).
func (p *pusher) skip(t store.Table) []string {
	if p.opts.Content == store.ContentNone && t.Raw != "" {
		return []string{t.Raw}
	}
	return nil
}

// strip derives what a push computes for rows of t (see derive) and
// applies the content level to them (in place; derived values are texts).
func (p *pusher) strip(t store.Table, rows [][]any) [][]any {
	p.derive(t, rows)
	if p.opts.Content == store.ContentFull {
		return rows
	}
	texts := make([]int, 0, len(t.Texts)+len(t.Derived))
	for _, c := range t.Texts {
		texts = append(texts, t.Index(c))
	}
	for i := range t.Derived {
		texts = append(texts, len(t.Columns)+i)
	}
	keys := make([]int, 0, len(t.Keys))
	for _, c := range t.Keys {
		keys = append(keys, t.Index(c))
	}
	raw, meta := t.Index(t.Raw), t.Index("metadata_json")
	for _, r := range rows {
		if raw >= 0 {
			r[raw] = nil
		}
		for _, i := range texts {
			if r[i] == nil {
				continue
			}
			if p.opts.Content == store.ContentNone {
				r[i] = ""
				if i >= len(t.Columns) || !contains(t.NotNull, t.Columns[i]) {
					r[i] = nil
				}
				continue
			}
			r[i] = p.redact(r[i])
		}
		for _, i := range keys {
			if s, ok := r[i].(string); ok && p.opts.Content == store.ContentNone {
				r[i] = keyHash(s)
			} else {
				r[i] = p.redact(r[i])
			}
		}
		if meta >= 0 && r[meta] != nil {
			if p.opts.Content == store.ContentNone {
				r[meta] = dropKeys(r[meta], t.MetaTexts)
			} else {
				r[meta] = p.redact(r[meta])
			}
		}
	}
	return rows
}

func (p *pusher) redact(v any) any {
	switch s := v.(type) {
	case string:
		out, _ := p.redactor.String(s)
		return out
	case []byte:
		out, _ := p.redactor.Bytes(s)
		return out
	}
	return v
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// dropKeys removes keys from a metadata_json object.
func dropKeys(v any, keys []string) any {
	if len(keys) == 0 {
		return v
	}
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case []byte:
		s = string(x)
	default:
		return v
	}
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) != nil {
		return nil
	}
	for _, k := range keys {
		delete(m, k)
	}
	if len(m) == 0 {
		return nil
	}
	b, _ := json.Marshal(m)
	return string(b)
}
