package lifecycle

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/cortexhq/cortex"
)

// Finding is a deterministic finding of one of the skill's incidents.
type Finding struct {
	IncidentID string
	cortex.Finding
}

// Hunk is one proposed edit: lines inserted into the SKILL.md, with the
// evidence it rests on.
type Hunk struct {
	// Categories are the finding categories the edit answers.
	Categories []string `json:"categories"`
	// IncidentIDs and EvidenceIDs cite the incidents and the rows.
	IncidentIDs []string `json:"incident_ids"`
	EvidenceIDs []int64  `json:"evidence_ids"`
	// AfterLine is the line of the current file the lines go after (0:
	// the top); Anchor says why there ("after the line the finding
	// quotes", "the guardrails section").
	AfterLine int      `json:"after_line"`
	Anchor    string   `json:"anchor"`
	Lines     []string `json:"lines"`
}

// Skipped is a finding no edit was proposed for, and why.
type Skipped struct {
	Category    string   `json:"category"`
	IncidentIDs []string `json:"incident_ids"`
	Reason      string   `json:"reason"`
}

// Proposal is a set of small edits to a SKILL.md as a unified diff.
type Proposal struct {
	Skill string `json:"skill"`
	File  string `json:"file"`
	// FileSHA256 is the hash of the file the diff applies to.
	FileSHA256 string    `json:"file_sha256"`
	Source     string    `json:"source"` // deterministic or llm
	Hunks      []Hunk    `json:"hunks"`
	Skipped    []Skipped `json:"skipped"`
	// Diff is the unified diff (empty when there is nothing to change);
	// each hunk header names the categories and incidents it answers.
	Diff string `json:"diff"`
	// New is the file with the edits applied (not serialized).
	New string `json:"-"`
}

// instructions are the lines a category adds to a skill, addressed to the
// agent that follows it. Values the evidence named ({command}, {program},
// {dep}, {code}, {value}, {verb}) are safe words only (see
// findings.HintValues); transcript text never enters a skill.
var instructions = map[string]struct {
	text     string
	defaults map[string]string
}{
	"skill_did_more_than_asked": {text: "- Do only what the user asked for. Ask before optional extra steps (browser checks, full test runs, commits, pushes, follow-up work) and say how to skip them."},
	"wrong_skill_triggered":     {text: "- Use this skill only for the requests its description names. When a request could mean something else, confirm the target with the user before acting."},
	"conflicts_with_user_instruction": {text: "- Never {verb} unless the user asked for it in this conversation: the user's instructions override the steps of this skill.",
		defaults: map[string]string{"verb": "commit, push or delete anything"}},
	"missing_authentication": {text: "- Before running {command}, check that {program} is logged in (its auth status or login check). If it is not, stop and ask the user to log in; do not retry.",
		defaults: map[string]string{"command": "a command that needs an account", "program": "the tool"}},
	"missing_repository_setup": {text: "- Before running {command}, check the repository setup it needs (a git repository, an `origin` remote, an upstream branch). If something is missing, say how to set it up instead of running it.",
		defaults: map[string]string{"command": "a git or hosting command"}},
	"command_not_found": {text: "- Check that {program} is installed (`command -v`) before using it. If it is missing, give the user the install command instead of continuing.",
		defaults: map[string]string{"program": "each program this skill runs"}},
	"shell_portability":  {text: "- Keep shell snippets portable: guard globs that may match nothing (zsh stops on them), quote patterns, and avoid GNU-only flags."},
	"missing_dependency": {text: "- Requires {dep}: check that it is installed before the step that needs it, and say how to install it when it is missing.", defaults: map[string]string{"dep": "its dependencies"}},
	"tool_rejects_documented_value": {text: "- Do not pass {value}: the tool rejects it. Use only the values the tool documents.",
		defaults: map[string]string{"value": "options the tool does not document"}},
	"timeout_or_rate_limit":                  {text: "- Give slow steps an explicit timeout and wait for a specific readiness signal; retry at most once with backoff, then report what timed out."},
	"permission_denied":                      {text: "- Check the permissions each step needs before acting. Never work around a permission error with sudo or another location without asking the user."},
	"http_error_from_script":                 {text: "- Before calling an API, check that the target exists (ids, branch, URL). When a request fails ({code}), report the error and stop instead of retrying.", defaults: map[string]string{"code": "an HTTP error"}},
	"stale_file_state":                       {text: "- Read a file right before editing it, and re-read it when anything else may have changed it; do not let parallel subagents edit the same file."},
	"skill_scope_mismatch":                   {text: "- Scope: do exactly what the user asked. When they ask to implement, implement; do not stop at a plan, and do not go beyond the request."},
	"missing_prerequisite_check":             {text: "- Before you start, check credentials, the required tools and that the working directory is the right repository; stop and report anything missing."},
	"wrong_source_of_truth":                  {text: "- Confirm the source of truth before changing anything (`pwd`, `git remote -v`, the branch); do not work from a cached copy or another checkout."},
	"overly_broad_research_loop":             {text: "- If {command} fails twice, stop retrying: summarize the error and change approach or ask the user.", defaults: map[string]string{"command": "a step"}},
	"tool_policy_mismatch":                   {text: "- Use the tool or script this skill names for each step; do not substitute another one."},
	"missing_verification_step":              {text: "- Before reporting success, run the check that proves it (the tests, the live state) and quote its output."},
	"ambiguous_skill_trigger":                {text: "- Use this skill only for the requests its description names; when the user asks for something else, say so and do not run its steps."},
	"stale_or_conflicting_skill_instruction": {text: "- When a step here conflicts with the user's instructions or the repository's current state, follow the user and say which step is out of date."},
	"assistant_overexplained_simple_answer":  {text: "- Answer direct or yes/no questions first, in one or two sentences; expand only when asked."},
}

// Instruction returns the line a finding adds to a skill ("" when its
// category has none).
func Instruction(f cortex.Finding) string {
	in, ok := instructions[f.Category]
	if !ok {
		return ""
	}
	return fill(in.text, in.defaults, f.HintValues)
}

// fill puts the values a finding named into a template's {command},
// {program}, {dep}, {code}, {value} and {verb} (backquoted, except a
// verb), else the template's defaults.
func fill(t string, defaults, values map[string]string) string {
	for _, k := range []string{"command", "program", "dep", "code", "value", "verb"} {
		ph := "{" + k + "}"
		if !strings.Contains(t, ph) {
			continue
		}
		v := defaults[k]
		if x := values[k]; x != "" {
			v = x
			if k != "verb" {
				v = "`" + x + "`"
			}
		}
		t = strings.ReplaceAll(t, ph, v)
	}
	return t
}

// guardrailHeadings are section headings whose section collects rules.
var guardrailHeadings = []string{"guardrails", "rules", "constraints", "important", "guidelines", "do not", "don'ts",
	"common mistakes", "pitfalls", "notes"}

// GuardrailsHeading is the section Propose adds when the file has none.
const GuardrailsHeading = "## Guardrails"

// edit is one insertion before it is rendered.
type edit struct {
	after  int // 0-based index of the line the text goes after; -1 top
	anchor string
	lines  []string
	cats   []string
	incs   []string
	ev     []int64
}

// Propose turns a skill's findings into small edits of its SKILL.md text
// (never a rewrite): one instruction per finding category, placed after
// the line of the file the finding quotes (after the list item, paragraph
// or code block that holds it), else at the end of the file's rules
// section (Guardrails, Rules, Constraints, Important …), else in a new
// "## Guardrails" section at the end. Instructions the file already holds
// are skipped. Deterministic: the same findings and file give the same
// diff.
func Propose(skill, path, text string, fs []Finding) Proposal {
	sum := sha256.Sum256([]byte(text))
	p := Proposal{Skill: skill, File: path, FileSHA256: hex.EncodeToString(sum[:]), Source: "deterministic",
		Hunks: []Hunk{}, Skipped: []Skipped{}}
	fs = slices.DeleteFunc(slices.Clone(fs), func(f Finding) bool {
		if !Relevant(f.Finding, text) {
			p.Skipped = append(p.Skipped, Skipped{Category: f.Category, IncidentIDs: []string{f.IncidentID},
				Reason: fmt.Sprintf("the skill does not mention %s: the failing step is likely another skill's (see the incident's co-active skills)",
					"`"+failingStep(f.Finding)+"`")})
			return true
		}
		return false
	})
	// One edit per category, citing every incident that showed it.
	type group struct {
		f    cortex.Finding
		incs []string
		ev   []int64
	}
	var order []string
	groups := map[string]*group{}
	for _, f := range fs {
		g := groups[f.Category]
		if g == nil {
			g = &group{f: f.Finding}
			groups[f.Category] = g
			order = append(order, f.Category)
		}
		if !slices.Contains(g.incs, f.IncidentID) {
			g.incs = append(g.incs, f.IncidentID)
		}
		for _, id := range f.EvidenceIDs {
			if !slices.Contains(g.ev, id) {
				g.ev = append(g.ev, id)
			}
		}
		if len(g.f.HintValues) == 0 && len(f.HintValues) > 0 {
			g.f.HintValues = f.HintValues
		}
		if len(g.f.SkillQuotes) == 0 {
			g.f.SkillQuotes = f.SkillQuotes
		}
	}
	lines := splitLines(text)
	lower := strings.ToLower(text)

	var edits []edit
	var tail []edit
	for _, cat := range order {
		g := groups[cat]
		sort.Strings(g.incs)
		slices.Sort(g.ev)
		line := Instruction(g.f)
		if line == "" {
			p.Skipped = append(p.Skipped, Skipped{Category: cat, IncidentIDs: g.incs, Reason: "no edit for this category: review the evidence"})
			continue
		}
		if strings.Contains(lower, strings.ToLower(strings.TrimPrefix(line, "- "))) {
			p.Skipped = append(p.Skipped, Skipped{Category: cat, IncidentIDs: g.incs, Reason: "the file already says this"})
			continue
		}
		e := edit{lines: []string{line}, cats: []string{cat}, incs: g.incs, ev: g.ev}
		if i := quotedLine(lines, g.f); i >= 0 {
			e.after, e.anchor = blockEnd(lines, i), fmt.Sprintf("after the block holding line %d, which the finding quotes", i+1)
			e.lines = []string{indentLike(lines, i, line)}
			if openFence(lines, i) >= 0 || !isItem(lines[i]) {
				e.lines = []string{"", line} // after a table, paragraph or code block: a block of its own
			}
			edits = append(edits, e)
			continue
		}
		tail = append(tail, e)
	}
	if len(tail) > 0 {
		if end, name := rulesSection(lines); end >= 0 {
			for _, e := range tail {
				e.after, e.anchor = end, "the end of the "+name+" section"
				edits = append(edits, e)
			}
		} else {
			var ls []string
			var cats, incs []string
			var ev []int64
			for _, e := range tail {
				ls = append(ls, e.lines...)
				cats, incs, ev = append(cats, e.cats...), union(incs, e.incs), append(ev, e.ev...)
			}
			slices.Sort(ev)
			ls = append([]string{"", GuardrailsHeading, ""}, ls...)
			edits = append(edits, edit{after: len(lines) - 1, anchor: "a new " + GuardrailsHeading + " section at the end",
				lines: ls, cats: cats, incs: incs, ev: slices.Compact(ev)})
		}
	}
	p.New, p.Hunks, p.Diff = render(path, text, lines, edits)
	return p
}

func union(a, b []string) []string {
	for _, x := range b {
		if !slices.Contains(a, x) {
			a = append(a, x)
		}
	}
	sort.Strings(a)
	return a
}

// splitLines splits text into lines without their newlines.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// quotedLine finds the first line of the file a finding quotes (by its
// trimmed text) that names a value of the evidence (the failing command,
// its program, the module, the rejected value, the forbidden verb), or -1:
// a line matched only by the category's words is no evidence of where the
// edit belongs.
func quotedLine(lines []string, f cortex.Finding) int {
	for _, q := range f.SkillQuotes {
		if q.Source != "skill_doc" {
			continue
		}
		want := strings.TrimSpace(q.Text)
		if want == "" || !namesValue(want, f.HintValues) {
			continue
		}
		for i, l := range lines {
			if sameLine(l, want) {
				return i
			}
		}
	}
	return -1
}

// sameLine reports whether a file line is the line a finding quotes:
// quotes have their white space collapsed and are cut to 200 bytes with
// "…".
func sameLine(line, quote string) bool {
	l := strings.Join(strings.Fields(line), " ")
	if cut, ok := strings.CutSuffix(quote, "…"); ok && len(l) > len(cut) {
		return cut != "" && strings.HasPrefix(l, cut)
	}
	return l == quote
}

// namesValue reports whether text names one of the values.
func namesValue(text string, values map[string]string) bool {
	t := strings.ToLower(text)
	for _, v := range values {
		if v != "" && strings.Contains(t, strings.ToLower(v)) {
			return true
		}
	}
	return false
}

// failingStep is the command (else program) a finding's evidence names.
func failingStep(f cortex.Finding) string {
	if c := f.HintValues["command"]; c != "" {
		return c
	}
	return f.HintValues["program"]
}

// Relevant reports whether a finding about a failing step belongs to a
// skill whose document is doc: the document names the failing command, its
// program or the program the evidence names. Findings that name no step
// (the user's verdicts) are always relevant. When several skills are
// active, a failure is charged to each of them; only the one whose
// document drives the failing step should change.
func Relevant(f cortex.Finding, doc string) bool {
	cmd, prog := f.HintValues["command"], f.HintValues["program"]
	if cmd == "" && prog == "" {
		return true
	}
	d := strings.ToLower(doc)
	for _, v := range []string{cmd, strings.SplitN(cmd, " ", 2)[0], prog} {
		if v != "" && strings.Contains(d, strings.ToLower(v)) {
			return true
		}
	}
	return false
}

// blockEnd returns the last line of the block holding line i: the end of
// its fenced code block, of its list item (continuation lines indented
// more), or of its paragraph.
func blockEnd(lines []string, i int) int {
	if fence := openFence(lines, i); fence >= 0 {
		for j := i + 1; j < len(lines); j++ {
			if strings.HasPrefix(strings.TrimSpace(lines[j]), "```") {
				return j
			}
		}
		return len(lines) - 1
	}
	if isItem(lines[i]) {
		ind := indentOf(lines[i])
		j := i
		for j+1 < len(lines) && strings.TrimSpace(lines[j+1]) != "" && !isItem(lines[j+1]) && indentOf(lines[j+1]) > ind {
			j++
		}
		return introduced(lines, j)
	}
	j := i
	for j+1 < len(lines) && strings.TrimSpace(lines[j+1]) != "" && !isItem(lines[j+1]) &&
		!strings.HasPrefix(lines[j+1], "#") && !strings.HasPrefix(strings.TrimSpace(lines[j+1]), "```") {
		j++
	}
	return introduced(lines, j)
}

// introduced extends a block that ends with ":" over what it introduces:
// the code block, list or table after it.
func introduced(lines []string, j int) int {
	if !strings.HasSuffix(strings.TrimSpace(lines[j]), ":") {
		return j
	}
	k := j + 1
	for k < len(lines) && strings.TrimSpace(lines[k]) == "" {
		k++
	}
	if k >= len(lines) || strings.HasPrefix(strings.TrimSpace(lines[k]), "#") {
		return j
	}
	if strings.HasPrefix(strings.TrimSpace(lines[k]), "```") {
		for m := k + 1; m < len(lines); m++ {
			if strings.HasPrefix(strings.TrimSpace(lines[m]), "```") {
				return m
			}
		}
		return len(lines) - 1
	}
	for k+1 < len(lines) && strings.TrimSpace(lines[k+1]) != "" && !strings.HasPrefix(strings.TrimSpace(lines[k+1]), "#") {
		k++
	}
	return k
}

// openFence reports the line of the code fence line i is inside, or -1.
func openFence(lines []string, i int) int {
	open := -1
	for j := 0; j < i; j++ {
		if strings.HasPrefix(strings.TrimSpace(lines[j]), "```") {
			if open >= 0 {
				open = -1
			} else {
				open = j
			}
		}
	}
	return open
}

func isItem(l string) bool {
	t := strings.TrimSpace(l)
	if strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "+ ") {
		return true
	}
	n := 0
	for n < len(t) && t[n] >= '0' && t[n] <= '9' {
		n++
	}
	return n > 0 && n+1 < len(t) && (t[n] == '.' || t[n] == ')') && t[n+1] == ' '
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " \t")) }

// indentLike gives the new line the indentation of the quoted list item
// (so the edit joins the list); under a numbered step it becomes a note
// nested in that step.
func indentLike(lines []string, i int, line string) string {
	ind := indentOf(lines[i])
	t := strings.TrimSpace(lines[i])
	if n := strings.IndexAny(t, ".)"); n > 0 && strings.Trim(t[:n], "0123456789") == "" {
		ind += n + 2
	}
	return strings.Repeat(" ", ind) + line
}

// rulesSection returns the last line of the file's rules section and its
// heading, or -1.
func rulesSection(lines []string) (int, string) {
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "#") || openFence(lines, i) >= 0 {
			continue
		}
		level := len(t) - len(strings.TrimLeft(t, "#"))
		name := strings.ToLower(strings.TrimSpace(strings.TrimLeft(t, "#")))
		if !slices.ContainsFunc(guardrailHeadings, func(h string) bool { return strings.HasPrefix(name, h) }) {
			continue
		}
		end := len(lines) - 1
		for j := i + 1; j < len(lines); j++ {
			u := strings.TrimSpace(lines[j])
			if strings.HasPrefix(u, "#") && openFence(lines, j) < 0 && len(u)-len(strings.TrimLeft(u, "#")) <= level {
				end = j - 1
				break
			}
		}
		for end > i && strings.TrimSpace(lines[end]) == "" {
			end--
		}
		return end, strings.TrimSpace(strings.TrimLeft(t, "#"))
	}
	return -1, ""
}

// render applies the insertions and renders the unified diff, each hunk
// header naming what its edits answer.
func render(path, text string, lines []string, edits []edit) (string, []Hunk, string) {
	if len(edits) == 0 {
		return text, []Hunk{}, ""
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].after < edits[j].after })
	// Edits at one place become one block.
	merged := edits[:1]
	for _, e := range edits[1:] {
		last := &merged[len(merged)-1]
		if e.after != last.after {
			merged = append(merged, e)
			continue
		}
		ls := e.lines
		if len(ls) > 1 && ls[0] == "" {
			ls = ls[1:]
		}
		last.lines = append(slices.Clone(last.lines), ls...)
		last.cats = append(slices.Clone(last.cats), e.cats...)
		last.incs = union(slices.Clone(last.incs), e.incs)
		last.ev = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(last.ev), e.ev...))))
	}
	edits = merged
	// Byte offset of the start of each line.
	offs := make([]int, len(lines)+1)
	for i, l := range lines {
		offs[i+1] = offs[i] + len(l) + 1
	}
	src := text
	if src != "" && !strings.HasSuffix(src, "\n") {
		src += "\n"
	}
	var ues []udiff.Edit
	hunks := make([]Hunk, 0, len(edits))
	for _, e := range edits {
		at := offs[min(e.after+1, len(lines))]
		ues = append(ues, udiff.Edit{Start: at, End: at, New: strings.Join(e.lines, "\n") + "\n"})
		hunks = append(hunks, Hunk{Categories: e.cats, IncidentIDs: e.incs, EvidenceIDs: e.ev, AfterLine: e.after + 1,
			Anchor: e.anchor, Lines: e.lines})
	}
	out, err := udiff.Apply(src, ues)
	if err != nil {
		return text, []Hunk{}, "" // cannot happen: insertions at line starts, in order
	}
	u, err := udiff.ToUnifiedDiff("a/"+baseName(path), "b/"+baseName(path), src, ues, udiff.DefaultContextLines)
	if err != nil {
		return text, []Hunk{}, ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", u.From, u.To)
	for _, h := range u.Hunks {
		from, to := 0, 0
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Delete:
				from++
			case udiff.Insert:
				to++
			default:
				from++
				to++
			}
		}
		// Citations of the edits inside this hunk.
		var cats, incs []string
		for _, hk := range hunks {
			if hk.AfterLine >= h.FromLine-1 && hk.AfterLine <= h.FromLine-1+from {
				cats, incs = union(cats, hk.Categories), union(incs, hk.IncidentIDs)
			}
		}
		fmt.Fprintf(&b, "@@ -%s +%s @@ %s (%s)\n", span(h.FromLine, from), span(h.ToLine, to), strings.Join(cats, ", "),
			strings.Join(incs, ", "))
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Delete:
				b.WriteString("-")
			case udiff.Insert:
				b.WriteString("+")
			default:
				b.WriteString(" ")
			}
			b.WriteString(l.Content)
			if !strings.HasSuffix(l.Content, "\n") {
				b.WriteString("\n\\ No newline at end of file\n")
			}
		}
	}
	return out, hunks, b.String()
}

// span renders a hunk range (GNU diff's form).
func span(start, n int) string {
	switch {
	case n == 0:
		return fmt.Sprintf("%d,0", start-1+boolInt(start == 0))
	case n == 1:
		return fmt.Sprintf("%d", start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// baseName is the file's name: diffs are relative to the skill's folder
// (patch -p1 -d SKILL_DIR).
func baseName(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	return p[strings.LastIndexByte(p, '/')+1:]
}
