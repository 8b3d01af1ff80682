package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cortexhq/cortex/internal/teststore"
	"github.com/cortexhq/cortex/lifecycle"
)

// A generated history of one skill: 16 Claude Code runs of its first
// version, 10 of which end with the user typing a plain correction (no
// stop, no refusal — "the format is wrong", "you forgot the changelog",
// "you listed merge commits, you should not"), then 20 runs of its second
// version, 2 of which do. The agent answers half of the corrections
// without conceding anything: the words alone must do. Every correction is
// a skill incident, and skill-compare says the change helped (Fisher's
// exact test, 10/16 against 2/20).
func TestSkillCompareTypedCorrections(t *testing.T) {
	dir := t.TempDir()
	corrections := []string{"the format is wrong", "you forgot the changelog", "you listed merge commits, you should not"}
	accepts := []string{"thanks, looks good", "great", "perfect, ship it"}
	day := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	n := 0
	write := func(version string, corrected bool, i int) {
		n++
		sess := fmt.Sprintf("3f1c9a60-2222-4a2b-9c1d-%012d", n)
		at := day.Add(time.Duration(n) * 24 * time.Hour)
		reply := accepts[i%len(accepts)]
		if corrected {
			reply = corrections[i%len(corrections)]
		}
		var recs []map[string]any
		parent := any(nil)
		add := func(offset time.Duration, typ string, m map[string]any) {
			uuid := fmt.Sprintf("%08x-0000-4000-8000-%012d", n, len(recs))
			r := map[string]any{"parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": "/home/dev/work/app",
				"sessionId": sess, "version": "2.1.170", "gitBranch": "main", "type": typ, "uuid": uuid,
				"timestamp": at.Add(offset).Format("2006-01-02T15:04:05.000Z")}
			for k, v := range m {
				r[k] = v
			}
			recs = append(recs, r)
			parent = uuid
		}
		msg := func(id string, content any) map[string]any {
			return map[string]any{"id": id, "type": "message", "role": "assistant", "model": "claude-opus-4-7", "content": content,
				"usage": map[string]any{"input_tokens": 6, "output_tokens": 40}}
		}
		skillTool := fmt.Sprintf("toolu_skill_%d", n)
		writeTool := fmt.Sprintf("toolu_write_%d", n)
		attr := map[string]any{"attributionSkill": "release-notes"}
		with := func(m map[string]any) map[string]any {
			for k, v := range attr {
				m[k] = v
			}
			return m
		}
		add(0, "user", map[string]any{"message": map[string]any{"role": "user", "content": "write the release notes for this week"}})
		add(3*time.Second, "assistant", map[string]any{"message": msg(fmt.Sprintf("msg_a%d", n), []any{map[string]any{
			"type": "tool_use", "id": skillTool, "name": "Skill", "input": map[string]any{"skill": "release-notes"}}})})
		add(4*time.Second, "user", map[string]any{"message": map[string]any{"role": "user", "content": []any{map[string]any{
			"tool_use_id": skillTool, "type": "tool_result", "content": "Launching skill: release-notes"}}}})
		add(5*time.Second, "user", map[string]any{"isMeta": true, "sourceToolUseID": skillTool, "message": map[string]any{
			"role": "user", "content": []any{map[string]any{"type": "text", "text": "Base directory for this skill: /home/dev/.claude/skills/release-notes\n\n" + version}}}})
		add(20*time.Second, "assistant", with(map[string]any{"message": msg(fmt.Sprintf("msg_b%d", n), []any{map[string]any{
			"type": "tool_use", "id": writeTool, "name": "Write", "input": map[string]any{"file_path": "/home/dev/work/app/NOTES.md", "content": "# Notes"}}})}))
		add(21*time.Second, "user", map[string]any{"message": map[string]any{"role": "user", "content": []any{map[string]any{
			"tool_use_id": writeTool, "type": "tool_result", "content": "File created successfully"}}}})
		add(30*time.Second, "assistant", with(map[string]any{"message": msg(fmt.Sprintf("msg_c%d", n), []any{map[string]any{
			"type": "text", "text": "The release notes are in NOTES.md."}})}))
		add(90*time.Second, "user", map[string]any{"message": map[string]any{"role": "user", "content": reply}})
		answer := "Updated."
		if corrected && i%2 == 0 {
			answer = "You're right, I'll fix that."
		}
		add(100*time.Second, "assistant", map[string]any{"message": msg(fmt.Sprintf("msg_d%d", n), []any{map[string]any{"type": "text", "text": answer}})})
		f, err := os.Create(filepath.Join(dir, sess+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		enc := json.NewEncoder(f)
		for _, r := range recs {
			if err := enc.Encode(r); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
	}
	v1 := "# release-notes\nList every commit of the week with its author."
	v2 := "# release-notes\nList the week's changes in CHANGELOG.md format, under Added/Changed/Fixed, without merge commits."
	for i := range 16 {
		write(v1, i < 10, i)
	}
	for i := range 20 {
		write(v2, i < 2, i)
	}

	db, _ := teststore.Indexed(t, dir)
	s := New(db)
	ctx := context.Background()
	c, err := s.SkillCompare(ctx, SkillCompareParams{Skill: "release-notes"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Before.Runs != 16 || c.Before.Incidents != 10 || c.After.Runs != 20 || c.After.Incidents != 2 {
		t.Fatalf("sides: before %d/%d, after %d/%d (want 10/16, 2/20): %s", c.Before.Incidents, c.Before.Runs,
			c.After.Incidents, c.After.Runs, c.Message)
	}
	if c.Verdict != lifecycle.VerdictBetter || c.PValue >= lifecycle.Significance {
		t.Fatalf("verdict %s (p = %g): %s", c.Verdict, c.PValue, c.Message)
	}
}
