package incident

import (
	"slices"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/phrase"
	"github.com/cortexhq/cortex/store"
	"github.com/cortexhq/cortex/voice"
)

// act is one thing the human did (a user event), with what their words
// say. Every lens reads the user's voice through acts: never tool output,
// injected context or a parent agent's prompt.
type act struct {
	ID      int64 // ai_user_events id
	LogID   int64
	At      time.Time
	Thread  string
	Project string
	Kind    string // cortex.User*
	Text    string
	CallID  string
	// ForToolUse marks a Claude interrupt that ends a rejected tool call
	// (the rejection is the act; the interrupt is its echo).
	ForToolUse bool
	Reading    voice.Reading
	// Norm is the normalized text (re-ask detection); markReasks
	// normalizes the text itself when it is empty.
	Norm string
}

// typed reports whether the act is words the human typed to the agent (a
// prompt or a command), the acts that start and answer turns.
func (a act) typed() bool { return a.Kind == cortex.UserPrompt || a.Kind == cortex.UserCommand }

// stops reports whether the act stops the agent: an interrupt, a refused
// tool call, or words that stop it.
func (a act) stops() bool {
	return a.Kind == cortex.UserInterrupt || a.Kind == cortex.UserRejection || a.Reading.Has(voice.Stop)
}

// corrects reports whether the act's words correct the agent (a
// correction, an undo request, the wrong target, a repeated instruction).
func (a act) corrects() bool {
	r := a.Reading
	return r.Has(voice.Correction) || r.Has(voice.Revert) || r.Has(voice.Scope) || r.Has(voice.Reminder)
}

// verdict reports whether the act is a negative verdict on the agent's
// work (strong): it stops or corrects the agent, or swears at it.
func (a act) verdict() bool { return a.stops() || a.corrects() || a.Reading.Has(voice.Abuse) }

// toActs reads stored user events: each is classified by package voice
// (prompts, commands and rejection reasons; interrupts carry no words), and
// a Claude interrupt that echoes a rejection a moment before is folded
// into it (one refusal is one act).
func toActs(rows []store.UserAct) []act {
	out := make([]act, 0, len(rows))
	for _, r := range rows {
		a := act{ID: r.ID, LogID: r.LogID, At: r.Timestamp, Thread: r.Thread, Project: r.Project, Kind: r.Kind, Text: r.Text,
			CallID: r.CallID, ForToolUse: strings.Contains(r.MetaJSON, `"for_tool_use"`) && r.Meta()["for_tool_use"] == "true"}
		if r.Source != "" && r.Source != "typed" && r.Source != "queued" {
			continue // a prompt the agent marks as not typed by the human
		}
		if a.Kind == cortex.UserPrompt && harnessNotice(a.Text) {
			continue // a background task's or teammate's message a store made before stored as a prompt
		}
		if a.Kind == cortex.UserClarify || a.Kind == cortex.UserShell {
			out = append(out, a)
			continue
		}
		if a.Text != "" {
			a.Reading = reading(r)
		}
		if a.Kind == cortex.UserInterrupt && len(out) > 0 {
			prev := &out[len(out)-1]
			if prev.Kind == cortex.UserRejection && prev.Thread == a.Thread && a.At.Sub(prev.At) <= 5*time.Second {
				continue // "[Request interrupted by user for tool use]" after a rejection
			}
		}
		out = append(out, a)
	}
	return dropRepeatedQueued(out, rows)
}

// harnessNotice reports whether a prompt's text is a message of the
// harness (a background task's completion, a teammate agent's message),
// which stores made before this version kept as typed prompts.
func harnessNotice(text string) bool {
	t := strings.TrimSpace(text)
	return strings.HasPrefix(t, "<task-notification>") || strings.HasPrefix(t, "<teammate-message")
}

// queuedRepeat bounds how long after a queued prompt its delivery (the
// same words as a prompt or a queued_command record) may come.
const queuedRepeat = 30 * time.Minute

// dropRepeatedQueued drops the queued prompts (Claude's queue-operation
// records) whose words the session repeats later as a delivered prompt:
// one message is one act, at the time the agent received it.
func dropRepeatedQueued(acts []act, rows []store.UserAct) []act {
	queued := map[int64]bool{}
	for _, r := range rows {
		if r.Source == "queued" {
			queued[r.ID] = true
		}
	}
	if len(queued) == 0 {
		return acts
	}
	out := acts[:0]
	for i, a := range acts {
		repeated := false
		if queued[a.ID] && a.Kind == cortex.UserPrompt {
			for _, b := range acts[i+1:] {
				if b.At.Sub(a.At) > queuedRepeat {
					break
				}
				if b.typed() && b.Thread == a.Thread && strings.TrimSpace(b.Text) == strings.TrimSpace(a.Text) {
					repeated = true
					break
				}
			}
		}
		if !repeated {
			out = append(out, a)
		}
	}
	return out
}

// reading is what an act says: its stored reading when this binary's
// rules made it, else read now (a store not yet refreshed, or opened
// read-only after an upgrade).
func reading(r store.UserAct) voice.Reading {
	if r.VoiceVersion == voice.Version {
		if rd, err := voice.Decode(r.Voice); err == nil {
			return rd
		}
	}
	return voice.Read(r.Text, nil)
}

// reask reports whether a asks again what the prompt before it asked: the
// same words (normalized, trailing punctuation aside, at least 3 words),
// or nearly (at least 6 words, 80% shared).
func reask(a, earlier act) bool {
	if !a.typed() || !earlier.typed() {
		return false
	}
	return reaskWords(a.Norm, earlier.Norm, func() ([]uint64, []uint64) { return words(a.Norm), words(earlier.Norm) })
}

// reaskWords is reask of two typed acts' normalized texts, with their
// word lists (see words) given lazily (they are needed only when the texts
// differ).
func reaskWords(a, earlier string, lists func() ([]uint64, []uint64)) bool {
	if a == "" || earlier == "" {
		return false
	}
	if strings.TrimRight(a, ".?! ") == strings.TrimRight(earlier, ".?! ") {
		wa, _ := lists()
		return len(wa) >= 3
	}
	wa, wb := lists()
	if len(wa) < 6 || len(wb) < 6 || 5*min(len(wa), len(wb)) < 4*max(len(wa), len(wb)) {
		return false // fewer shared words than 80% of the longer list
	}
	shared := 0
	for i, j := 0, 0; i < len(wa) && j < len(wb); {
		switch {
		case wa[i] == wb[j]:
			shared++
			i++
			j++
		case wa[i] < wb[j]:
			i++
		default:
			j++
		}
	}
	return float64(shared) >= 0.8*float64(max(len(wa), len(wb)))
}

// words returns the distinct words of a normalized text as sorted 64-bit
// hashes (FNV-1a): comparing two prompts' words is then a merge of two
// integer lists, and no word is copied.
func words(norm string) []uint64 {
	var out []uint64
	const offset, prime = 14695981039346656037, 1099511628211
	h, in := uint64(offset), false
	for i := 0; i < len(norm); i++ {
		// A word is letters a-z, digits, apostrophes and any non-ASCII
		// rune (every byte of which is >= 0x80).
		if b := norm[i]; b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '\'' || b >= 0x80 {
			h = (h ^ uint64(b)) * prime
			in = true
			continue
		}
		if in {
			out = append(out, h)
			h, in = offset, false
		}
	}
	if in {
		out = append(out, h)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// reaskWindow bounds how long after a prompt asking it again is a re-ask.
const reaskWindow = 10 * time.Minute

// markReasks returns the indexes of prompts that ask again what the
// thread's previous prompt asked, within reaskWindow.
func markReasks(acts []act) map[int]bool {
	out := map[int]bool{}
	norms := make([]string, len(acts))
	lists := make([][]uint64, len(acts))
	done := make([]bool, len(acts))
	norm := func(i int) string {
		if norms[i] == "" {
			norms[i] = acts[i].Norm
			if norms[i] == "" && acts[i].Text != "" {
				norms[i] = phrase.Normalize(acts[i].Text) // the words as typed
			}
		}
		return norms[i]
	}
	list := func(i int) []uint64 {
		if !done[i] {
			lists[i], done[i] = words(norm(i)), true
		}
		return lists[i]
	}
	for i, a := range acts {
		if !a.typed() {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			e := acts[j]
			if e.Thread != a.Thread || !e.typed() {
				continue
			}
			if a.At.Sub(e.At) <= reaskWindow && reaskWords(norm(i), norm(j), func() ([]uint64, []uint64) { return list(i), list(j) }) {
				out[i] = true
			}
			break
		}
	}
	return out
}
