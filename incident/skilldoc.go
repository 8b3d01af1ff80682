package incident

import (
	"context"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/rawcodec"
	"github.com/cortexhq/cortex/store"
	"github.com/cortexhq/cortex/transcript"
)

// maxSkillDoc bounds the skill document a bundle carries.
const maxSkillDoc = 32 << 10

// skillDoc finds the document a run loaded, as the transcript shows it:
// the injected body of a Claude skill load or typed skill command, the
// body a custom command expanded into (the context row right after the
// command), a Codex <skill> block, or what Codex printed reading the
// SKILL.md (several partial reads joined in order). Nil when no record
// shows it.
func skillDoc(ctx context.Context, db Store, s store.SessionScope, r *skillRun) (*cortex.SkillDoc, error) {
	var reads []store.SessionSkill
	for _, e := range r.Events {
		switch e.Kind {
		case cortex.SkillClaudeBody, cortex.SkillClaudeSlash, cortex.SkillCodexBlock:
			return docFromRows(ctx, db, r, e, []int64{e.LogID}, false)
		case cortex.SkillCodexRead:
			reads = append(reads, e)
		}
	}
	if len(reads) > 0 {
		ids := make([]int64, len(reads))
		for i, e := range reads {
			ids[i] = e.LogID
		}
		results, err := db.ResultRows(ctx, s, ids)
		if err != nil {
			return nil, err
		}
		var rows []int64
		for _, id := range ids {
			if r, ok := results[id]; ok {
				rows = append(rows, r)
			}
		}
		if len(rows) > 0 {
			return docFromRows(ctx, db, r, reads[0], rows, true)
		}
	}
	if r.Kind == SubjectCommand && len(r.Events) > 0 {
		e := r.Events[0]
		id, err := db.NextContextRow(ctx, s, e.Timestamp, e.LogID, 5*time.Second)
		if err != nil || id == 0 {
			return nil, err
		}
		return docFromRows(ctx, db, r, e, []int64{id}, false)
	}
	return nil, nil
}

// docFromRows reads the document text from rows (joined in order).
func docFromRows(ctx context.Context, db Store, r *skillRun, e store.SessionSkill, rows []int64, reads bool) (*cortex.SkillDoc, error) {
	raws, err := db.RawRecords(ctx, rows)
	if err != nil {
		return nil, err
	}
	codec, err := rawcodec.New()
	if err != nil {
		return nil, err
	}
	var parts []string
	total := 0
	for _, id := range rows {
		sr, ok := raws[id]
		if !ok {
			continue
		}
		raw, err := codec.Decode(sr.Raw)
		if err != nil {
			continue // a corrupt record: no document from it
		}
		if t, ok := transcript.SkillDocText(sr.Tool, raw, maxSkillDoc); ok {
			parts = append(parts, t)
			total += len(t)
		}
	}
	if len(parts) == 0 {
		return nil, nil
	}
	text := strings.Join(parts, "\n")
	meta, err := db.SkillEventMeta(ctx, e.ID)
	if err != nil {
		return nil, err
	}
	doc := &cortex.SkillDoc{Name: r.Name, Path: e.Path, SHA256: meta["skill_content_sha256"], Source: e.Kind, LogID: rows[0],
		Text: cortex.CutUTF8(text, maxSkillDoc), AsPrinted: reads, Truncated: len(text) > maxSkillDoc}
	return doc, nil
}
