package ingest

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/rawcodec"
	"github.com/cortexhq/cortex/sqlite"
	"github.com/cortexhq/cortex/transcript"
)

// KindBodies is the backfill kind that recomputes every skill load's body
// version (the skill-body pass over all loads, not only new ones).
const KindBodies = "bodies"

// maxSkillBody bounds a stored skill body; a longer one is kept cut and
// marked incomplete.
const maxSkillBody = 256 << 10

// readWait is how long a Codex SKILL.md read may wait for its output to be
// stored (a file tailed by watch) before it counts as showing no body.
const readWait = time.Hour

// SkillBodyStore is what the skill-body pass needs from the database.
type SkillBodyStore interface {
	PendingSkillLoads(ctx context.Context, afterID int64, limit int, all bool) ([]sqlite.SkillLoad, error)
	SessionSkillEvents(ctx context.Context, s sqlite.SessionScope, limit int) ([]sqlite.SessionSkill, error)
	RawRecords(ctx context.Context, ids []int64) (map[int64]sqlite.StoredRaw, error)
	CallResults(ctx context.Context, s sqlite.SessionScope, callLogIDs []int64) (map[int64]sqlite.CallResult, error)
	NextContextRow(ctx context.Context, s sqlite.SessionScope, t time.Time, afterID int64, within time.Duration) (int64, error)
	StoreSkillBodies(ctx context.Context, ups []sqlite.SkillBodyUpdate) error
}

// SkillBodyOptions configures ResolveSkillBodies.
type SkillBodyOptions struct {
	// All recomputes every load, not only those not looked at yet.
	All bool
	// DryRun counts what would be stored and writes nothing.
	DryRun bool
	// BatchLoads bounds one read and one write transaction (default 500).
	BatchLoads int
	Codec      *rawcodec.Codec
	Now        func() time.Time
}

// SkillBodyResult reports a skill-body pass.
type SkillBodyResult struct {
	// Loads counts the load events looked at, Bodies those that showed a
	// body, Waiting the Codex reads whose output is not stored yet (looked
	// at again by the next pass).
	Loads   int `json:"loads"`
	Bodies  int `json:"bodies"`
	Waiting int `json:"waiting,omitempty"`
}

// ResolveSkillBodies ties skill load events to the body they showed (the
// skill's version): it reads each load's document from the stored records
// — a Claude skill, slash-command or invoked_skills body, a custom
// command's expansion, a Codex <skill> block, or what a Codex SKILL.md
// read printed (consecutive partial reads of one file joined) — normalizes
// it (transcript.SkillBody, with the arguments the run passed), and
// stores the body once per hash. It is idempotent and runs from the
// database alone.
func ResolveSkillBodies(ctx context.Context, db SkillBodyStore, opts SkillBodyOptions) (SkillBodyResult, error) {
	var res SkillBodyResult
	if opts.BatchLoads <= 0 {
		opts.BatchLoads = 500
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Codec == nil {
		c, err := rawcodec.New()
		if err != nil {
			return res, err
		}
		opts.Codec = c
	}
	r := &bodyResolver{db: db, opts: opts, sessions: map[sqlite.SessionScope][]sqlite.SessionSkill{}}
	var after int64
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		loads, err := db.PendingSkillLoads(ctx, after, opts.BatchLoads, opts.All)
		if err != nil || len(loads) == 0 {
			return res, err
		}
		var ups []sqlite.SkillBodyUpdate
		for _, l := range loads {
			after = l.ID
			res.Loads++
			doc, waiting, err := r.document(ctx, l)
			if err != nil {
				return res, err
			}
			if waiting {
				res.Waiting++
				continue
			}
			u := sqlite.SkillBodyUpdate{EventID: l.ID, Seen: l.Timestamp}
			if doc.body != "" {
				u.SHA256, u.Body, u.Complete = transcript.SkillVersion(doc.body), doc.body, doc.complete
				res.Bodies++
			}
			ups = append(ups, u)
		}
		if !opts.DryRun {
			if err := db.StoreSkillBodies(ctx, ups); err != nil {
				return res, err
			}
		}
		r.sessions = map[sqlite.SessionScope][]sqlite.SessionSkill{} // bounded memory per batch
	}
}

type bodyResolver struct {
	db       SkillBodyStore
	opts     SkillBodyOptions
	sessions map[sqlite.SessionScope][]sqlite.SessionSkill
}

// loadDoc is a load's normalized body and whether it is known whole.
type loadDoc struct {
	body     string
	complete bool
}

func (r *bodyResolver) session(ctx context.Context, s sqlite.SessionScope) ([]sqlite.SessionSkill, error) {
	if evs, ok := r.sessions[s]; ok {
		return evs, nil
	}
	evs, err := r.db.SessionSkillEvents(ctx, s, 100_000)
	r.sessions[s] = evs
	return evs, err
}

// raw returns the decoded original record of a row (nil when absent or
// corrupt).
func (r *bodyResolver) raw(ctx context.Context, id int64) (cortex.Tool, []byte, error) {
	m, err := r.db.RawRecords(ctx, []int64{id})
	if err != nil {
		return "", nil, err
	}
	sr, ok := m[id]
	if !ok {
		return "", nil, nil
	}
	raw, err := r.opts.Codec.Decode(sr.Raw)
	if err != nil {
		return sr.Tool, nil, nil // a corrupt record shows no body
	}
	return sr.Tool, raw, nil
}

// document finds what a load showed. waiting is set for a Codex read whose
// output is not stored yet.
func (r *bodyResolver) document(ctx context.Context, l sqlite.SkillLoad) (loadDoc, bool, error) {
	s := l.Scope()
	switch l.Kind {
	case cortex.SkillClaudeBody, cortex.SkillClaudeSlash, cortex.SkillCodexBlock, cortex.SkillClaudeInvoked:
		tool, raw, err := r.raw(ctx, l.LogID)
		if err != nil || raw == nil {
			return loadDoc{}, false, err
		}
		var text string
		var ok bool
		if l.Kind == cortex.SkillClaudeInvoked {
			text, ok = transcript.InvokedSkillText(raw, l.Skill, maxSkillBody+1)
		} else {
			text, ok = transcript.SkillDocText(tool, raw, maxSkillBody+1)
		}
		if !ok {
			return loadDoc{}, false, nil
		}
		evs, err := r.session(ctx, s)
		if err != nil {
			return loadDoc{}, false, err
		}
		return normalized(text, loadArgs(l, evs), true), false, nil
	case cortex.SkillClaudeCommand:
		id, err := r.db.NextContextRow(ctx, s, l.Timestamp, l.LogID, 5*time.Second)
		if err != nil || id == 0 {
			return loadDoc{}, false, err
		}
		tool, raw, err := r.raw(ctx, id)
		if err != nil || raw == nil || transcript.IsSkillBodyRecord(raw) {
			// A typed skill command: its body event carries the version.
			return loadDoc{}, false, err
		}
		text, ok := transcript.SkillDocText(tool, raw, maxSkillBody+1)
		if !ok {
			return loadDoc{}, false, nil
		}
		return normalized(text, l.Meta["args"], true), false, nil
	case cortex.SkillCodexRead:
		return r.read(ctx, l)
	}
	return loadDoc{}, false, nil
}

func normalized(text, args string, complete bool) loadDoc {
	if len(text) > maxSkillBody {
		text, complete = cortex.CutUTF8(text, maxSkillBody), false
	}
	return loadDoc{body: transcript.SkillBody(text, args), complete: complete}
}

// loadArgs returns the arguments the run passed to the skill a body
// belongs to: the Skill call's args for a Claude body, the typed command's
// for a slash-command body or an invoked_skills re-injection (the latest
// of the session before it).
func loadArgs(l sqlite.SkillLoad, evs []sqlite.SessionSkill) string {
	switch l.Kind {
	case cortex.SkillClaudeBody:
		src := l.Meta["source_tool_use_id"]
		for _, e := range evs {
			if e.Kind == cortex.SkillClaudeTool && src != "" && e.Meta["tool_use_id"] == src {
				return e.Meta["args"]
			}
		}
	case cortex.SkillClaudeSlash, cortex.SkillClaudeInvoked:
		args := ""
		for _, e := range evs {
			if e.Timestamp.After(l.Timestamp) {
				break
			}
			if e.Skill == l.Skill && (e.Kind == cortex.SkillClaudeCommand || e.Kind == cortex.SkillClaudeTool) {
				args = e.Meta["args"]
			}
		}
		return args
	}
	return ""
}

// readPiece is what one Codex SKILL.md read printed.
type readPiece struct {
	from, to int
	text     string
}

// read resolves a Codex SKILL.md read: its output, joined with the earlier
// reads of the same file in the session when this one continues them
// (sed -n '241,520p' after '1,240p').
func (r *bodyResolver) read(ctx context.Context, l sqlite.SkillLoad) (loadDoc, bool, error) {
	evs, err := r.session(ctx, l.Scope())
	if err != nil {
		return loadDoc{}, false, err
	}
	var chain []sqlite.SessionSkill
	for _, e := range evs {
		if e.Kind == cortex.SkillCodexRead && e.Path == l.Path && e.ID <= l.ID {
			chain = append(chain, e)
		}
	}
	if !slices.ContainsFunc(chain, func(e sqlite.SessionSkill) bool { return e.ID == l.ID }) {
		chain = append(chain, l.SessionSkill)
	}
	ids := make([]int64, len(chain))
	for i, e := range chain {
		ids[i] = e.LogID
	}
	results, err := r.db.CallResults(ctx, l.Scope(), ids)
	if err != nil {
		return loadDoc{}, false, err
	}
	piece := func(e sqlite.SessionSkill) (readPiece, bool, error) {
		cr, ok := results[e.LogID]
		if !ok {
			return readPiece{}, false, nil
		}
		_, raw, err := r.raw(ctx, cr.ResultLogID)
		if err != nil || raw == nil {
			return readPiece{}, false, err
		}
		text, ok := transcript.SkillDocText(cortex.ToolCodex, raw, maxSkillBody+1)
		if !ok {
			return readPiece{}, false, nil
		}
		from, to := transcript.SkillReadRange(transcript.ShellCommandJSON(cr.Arguments))
		return readPiece{from: from, to: to, text: text}, true, nil
	}
	last, ok, err := piece(chain[len(chain)-1])
	if err != nil {
		return loadDoc{}, false, err
	}
	if !ok {
		_, stored := results[l.LogID]
		return loadDoc{}, !stored && r.opts.Now().Sub(l.Timestamp) < readWait, nil
	}
	// Walk back through the earlier reads while they end right before
	// what is joined so far.
	text, from := last.text, last.from
	for i := len(chain) - 2; i >= 0 && from > 1; i-- {
		p, ok, err := piece(chain[i])
		if err != nil {
			return loadDoc{}, false, err
		}
		if !ok || p.to != from-1 || lineCount(p.text) != p.to-p.from+1 {
			continue
		}
		text, from = p.text+"\n"+text, p.from
	}
	complete := from == 1 && transcript.ReadComplete(last.from, last.to, lineCount(last.text)) &&
		!strings.Contains(last.text, "tokens truncated")
	return normalized(text, "", complete), false, nil
}

func lineCount(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(strings.TrimRight(s, "\n"), "\n") + 1
}
