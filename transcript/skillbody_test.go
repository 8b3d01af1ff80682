package transcript

import (
	"fmt"
	"strings"
	"testing"
)

func TestSkillBody(t *testing.T) {
	// Excerpts of real skill loads (../shared/corpus/real): the marvin
	// plugin body Claude Code 2.1 injected for the Skill call with args
	// "work" (entireio-skills 7c/daf836fa0f), the bundled verify skill
	// whose "## User Request" section ends in its $ARGUMENTS, and the
	// using-entire SKILL.md as Codex printed it (with front matter).
	marvin := "Base directory for this skill: /Users/alisha/Projects/marvin/plugin/skills/marvin\n\n# Marvin\n\n" +
		"- All commands output JSON by default unless the command is intentionally interactive.\n" +
		"- Supported agent types are `claude-code`, `codex`, and `gemini-cli`.\n\n\nARGUMENTS: work"
	verify := "Base directory for this skill: /private/tmp/claude-501/bundled-skills/2.1.165/281d2bccef1b153ba0018e899a28cf52/verify\n\n" +
		"**When in doubt, FAIL.** False PASS ships broken code.\n\n\n## User Request\n\n" +
		"Verify the Planetfall 3D world renders at http://localhost:5173 with no console errors"
	codex := "---\nname: using-entire\ndescription: Use when the user asks about Entire checkpoints\n---\n\n# Using Entire\r\n\r\nRun `entire status`.   \n"
	var longArgs string
	for i := range 30 {
		longArgs += fmt.Sprintf("step %d of the plan; ", i)
	}
	cases := []struct {
		name, text, args, want string
	}{
		{"header and ARGUMENTS trailer", marvin, "work", "# Marvin\n\n" +
			"- All commands output JSON by default unless the command is intentionally interactive.\n" +
			"- Supported agent types are `claude-code`, `codex`, and `gemini-cli`."},
		{"trailer without known args", marvin, "", "# Marvin\n\n" +
			"- All commands output JSON by default unless the command is intentionally interactive.\n" +
			"- Supported agent types are `claude-code`, `codex`, and `gemini-cli`."},
		{"trailing $ARGUMENTS", verify, "Verify the Planetfall 3D world renders at http://localhost:5173 with no console errors",
			"**When in doubt, FAIL.** False PASS ships broken code.\n\n\n## User Request"},
		{"trailing $ARGUMENTS, empty args", strings.TrimSuffix(verify,
			"Verify the Planetfall 3D world renders at http://localhost:5173 with no console errors"), "",
			"**When in doubt, FAIL.** False PASS ships broken code.\n\n\n## User Request"},
		{"args cut to MaxSkillField", "Intro.\n\n## Task\n\n" + longArgs, longArgs[:MaxSkillField], "Intro.\n\n## Task"},
		{"interior args become the placeholder", "Review PR https://github.com/o/r/pull/1234 now.\n\nThen report on https://github.com/o/r/pull/1234",
			"https://github.com/o/r/pull/1234", "Review PR $ARGUMENTS now.\n\nThen report on"},
		{"short interior args stay", "Run `marvin work` in the worktree.\n\nwork", "work", "Run `marvin work` in the worktree."},
		{"front matter, CRLF, trailing spaces", codex, "", "# Using Entire\n\nRun `entire status`."},
		{"no front matter end keeps the text", "---\nname: x\n# Body", "", "---\nname: x\n# Body"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := SkillBody(c.text, c.args); got != c.want {
				t.Errorf("SkillBody =\n%q\nwant\n%q", got, c.want)
			}
		})
	}
	// One body, one version, whatever the arguments of the run.
	a := SkillVersion(SkillBody(verify, "Verify the Planetfall 3D world renders at http://localhost:5173 with no console errors"))
	b := SkillVersion(SkillBody(strings.Replace(verify, "Verify the Planetfall 3D world renders at http://localhost:5173 with no console errors",
		"Verify the new Level 2 works", 1), "Verify the new Level 2 works"))
	if a != b || len(a) != 64 {
		t.Errorf("versions differ by arguments: %s %s", a, b)
	}
}

func TestFrontMatter(t *testing.T) {
	fm, rest, ok := FrontMatter("---\nname: deploy\ndescription: Use when deploying\n---\n# Deploy\n")
	if !ok || fm != "name: deploy\ndescription: Use when deploying\n" || rest != "# Deploy\n" {
		t.Errorf("FrontMatter = %q %q %v", fm, rest, ok)
	}
	if _, rest, ok := FrontMatter("# No front matter\n---\n"); ok || rest != "# No front matter\n---\n" {
		t.Errorf("FrontMatter without front matter = %q %v", rest, ok)
	}
}

func TestSkillReadRange(t *testing.T) {
	cases := []struct {
		cmd      string
		from, to int
	}{
		{"sed -n '1,220p' /Users/goose-guest/.codex/skills/using-entire/SKILL.md", 1, 220},
		{"sed -n '241,520p' /home/entity/.codex/plugins/cache/compound-engineering-plugin/compound-engineering/3.0.0/skills/ce-work/SKILL.md", 241, 520},
		{"cat ~/.codex/skills/x/SKILL.md", 1, 0},
		{"head -n 40 ~/.agents/skills/x/SKILL.md", 1, 40},
		{"head -80 ~/.agents/skills/x/SKILL.md", 1, 80},
		{"head ~/.agents/skills/x/SKILL.md", 1, 10},
	}
	for _, c := range cases {
		if from, to := SkillReadRange(c.cmd); from != c.from || to != c.to {
			t.Errorf("SkillReadRange(%q) = %d,%d want %d,%d", c.cmd, from, to, c.from, c.to)
		}
	}
	if !ReadComplete(1, 220, 149) || ReadComplete(1, 240, 240) || !ReadComplete(1, 0, 500) {
		t.Error("ReadComplete: a read that printed fewer lines than asked reached the end; one that printed all may not have")
	}
}

func TestShellCommandJSON(t *testing.T) {
	for args, want := range map[string]string{
		`{"cmd":"sed -n '1,220p' SKILL.md","workdir":"/x"}`:           "sed -n '1,220p' SKILL.md",
		`{"command":["bash","-lc","cat ~/.codex/skills/x/SKILL.md"]}`: "cat ~/.codex/skills/x/SKILL.md",
		`not json`: "",
	} {
		if got := ShellCommandJSON(args); got != want {
			t.Errorf("ShellCommandJSON(%s) = %q want %q", args, got, want)
		}
	}
}
