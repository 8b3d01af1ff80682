package claim

import "testing"

// Excerpts of assistant prose from ../shared/corpus/real (path under
// corpus/real given per case), and prose that claims nothing.
func TestRead(t *testing.T) {
	for _, c := range []struct {
		text string
		want Kinds
	}{
		// codex/planetfall-seed-signalkit/07/d253ca52d8/0/full.jsonl
		{"Playwright is not installed in the REPL environment, and the Browser control tool didn’t expose a navigation/screenshot tool in this thread.", Unavailable},
		{"That exact path doesn’t exist on disk, so I’m locating the docs repo/folder under `Documents/work` now.", Unavailable},
		// claude/entireio-cli/0e/3fdc072c53/0/full.jsonl
		{"The test is failing at line 222: `StepCount should be 0 after condensation, got 1`.", Failure},
		{"Test doesn't exist on the parent branch (it was added in #174).", Unavailable},
		// claude/planetfall-seed-signalkit/8e/da3033e7b0/3/full.jsonl
		{"The briefing dismissed (`briefing hidden: true`) but the PNG write may have errored.", Failure},
		// both kinds in one text
		{"The server isn't connected, and the last call timed out.", Unavailable | Failure},
		// typographic apostrophes and case fold
		{"THE TOOL ISN’T AVAILABLE here", Unavailable},
		// nothing claimed
		{"", 0},
		{"All 42 tests pass. The server is available at http://localhost:5173.", 0},
		{"Done. I updated the README and ran the linter.", 0},
		// word boundaries: "errored" is a word, "errorednot" is not
		{"the value errorednot is a variable name", 0},
	} {
		if got := Read(c.text); got != c.want {
			t.Errorf("Read(%q) = %b, want %b", c.text, got, c.want)
		}
	}
}

func TestKindsAndVersion(t *testing.T) {
	if !(Unavailable | Failure).Has(Failure) || Unavailable.Has(Failure) || Kinds(0).Has(0) {
		t.Error("Has")
	}
	if Phrases(Unavailable) == nil || Phrases(Failure) == nil || Phrases(Unavailable|Failure) != nil {
		t.Error("Phrases")
	}
	if Version <= 0 || Version%2 == 0 {
		t.Errorf("Version %d: must be positive and odd (never 0, which means not read)", Version)
	}
}
