package incident

import (
	"context"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/store"
)

// Bounds of the per-session reads.
const (
	sessionUserRowsCap    = 2_000
	sessionToolCallsCap   = 10_000
	sessionSkillEventsCap = 10_000
)

// sessionView is what the user-voice lenses read of one session: every act
// of the human and every skill event (both small), scoped into skill runs.
// Tool calls are read per span (calls), as they are many.
type sessionView struct {
	scope   store.SessionScope
	project string
	acts    []act
	skills  []store.SessionSkill
	runs    []*skillRun
	// truncated is set when a cap cut the session's acts or skill events.
	truncated bool
}

// voiceReader reads sessions for one engine pass: the abuse terms, and the
// store's known skill names (read once, only when an announced skill needs
// them).
type voiceReader struct {
	db    Store
	known map[string]bool
	// claimsCurrent caches Store.ClaimsCurrent for this pass (nil: not
	// asked yet).
	claimsCurrent *bool
}

func newVoiceReader(db Store) *voiceReader {
	return &voiceReader{db: db}
}

// sessions reads whole sessions (their acts and skill events, many
// sessions per query) and scopes their runs, in the order given.
func (v *voiceReader) sessions(ctx context.Context, scopes []store.SessionScope) ([]*sessionView, error) {
	acts, err := v.db.SessionsUserActs(ctx, scopes, sessionUserRowsCap+1)
	if err != nil {
		return nil, err
	}
	skills, err := v.db.SessionsSkillEvents(ctx, scopes, sessionSkillEventsCap+1)
	if err != nil {
		return nil, err
	}
	out := make([]*sessionView, len(scopes))
	for i, s := range scopes {
		if out[i], err = v.view(ctx, s, acts[s], skills[s]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// view scopes a session's runs from its acts and skill events.
func (v *voiceReader) view(ctx context.Context, s store.SessionScope, rows []store.UserAct, skills []store.SessionSkill) (*sessionView, error) {
	sv := &sessionView{scope: s, skills: skills}
	if len(rows) > sessionUserRowsCap {
		rows, sv.truncated = rows[:sessionUserRowsCap], true
	}
	sv.acts = toActs(rows)
	if len(sv.skills) > sessionSkillEventsCap {
		sv.skills, sv.truncated = sv.skills[:sessionSkillEventsCap], true
	}
	var known map[string]bool
	for _, e := range sv.skills {
		if e.Kind == cortex.SkillCodexAnnounced {
			if v.known == nil {
				var err error
				if v.known, err = v.db.KnownSkillNames(ctx); err != nil {
					return nil, err
				}
			}
			known = v.known
			break
		}
	}
	for _, e := range sv.skills {
		if e.Project != "" {
			sv.project = e.Project
		}
	}
	sv.runs = buildRuns(sv.skills, sv.acts, known)
	return sv, nil
}

// callRead is a span of a session's calls to read (see callsMany).
type callRead struct {
	sv       *sessionView
	from, to time.Time
	threads  []string
}

// callsMany reads and classifies the tool calls of many spans (many per
// query) from their stored facts: for each span, the calls made in [from,
// to] (a zero time leaves a side open) of its threads (all when none).
func (v *voiceReader) callsMany(ctx context.Context, reads []callRead) ([][]tcall, error) {
	ws := make([]store.CallWindow, len(reads))
	for i, r := range reads {
		ws[i] = store.CallWindow{Scope: r.sv.scope, From: r.from, To: r.to, Threads: r.threads}
	}
	got, err := v.db.SessionCallFactsMany(ctx, ws, sessionToolCallsCap)
	if err != nil {
		return nil, err
	}
	out := make([][]tcall, len(reads))
	for i, cs := range got {
		if out[i], err = classifyRead(ctx, v.db, cs, reads[i].sv.acts); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// lastActivity is the last instant of the run's scope that shows the
// agent working: its last skill event, call or act in its thread.
func lastActivity(r *skillRun, acts []act, calls []tcall) time.Time {
	last := r.LastLive
	for _, c := range calls {
		if c.Thread == r.Thread && r.covers(c.Timestamp) && c.Timestamp.After(last) {
			last = c.Timestamp
		}
		if c.Thread == r.Thread && !c.ResultTimestamp.IsZero() && r.covers(c.ResultTimestamp) && c.ResultTimestamp.After(last) {
			last = c.ResultTimestamp
		}
	}
	for _, a := range acts {
		if a.Thread == r.Thread && r.covers(a.At) && a.At.After(last) {
			last = a.At
		}
	}
	return last
}
