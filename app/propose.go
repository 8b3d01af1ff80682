package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/assess"
	"github.com/cortexhq/cortex/lifecycle"
	"github.com/cortexhq/cortex/llm"
	"github.com/cortexhq/cortex/store"
)

// maxSkillFile bounds a SKILL.md read for a proposal.
const maxSkillFile = 1 << 20

// SkillProposal is the answer of skill_propose.
type SkillProposal struct {
	lifecycle.Proposal
	// Tried lists the places searched for the SKILL.md, in order.
	Tried []string `json:"tried"`
	// Findings counts the findings read, from Incidents incidents.
	Findings  int `json:"findings"`
	Incidents int `json:"incidents"`
	// LLM reports the model's proposal when one was asked for.
	LLM *LLMProposal `json:"llm,omitempty"`
	// Written is set when the proposal was written to the file.
	Written bool `json:"written"`
}

// LLMProposal is what became of a model's proposal.
type LLMProposal struct {
	InvocationID string `json:"invocation_id,omitempty"`
	Accepted     bool   `json:"accepted"`
	// Rejected says why the answer was not used (the deterministic
	// proposal stands).
	Rejected string `json:"rejected,omitempty"`
	Error    string `json:"error,omitempty"`
}

// SkillPropose proposes small, evidence-linked edits to a skill's
// SKILL.md as a unified diff: from its incidents' findings
// (deterministic), or from the guarded LLM runner when asked and only if
// its diff applies cleanly and is small. Nothing is written unless Write
// (local CLI only).
func (s *Service) SkillPropose(ctx context.Context, c Caller, p SkillProposeParams) (SkillProposal, error) {
	local := c.Surface == "" || c.Surface == cortex.SurfaceCLI
	if !local && (p.LLM || p.Write) {
		return SkillProposal{}, cortex.Errorf(cortex.CodeInvalid,
			"skill_propose: llm and write run only in the local CLI (cortex ai skill-propose --llm/--write)")
	}
	in, err := s.proposeInputs(ctx, p, local)
	out := SkillProposal{Tried: in.tried}
	if err != nil {
		return out, err
	}
	name, path, text, fs := in.skill, in.path, in.text, in.findings
	out.Findings, out.Incidents = len(fs), in.incidents
	out.Proposal = lifecycle.Propose(name, path, text, fs)
	if p.LLM {
		lp, prop, err := s.llmProposal(ctx, name, path, text, fs, p.Model)
		if err != nil {
			return out, err
		}
		out.LLM = lp
		if lp.Accepted {
			out.Proposal = prop
		}
	}
	if p.Write && out.Diff != "" {
		if err := writeSkillFile(path, out.FileSHA256, out.New); err != nil {
			return out, err
		}
		out.Written = true
	}
	return out, nil
}

// llmProposal asks the guarded runner for a diff and accepts it only if
// it applies cleanly to the current file and is small.
func (s *Service) llmProposal(ctx context.Context, skill, path, text string, fs []lifecycle.Finding, model string) (*LLMProposal, lifecycle.Proposal, error) {
	if s.runner == nil || s.newProvider == nil {
		return nil, lifecycle.Proposal{}, cortex.Errorf(cortex.CodeUnavailable, "this Cortex process has no LLM runner")
	}
	prompt, evBytes, err := s.proposePrompt(skill, path, text, fs)
	if err != nil {
		return nil, lifecycle.Proposal{}, err
	}
	provider, err := s.providerFor(llm.ActionSkillPropose, model)
	if err != nil {
		return nil, lifecycle.Proposal{}, err
	}
	res, err := s.runner.Run(ctx, llm.Spec{Surface: cortex.SurfaceCLI, Action: llm.ActionSkillPropose, Prompt: prompt,
		Evidence: cortex.EvidenceCounts{EvidenceBytes: evBytes}, Metadata: map[string]any{"skill": skill}}, provider)
	lp := &LLMProposal{InvocationID: res.InvocationID}
	if err != nil {
		lp.Error = cortex.ErrorMessage(err)
		return lp, lifecycle.Proposal{}, nil
	}
	nt, diff, err := lifecycle.AcceptDiff(path, text, res.Output)
	if err != nil {
		lp.Rejected = err.Error()
		return lp, lifecycle.Proposal{}, nil
	}
	lp.Accepted = true
	sum := sha256.Sum256([]byte(text))
	var incs []string
	for _, f := range fs {
		incs = append(incs, f.IncidentID)
	}
	sort.Strings(incs)
	return lp, lifecycle.Proposal{Skill: skill, File: path, FileSHA256: hex.EncodeToString(sum[:]), Source: "llm",
		Hunks: []lifecycle.Hunk{}, Skipped: []lifecycle.Skipped{}, Diff: diff, New: nt}, nil
}

// proposePrompt is the prompt of an LLM proposal.
func (s *Service) proposePrompt(skill, path, text string, fs []lifecycle.Finding) (string, int, error) {
	ev := assess.ProposeEvidence{File: path, SkillMD: text, Findings: []assess.ProposedFinding{}}
	for _, f := range fs {
		ev.Findings = append(ev.Findings, assess.ProposedFinding{IncidentID: f.IncidentID, Finding: f.Finding})
	}
	return assess.ProposePrompt(skill, ev)
}

// proposal inputs: the skill, its SKILL.md and the findings of its worst
// incidents.
type proposeInput struct {
	skill, path, text string
	tried             []string
	findings          []lifecycle.Finding
	incidents         int
}

func (s *Service) proposeInputs(ctx context.Context, p SkillProposeParams, local bool) (proposeInput, error) {
	sr, err := s.skillRunsOf(ctx, "skill_propose", p.ScopeParams, p.Skill)
	if err != nil {
		return proposeInput{}, err
	}
	in := proposeInput{skill: sr.primaryName()}
	in.path, in.text, in.tried, err = s.findSkillFile(in.skill, p.File, sr.loadPaths(), local)
	if err != nil {
		return in, err
	}
	in.findings, in.incidents, err = s.skillFindings(ctx, p.ScopeParams, in.skill, maxSkillBundles)
	return in, err
}

// SkillProposePrompt returns the whole prompt an LLM proposal would send
// (for --print-prompt), without running anything.
func (s *Service) SkillProposePrompt(ctx context.Context, p SkillProposeParams) (string, error) {
	in, err := s.proposeInputs(ctx, p, true)
	if err != nil {
		return "", err
	}
	prompt, _, err := s.proposePrompt(in.skill, in.path, in.text, in.findings)
	return prompt, err
}

// findSkillFile finds the SKILL.md of a skill: the file given, else the
// paths its loads showed (Claude's "Base directory for this skill", the
// file Codex read), else the plugin caches and the agents' skill folders
// (the newest match). Remote callers may only name a file called SKILL.md.
func (s *Service) findSkillFile(skill, file string, loadPaths []string, local bool) (string, string, []string, error) {
	home := s.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	expand := func(p string) string {
		if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
			return filepath.Join(home, rest)
		}
		return p
	}
	var cands []string
	if file != "" {
		f := expand(file)
		if !local && !strings.EqualFold(filepath.Base(f), "SKILL.md") {
			return "", "", nil, cortex.Errorf(cortex.CodeInvalid, "skill_propose: file must name a SKILL.md")
		}
		cands = []string{f}
	} else {
		seen := map[string]bool{}
		for i := len(loadPaths) - 1; i >= 0; i-- { // the newest load first
			p := expand(loadPaths[i])
			if filepath.IsAbs(p) && strings.EqualFold(filepath.Base(p), "SKILL.md") && !seen[p] {
				seen[p] = true
				cands = append(cands, p)
			}
		}
		plugin, part, ok := strings.Cut(skill, ":")
		if !ok {
			plugin, part = "", skill
		}
		if home != "" && part != "" && !strings.ContainsAny(part, `/\*?[`) && !strings.ContainsAny(plugin, `/\*?[`) {
			var globs []string
			if plugin != "" {
				for _, agent := range []string{".claude", ".codex"} {
					globs = append(globs, filepath.Join(home, agent, "plugins", "cache", "*", plugin, "*", "skills", part, "SKILL.md"),
						filepath.Join(home, agent, "plugins", "marketplaces", "*", "plugins", plugin, "skills", part, "SKILL.md"))
				}
			}
			for _, d := range []string{".claude/skills", ".codex/skills", ".agents/skills", ".gemini/skills"} {
				globs = append(globs, filepath.Join(home, d, part, "SKILL.md"))
			}
			for _, g := range globs {
				ms, _ := filepath.Glob(g)
				sort.Slice(ms, func(i, j int) bool { return modTime(ms[i]) > modTime(ms[j]) })
				for _, m := range ms {
					if !seen[m] {
						seen[m] = true
						cands = append(cands, m)
					}
				}
				if len(ms) == 0 {
					cands = append(cands, g)
				}
			}
		}
	}
	for _, c := range cands {
		fi, err := os.Stat(c)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if fi.Size() > maxSkillFile {
			return "", "", cands, cortex.Errorf(cortex.CodeInvalid, "%s is larger than %d KiB", c, maxSkillFile>>10)
		}
		b, err := os.ReadFile(c)
		if err != nil {
			return "", "", cands, cortex.WrapError(cortex.CodeUnavailable, err, "read %s", c)
		}
		return c, string(b), cands, nil
	}
	if file != "" {
		return "", "", cands, cortex.Errorf(cortex.CodeNotFound, "no such file: %s", file)
	}
	return "", "", cands, cortex.Errorf(cortex.CodeNotFound,
		"no SKILL.md of %q found on this machine (tried %d places: %s); give it with --file PATH", skill, len(cands),
		strings.Join(firstN(cands, 4), ", "))
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}

func modTime(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.ModTime().UnixNano()
}

// writeSkillFile replaces the file with text, atomically, if it still has
// the content the proposal was made for.
func writeSkillFile(path, sha, text string) error {
	cur, err := os.ReadFile(path)
	if err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "read %s", path)
	}
	sum := sha256.Sum256(cur)
	if hex.EncodeToString(sum[:]) != sha {
		return cortex.Errorf(cortex.CodeConflict, "%s changed since the proposal was made; run skill-propose again", path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "stat %s", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".SKILL.md.cortex-*")
	if err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "write next to %s", path)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(text); err != nil {
		tmp.Close()
		return cortex.WrapError(cortex.CodeUnavailable, err, "write %s", tmp.Name())
	}
	if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
		tmp.Close()
		return cortex.WrapError(cortex.CodeUnavailable, err, "write %s", tmp.Name())
	}
	if err := tmp.Close(); err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "write %s", tmp.Name())
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "replace %s", path)
	}
	return nil
}

// SkillEvalList is the answer of skill_evals.
type SkillEvalList struct {
	Skill string `json:"skill"`
	lifecycle.Evals
	// Written lists the files written (out).
	Written []string `json:"written,omitempty"`
}

// SkillEvals turns a skill's incidents into evals in skill-creator's
// format (the real prompt; expectations from the user's correction and
// the findings) and its wrong triggers and good runs into trigger evals;
// with Out (local CLI only) it writes Out/evals/evals.json,
// trigger_evals.json and provenance.json.
func (s *Service) SkillEvals(ctx context.Context, c Caller, p SkillEvalsParams) (SkillEvalList, error) {
	if p.Out != "" && c.Surface != "" && c.Surface != cortex.SurfaceCLI {
		return SkillEvalList{}, cortex.Errorf(cortex.CodeInvalid, "skill_evals: out writes files and runs only in the local CLI")
	}
	sr, err := s.skillRunsOf(ctx, "skill_evals", p.ScopeParams, p.Skill)
	if err != nil {
		return SkillEvalList{}, err
	}
	name := sr.primaryName()
	bs, err := s.skillBundles(ctx, p.ScopeParams, name, maxSkillBundles)
	if err != nil {
		return SkillEvalList{}, err
	}
	byID := map[string]cortex.Bundle{}
	for _, b := range bs {
		byID[b.Incident.ID] = b
	}
	doc := sr.newestBody()
	var cases []lifecycle.Case
	var runs []lifecycle.Run
	for _, n := range sr.names {
		runs = append(runs, sr.runsOf(n)...)
	}
	for _, r := range runs {
		b, investigated := byID[r.IncidentID]
		if r.Incident && !investigated {
			continue // beyond the investigation cap
		}
		c := lifecycle.Case{IncidentID: r.IncidentID, Session: r.Session, Incident: r.Incident}
		act, ok, err := s.DB.LastPrompt(ctx, store.SessionScope{Tool: r.Tool, Session: r.Session, Host: r.Host}, r.Start)
		if err != nil {
			return SkillEvalList{}, err
		}
		if ok {
			c.Prompt, c.PromptLogID = act.Text, act.LogID
		}
		if investigated {
			for _, f := range b.Findings.FailureModes {
				if doc == "" || lifecycle.Relevant(f, doc) {
					c.Findings = append(c.Findings, f)
				}
			}
			c.Correction = correction(b)
			if len(c.Findings) == 0 && len(b.Findings.FailureModes) > 0 && c.Correction == "" {
				continue // every finding is about another skill's step
			}
		}
		cases = append(cases, c)
	}
	out := SkillEvalList{Skill: name, Evals: lifecycle.BuildEvals(name, cases)}
	if p.Out != "" {
		if out.Written, err = writeEvals(p.Out, out.Evals); err != nil {
			return out, err
		}
	}
	return out, nil
}

// correction is the user's own words that corrected or stopped the run
// (the first voice row carrying such a signal), "" when none.
func correction(b cortex.Bundle) string {
	for _, r := range b.UserVoice {
		for _, sig := range r.Signals {
			if sig == cortex.SignalUserCorrection || sig == cortex.SignalUserStopped || sig == cortex.SignalScopeConfusion ||
				sig == cortex.SignalIgnoredPolicy {
				if r.Role == cortex.RoleUser && strings.TrimSpace(r.Message) != "" {
					return r.Message
				}
			}
		}
	}
	return ""
}

// writeEvals writes dir/evals/evals.json, trigger_evals.json and
// provenance.json.
func writeEvals(dir string, e lifecycle.Evals) ([]string, error) {
	d := filepath.Join(dir, "evals")
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, cortex.WrapError(cortex.CodeUnavailable, err, "create %s", d)
	}
	var written []string
	for _, f := range []struct {
		name string
		v    any
	}{{"evals.json", e.EvalSet}, {"trigger_evals.json", e.TriggerEvals}, {"provenance.json", e.Provenance}} {
		b, err := json.MarshalIndent(f.v, "", "  ")
		if err != nil {
			return written, cortex.WrapError(cortex.CodeInternal, err, "encode %s", f.name)
		}
		p := filepath.Join(d, f.name)
		if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return written, cortex.WrapError(cortex.CodeForbidden, err, "write %s", p)
			}
			return written, cortex.WrapError(cortex.CodeUnavailable, err, "write %s", p)
		}
		written = append(written, p)
	}
	return written, nil
}
