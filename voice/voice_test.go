package voice

import (
	"slices"
	"strings"
	"testing"
)

// Messages typed by real users, from ../shared/corpus/real (session id
// prefix and agent in the comment), and the categories they must carry.
// Negatives are real messages too: push-back on someone else's code,
// acceptances, swear words in quotes.
func TestReadRealMessages(t *testing.T) {
	cases := []struct {
		origin string
		text   string
		want   []string
	}{
		{"codex 019ec66b", "i didnt ask you to rewrite it", []string{Correction}},
		{"claude 3b5a9bec (queued)", "are you trying to test it visually in chrome? you can stop. unnecessary", []string{Stop}},
		{"claude d43002f0", "no need to run tests browser test. I'll run them. Also this idea sucks for level 2. let's go back to the drawing board.",
			[]string{Stop, Revert, Dissatisfied}},
		{"codex 019efedf", "i meant for entireio/cli which we setup in this repo and configured in .entire folder", []string{Correction}},
		{"claude a88641f6", "do not commit anything", []string{Instruction}},
		{"codex 019ea8fa", "thats not how i use checkpoints either this isnt my workflow.", []string{Correction}},
		{"codex 019ea8fa", "uh i think revert any changes you have", []string{Revert, Challenge}},
		{"codex 019eb121", "these arent e skills and thats not how the skills or review work", []string{Correction}},
		{"codex 019f03e0", "also , you marked https://github.com/EntityProcess/agentv/issues/950 for deletion but that's actually a useful feature", []string{Correction}},
		{"claude 7bee0f1c", "I think you missed some places to update the version", []string{Correction}},
		{"claude 2980f52a", "letstalk about what we want first...its not what i wanted", []string{Correction}},
		{"claude 233712ad", "it didnt need the height to be so increased..but i want the width to be full", []string{Correction, Report}},
		{"gemini 4eb0784d", "no, thats not an icon thats the logo/brand text. please find the proper icon", []string{Correction, Negation}},
		{"gemini 2ccb51c5", `no it has not, it says "[Touch".  please fix syntax`, []string{Correction, Negation}},
		{"gemini 320099a3", `no, set the working dir to \M-Gemini`, []string{Correction, Negation}},
		{"gemini e71a8f00", "no, i dont see it running", []string{Correction, Negation, Report}},
		{"gemini 320099a3", "fix your startmenu shortcut, the term windows opens then closes quickly.", []string{Correction, Report}},
		{"claude d43002f0", "uh its a little too complicated", []string{Dissatisfied, Challenge}},
		{"claude d43002f0", "meh ..it just feels like too much..lets take a step back", []string{Dissatisfied}},
		{"claude 233712ad", "ew i hate all of those. it shouldnt sound so AI generated.", []string{Dissatisfied}},
		{"claude 4e46a154", "fix pr issues if real. revert readme updates. not ready to announce these yet", []string{Revert}},
		{"claude 1284c080", "ah crap we still have merge issues? parent alex/ent-221-phase-aware-git-hooks", []string{Abuse}},
		{"labelled skill-wrong-repo", "No, that's the wrong repo. I said the web repo, you are working in the api checkout.", []string{Correction, Scope, Reminder, Negation}},
		{"labelled skill-correction", "That's not what I asked. I asked you to implement it, not to write a plan. You stopped at the plan again.",
			[]string{Correction, Reminder, Contrast}},

		// Not a verdict on the agent by their words alone: the dialogue
		// decides (a report, a challenge), or nothing at all.
		{"claude 03eb5929", "I actually don't like much this idea, and I somewhat struggled with it in the clmail project.", nil},
		{"claude 1284c080", "also - I didn't see the stop hook fire?", []string{Report}},
		{"claude 839b35f7", "no, then it's good", []string{Acceptance}},
		{"claude 1284c080", `I mean this is already the "everything else PR" so why the heck not.`, []string{Challenge}},
		{"claude 1284c080", "write a comment in #172, I'll handle it over there", nil},
		{"claude a7da6a22", "Excellent work, thank you!", []string{Acceptance}},
		{"claude fe869ecb", "Wait, does it only run on main? I think we should run it on all push?", []string{Challenge}},
		{"codex 019ec66b", "Pilot, if you can read this, the ship survived, but it needs repairs. Help us fix your ship.", nil},
		{"labelled negative-quoted-words", `Add validation: return errors.New("wrong input") when the value is empty, and log "not found" for missing keys.`, []string{Report}},
		{"labelled skill-long-success", "Looks good, merge it.", []string{Acceptance}},
		{"synthetic mention", "add the word 'damn' to the list of terms", nil},
		{"synthetic mention", "swear words such as shit should be flagged", nil},
	}
	for _, c := range cases {
		got := Read(c.text, nil)
		if !slices.Equal(got.Categories, c.want) {
			t.Errorf("%s: Read(%q) = %v (phrases %q), want %v", c.origin, c.text, got.Categories, got.Phrases, c.want)
		}
	}
}

func TestContractionsRestored(t *testing.T) {
	cases := map[string]string{
		"i didnt ask":        "i didn't ask",
		"thats not how":      "that's not how",
		"im done, dont push": "i'm done, don't push",
		"didntwork":          "didntwork",
		"Doesnt":             "doesn't",
	}
	for in, want := range cases {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAbuseIntensity(t *testing.T) {
	cases := []struct {
		text string
		want int
	}{
		{"ah crap we still have merge issues?", 1},
		{"this is shit", 2},
		{"what the fuck are you doing?!", 4},
		{"fuck this shit, you broke it!!", 5},
	}
	for _, c := range cases {
		r := Read(c.text, nil)
		if r.Intensity != c.want || !r.Has(Abuse) {
			t.Errorf("Read(%q): intensity %d (terms %v), want %d", c.text, r.Intensity, r.Terms, c.want)
		}
	}
}

func TestStrongAndFriction(t *testing.T) {
	if Read("dont make any changes yet", nil).Friction() {
		t.Error("an instruction alone is not friction")
	}
	if !Read("meh", nil).Friction() {
		t.Error("a complaint about the result is friction")
	}
	if !Read("you can stop", nil).Friction() {
		t.Error("a stop is friction")
	}
	if Read("no", nil).Friction() || !Read("no", nil).Says() {
		t.Error("a bare no is a negation, decided by the dialogue")
	}
	if Read("thanks, looks good", nil).Says() {
		t.Error("an acceptance says nothing against the agent")
	}
	for _, c := range Categories() {
		strong := c == Correction || c == Stop || c == Revert || c == Scope || c == Reminder || c == Dissatisfied || c == Abuse
		if Strong(c) != strong {
			t.Errorf("Strong(%q) = %v", c, Strong(c))
		}
		if Conditional(c) != (c == Instruction || c == Negation || c == Contrast || c == Challenge || c == Report || c == Removal) {
			t.Errorf("Conditional(%q) wrong", c)
		}
	}
}

func TestUnquotedKeepsLineBreaks(t *testing.T) {
	in := "say `that's wrong`\nand \"you missed\" it"
	out := Unquoted(in)
	if strings.Count(out, "\n") != 1 || strings.Contains(out, "wrong") || strings.Contains(out, "missed") {
		t.Errorf("Unquoted(%q) = %q", in, out)
	}
	if got := Read(in, nil); len(got.Categories) != 0 {
		t.Errorf("quoted words read as the user's voice: %v", got.Categories)
	}
}

func FuzzRead(f *testing.F) {
	f.Add("i didnt ask you to rewrite it")
	f.Add("no, that's fine ``` you missed")
	f.Add("\xff\xfe“stop”")
	f.Fuzz(func(t *testing.T, text string) {
		r := Read(text, nil)
		for _, c := range r.Categories {
			if !slices.Contains(Categories(), c) {
				t.Fatalf("unknown category %q", c)
			}
		}
		if r.Has(Abuse) != (len(r.Terms) > 0) || (r.Intensity > 0) != (len(r.Terms) > 0) || r.Intensity > 5 {
			t.Fatalf("abuse fields disagree: %+v", r)
		}
	})
}
