package ingest

import (
	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/redact"
	"github.com/cortexhq/cortex/voice"
)

// RedactEvents redacts the free-text fields of events (arguments, outputs,
// errors, hook commands and output). Records are redacted before they are
// parsed; this second pass catches secrets that only appear once JSON
// escapes are decoded. Redaction is idempotent, so ingest and backfill
// produce the same text.
func RedactEvents(r *redact.Redactor, ev *cortex.Events) {
	for i := range ev.Tools {
		t := &ev.Tools[i]
		t.ArgumentsJSON, _ = r.String(t.ArgumentsJSON)
		t.OutputPreview, _ = r.String(t.OutputPreview)
		t.ErrorText, _ = r.String(t.ErrorText)
	}
	for i := range ev.Hooks {
		h := &ev.Hooks[i]
		h.Command, _ = r.String(h.Command)
		h.StdoutPreview, _ = r.String(h.StdoutPreview)
		h.StderrPreview, _ = r.String(h.StderrPreview)
	}
	for i := range ev.Skills {
		s := &ev.Skills[i]
		if a, ok := s.Meta["args"]; ok {
			s.Meta["args"], _ = r.String(a)
		}
	}
	for i := range ev.Users {
		ev.Users[i].Text, _ = r.String(ev.Users[i].Text)
	}
}

// ReadVoices reads what each user event says (package voice, default
// abuse terms) and keeps the encoded reading with the rules' version, so
// the lenses read it from the store instead of reading every act again.
// Run it after RedactEvents: the reading is of the stored text.
func ReadVoices(ev *cortex.Events) {
	for i := range ev.Users {
		u := &ev.Users[i]
		if u.Text != "" {
			u.Voice = voice.Encode(voice.Read(u.Text, nil))
		}
		u.VoiceVersion = voice.Version
	}
}
