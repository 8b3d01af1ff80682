package push

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/cortexhq/cortex/claim"
	"github.com/cortexhq/cortex/store"
	"github.com/cortexhq/cortex/toolcall"
	"github.com/cortexhq/cortex/transcript"
)

// derive completes rows of t with what the team store needs and the
// pushing store does not hold as it is sent (in place, before the content
// level is applied): a logs row gets its search text (t.Derived), the full
// text of its record, from which the team store indexes the words the
// SQLite store's search file holds, and an assistant row whose stored
// claims are of other rules (or none) gets them read again (package
// claim); a tool call whose stored facts are of
// other rules (or none) gets them derived again from its full texts
// (package toolcall), so the team store classifies calls as the laptop
// does whatever texts the content level sends.
func (p *pusher) derive(t store.Table, rows [][]any) {
	switch t.Name {
	case "logs":
		facility, raw, msg := t.Index("facility"), t.Index(t.Raw), t.Index("message")
		role, kinds, version := t.Index("ai_role"), t.Index("claim"), t.Index("claim_version")
		var tr transcript.SearchTextReader
		for i, r := range rows {
			if len(r) > len(t.Columns) {
				continue // derived already (a batch sent again)
			}
			if v, ok := r[version].(int64); claim.Applies(fmt.Sprint(r[role])) && (!ok || int(v) != claim.Version) {
				text, _ := r[msg].(string)
				r[kinds], r[version] = int64(claim.Of(fmt.Sprint(r[role]), text)), int64(claim.Version)
			}
			isTranscript := r[facility] == "transcript"
			var rec []byte
			if b, ok := r[raw].([]byte); ok && isTranscript {
				rec, _ = p.codec.Decode(b)
			}
			text, _ := r[msg].(string)
			rows[i] = append(r, string(tr.RecordText(isTranscript, rec, text)))
		}
	case "ai_mcp_events":
		col := func(c string) int { return t.Index(c) }
		version, class, why, op, loads := col("facts_version"), col("class"), col("why"), col("op"), col("loads_skill")
		for _, r := range rows {
			if v, ok := r[version].(int64); ok && int(v) == toolcall.Version {
				continue
			}
			f := toolcall.Read(callOf(t, r))
			r[class], r[op], r[loads], r[version] = f.Class, f.Op, boolInt(f.LoadsSkill), int64(toolcall.Version)
			r[why] = nil
			if f.Why != "" {
				r[why] = f.Why
			}
		}
	}
}

// callOf reads what a call's facts are derived from out of a pushed row.
func callOf(t store.Table, r []any) toolcall.Call {
	str := func(c string) string {
		s, _ := r[t.Index(c)].(string)
		return s
	}
	c := toolcall.Call{ToolName: str("tool_name"), Status: str("status"), Arguments: str("arguments_json"),
		Output: str("output_preview"), ErrorText: str("error_text")}
	if v, ok := r[t.Index("is_error")].(int64); ok {
		c.IsError = v == 1
	}
	if v, ok := r[t.Index("exit_code")].(int64); ok {
		c.ExitCode = &v
	}
	return c
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// keyHash stands for a compared text a push does not send (content none):
// equal texts have equal hashes.
func keyHash(s string) string {
	if s == "" {
		return ""
	}
	h := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(h[:16])
}
