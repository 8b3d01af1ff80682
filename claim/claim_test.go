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
		{"All 42 tests pass. The server is available at http://localhost:5173.", Completion},
		{"Done. I updated the README and ran the linter.", Completion},
		{"I read the README and the linter config.", 0},
		// word boundaries: "errored" is a word, "errorednot" is not
		{"the value errorednot is a variable name", 0},
	} {
		if got := Read(c.text); got != c.want {
			t.Errorf("Read(%q) = %b, want %b", c.text, got, c.want)
		}
	}
}

// The dialogue kinds: the agent conceding (in several languages), asking
// the user, saying the work is done. Written for the test, in the forms
// agents use.
func TestReadDialogue(t *testing.T) {
	for _, c := range []struct {
		text string
		want Kinds
	}{
		{"You're right — I changed the wrong file. Let me fix that.", Admission | Completion},
		{"You’re absolutely right, the flag should default to false.", Admission},
		{"Good catch: the loop never terminates when the list is empty.", Agreement},
		{"Good point — a map would be simpler here.", Agreement},
		{"My mistake, I misread the spec.", Admission},
		{"Sorry about that. I'll put the original config back.", Admission},
		{"Sorry, I can't reach that host from here.", Admission}, // an apology still: the engine weighs it with the user's words
		{"你说得对，我改错了文件。", Admission},
		{"おっしゃる通りです。修正します。", Admission},
		{"맞습니다. 제가 잘못 이해했습니다.", Admission},
		{"Tienes razón, me equivoqué de carpeta.", Admission},
		{"Você tem razão, vou corrigir.", Admission},
		{"Vous avez raison, je corrige.", Admission},
		{"Du hast recht, ich korrigiere das.", Admission},
		{"Вы правы, исправлю.", Admission},
		{"Hai ragione, correggo subito.", Admission},
		{"I updated the parser.\n\nShould I also bump the version?", Completion | Asks},
		{"Want me to open a PR?", Asks},
		{"Is this a question? No — this line is the last one.", 0},
		{"要我继续吗？", Asks},
		{"The build is fixed and all tests pass.", Completion},
		{"已经修复了这个问题。", Completion},
		{"I'll look at the failing test next.", 0},
	} {
		if got := Read(c.text); got != c.want {
			t.Errorf("Read(%q) = %06b, want %06b", c.text, got, c.want)
		}
	}
}

// An agent's reasoning reading the user's message as pushback (written
// for the test in the forms agents reason in).
func TestReadThinking(t *testing.T) {
	for text, want := range map[string]Kinds{
		"The user is pointing out that I changed the wrong flag.":                        Noted,
		"The user is questioning my claim that the cache is cleared.":                    Noted,
		"The user is saying the export still drops the last row.":                        Noted,
		"The user is seeing that even though the fix landed, the banner is still shown.": Noted,
		"The user doesn't want a new dependency.":                                        Noted,
		"I misunderstood the request; the user wanted the summary only.":                 Noted,
		"The user is right, the test never runs on CI.":                                  Noted,
		"The user wants me to add a dark mode toggle.":                                   0,
		"The user is asking about the retry policy. Let me read the client.":             0,
		"Let me check the failing test and see what the error is.":                       0,
		"The user says the deploy works now, so I can move on to the docs.":              0,
	} {
		if got := ReadThinking(text); got != want {
			t.Errorf("ReadThinking(%q) = %b, want %b", text, got, want)
		}
		if got := Of(RoleReasoning, text); got != ReadThinking(text) {
			t.Errorf("Of(reasoning, %q) = %b", text, got)
		}
	}
	if Of("user", "you're right") != 0 || !Applies(RoleProse) || Applies("tool_result") {
		t.Error("Of and Applies by role")
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
