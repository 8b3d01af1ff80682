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
}

func newVoiceReader(db Store) *voiceReader {
	return &voiceReader{db: db}
}

// session reads one session's acts and skill events and scopes its runs.
func (v *voiceReader) session(ctx context.Context, s store.SessionScope) (*sessionView, error) {
	rows, err := v.db.SessionUserActs(ctx, s, time.Time{}, time.Time{}, sessionUserRowsCap+1)
	if err != nil {
		return nil, err
	}
	sv := &sessionView{scope: s}
	if len(rows) > sessionUserRowsCap {
		rows, sv.truncated = rows[:sessionUserRowsCap], true
	}
	sv.acts = toActs(rows)
	if sv.skills, err = v.db.SessionSkillEvents(ctx, s, sessionSkillEventsCap+1); err != nil {
		return nil, err
	}
	if len(sv.skills) > sessionSkillEventsCap {
		sv.skills, sv.truncated = sv.skills[:sessionSkillEventsCap], true
	}
	var known map[string]bool
	for _, e := range sv.skills {
		if e.Kind == cortex.SkillCodexAnnounced {
			if v.known == nil {
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

// calls reads and classifies the session's tool calls in [from, to] (the
// zero time leaves a side open); with need set, only the calls made at a
// time it needs are classified (see classifyCalls).
func (v *voiceReader) calls(ctx context.Context, sv *sessionView, from, to time.Time, need func(time.Time) bool) ([]tcall, bool, error) {
	cs, err := v.db.SessionCalls(ctx, sv.scope, from, to, sessionToolCallsCap+1)
	if err != nil {
		return nil, false, err
	}
	truncated := len(cs) > sessionToolCallsCap
	if truncated {
		cs = cs[:sessionToolCallsCap]
	}
	return classifyCalls(cs, sv.acts, need), truncated, nil
}

// callTimes reads when, where and in which thread the session's calls in
// [from, to] ran, and which call each is, without their texts and
// unclassified (Class empty): for readers of the calls' timing only.
func (v *voiceReader) callTimes(ctx context.Context, sv *sessionView, from, to time.Time) ([]tcall, bool, error) {
	cs, err := v.db.SessionCallTimes(ctx, sv.scope, from, to, sessionToolCallsCap+1)
	if err != nil {
		return nil, false, err
	}
	truncated := len(cs) > sessionToolCallsCap
	if truncated {
		cs = cs[:sessionToolCallsCap]
	}
	out := make([]tcall, len(cs))
	for i, c := range cs {
		out[i].SessionCall = c
	}
	return out, truncated, nil
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
