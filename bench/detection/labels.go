// Package detection measures the incident lenses against labelled real
// transcripts: each label says, for a moment of a session (its lines), what
// a careful reader found there — a lens, a subject, whether an incident is
// expected, and which line holds the user's decisive words. Score compares
// the incidents the engine reports with the labels (precision, recall and
// how often the decisive words are in the default answer, per lens and per
// source repository); Run indexes the labelled corpora and scores them.
package detection

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cortexhq/cortex"
)

// Label is one line of a labels file: a moment of a session (Expected
// set) or the record that a file was read whole (Reviewed).
type Label struct {
	// Corpus names the corpus the file belongs to ("real", "collected");
	// File is its path relative to that corpus's root.
	Corpus string `json:"corpus"`
	File   string `json:"file"`
	// Repo is the source repository; empty: derived from File (see
	// RepoOf).
	Repo    string `json:"repo,omitempty"`
	Session string `json:"session,omitempty"`
	// Lens and Subject: friction, skill (the skill), mcp (server or
	// server/tool), hook (event or name), abuse.
	Lens    string `json:"lens,omitempty"`
	Subject string `json:"subject,omitempty"`
	// Expected says whether an incident must be found there (false: a
	// moment that must not be reported).
	Expected *bool `json:"expected,omitempty"`
	// Lines are the moment's lines: 1-based lines of a JSONL file, or a
	// Gemini chat document's 1-based message indexes.
	Lines []int64 `json:"lines,omitempty"`
	// DecisiveLine holds the user's own words that show what was wrong
	// (nil: there are none, as in a loop nobody commented on).
	DecisiveLine *int64 `json:"decisive_line,omitempty"`
	Kind         string `json:"kind,omitempty"`
	Lang         string `json:"lang,omitempty"`
	Why          string `json:"why,omitempty"`
	Doubt        string `json:"doubt,omitempty"`
	// Reviewed marks a file read whole; TypedPrompts is how many typed
	// prompts the reader counted in it.
	Reviewed     bool   `json:"reviewed,omitempty"`
	TypedPrompts int    `json:"typed_prompts,omitempty"`
	Notes        string `json:"notes,omitempty"`
}

// Moment reports whether the label is a moment (not a review record).
func (l Label) Moment() bool { return l.Expected != nil }

// Positive reports whether the label expects an incident.
func (l Label) Positive() bool { return l.Expected != nil && *l.Expected }

// RepoOf is the source repository of a label: its Repo, else the first
// folder of its file — the second under an agent folder (claude/, codex/,
// gemini/, as ../shared/corpus/real is laid out).
func RepoOf(l Label) string {
	if l.Repo != "" {
		return l.Repo
	}
	parts := strings.Split(l.File, "/")
	if len(parts) > 1 && slices.Contains([]string{"claude", "codex", "gemini"}, parts[0]) {
		return parts[1]
	}
	return parts[0]
}

// Lenses are the lens names a label may name.
var Lenses = []string{cortex.LensFriction, cortex.LensSkill, cortex.LensMCP, cortex.LensHook, cortex.LensAbuse}

// ReadLabels reads a labels file (JSON Lines; blank lines and lines
// starting with # are skipped). name is used in errors. Every label must
// name a corpus and a file; a moment must name a known lens and at least
// one line, and its decisive line, when given, must be one of them or come
// after them.
func ReadLabels(r io.Reader, name string) ([]Label, error) {
	var out []Label
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var l Label
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, cortex.Errorf(cortex.CodeInvalid, "%s:%d: %v", name, n, err)
		}
		if err := l.validate(); err != nil {
			return nil, cortex.Errorf(cortex.CodeInvalid, "%s:%d: %v", name, n, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, cortex.WrapError(cortex.CodeInvalid, err, "%s: %v", name, err)
	}
	return out, nil
}

func (l Label) validate() error {
	switch {
	case l.Corpus == "":
		return fmt.Errorf("no corpus")
	case l.File == "":
		return fmt.Errorf("no file")
	case l.Reviewed:
		return nil
	case l.Expected == nil:
		return fmt.Errorf("neither a moment (expected) nor a review record (reviewed)")
	case !slices.Contains(Lenses, l.Lens):
		return fmt.Errorf("unknown lens %q (use %s)", l.Lens, strings.Join(Lenses, ", "))
	case len(l.Lines) == 0:
		return fmt.Errorf("a moment needs its lines")
	}
	return nil
}
