// Package assess turns incident evidence into an assessment: it picks the
// incidents (skill-first, like investigate), builds one prompt per
// incident from an embedded instruction file and the evidence bundle
// wrapped as untrusted data, and runs it through the one guarded LLM
// runner (package llm), or stops at the deterministic findings (no LLM)
// or at a dry-run preview. It never modifies any file: skill-doc changes
// are proposed as diffs in the Markdown.
package assess

import (
	"context"
	"io"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/llm"
)

// Modes of an assessment.
const (
	ModeLLM    = "llm"
	ModeNoLLM  = "no_llm"
	ModeDryRun = "dry_run"
)

// maxSkillDocument bounds the skill document passed to the model.
const maxSkillDocument = 32 << 10

// Params select what to assess and how.
type Params struct {
	cortex.InvestigateParams
	// Surface is the caller (cortex.SurfaceCLI, …). The LLM runs only for
	// local callers: any other surface gets the findings and a dry-run
	// preview.
	Surface string
	// NoLLM stops at the deterministic findings; DryRun builds the prompt,
	// audits a dry run and returns its size and preview.
	NoLLM  bool
	DryRun bool
	// Unaudited makes a dry run write nothing (no audit row): the
	// read-only surfaces' preview.
	Unaudited bool
	// PrintPrompt returns each whole prompt (Assessment.Prompt) and runs
	// no model (like NoLLM).
	PrintPrompt bool
	// Model overrides the provider's configured model.
	Model string
	// Stream receives the assessment Markdown as it arrives (may be nil).
	Stream io.Writer
	// BeforeLLM, when set, is called with each assessment before its LLM
	// run starts (the CLI prints the header and findings there, so the
	// streamed Markdown follows them).
	BeforeLLM func(Assessment)
}

// Assessment is the result for one incident.
type Assessment struct {
	IncidentID string          `json:"incident_id"`
	Incident   cortex.Incident `json:"incident"`
	Findings   cortex.Findings `json:"deterministic_findings"`
	// Assessment is the model's Markdown ("" without an LLM run).
	Assessment      string `json:"assessment"`
	InvocationID    string `json:"invocation_id,omitempty"`
	OutputTruncated bool   `json:"output_truncated,omitempty"`
	PromptBytes     int    `json:"prompt_bytes"`
	EvidenceBytes   int    `json:"evidence_bytes"`
	// Prompt is the whole prompt (PrintPrompt).
	Prompt string `json:"prompt,omitempty"`
	// PromptPreview is the start of the prompt (dry runs).
	PromptPreview          string `json:"prompt_preview,omitempty"`
	WouldExceedPromptLimit bool   `json:"would_exceed_prompt_limit,omitempty"`
	// Error says why the LLM did not assess this incident (denied,
	// failed, timed out), Skipped why it was not attempted.
	Error   string `json:"error,omitempty"`
	Skipped string `json:"skipped,omitempty"`
}

// Result is the answer of an assessment.
type Result struct {
	Target      string       `json:"target"`
	Mode        string       `json:"mode"`
	Assessments []Assessment `json:"assessments"`
	// The investigation's selection: how many matched, the others, and
	// what was found when nothing matched.
	Total            int                      `json:"total_incidents"`
	OtherMatching    []cortex.IncidentSummary `json:"other_matching_incidents"`
	NoIncident       bool                     `json:"no_incident_low_severity_summary"`
	NoData           bool                     `json:"no_data"`
	Message          string                   `json:"message,omitempty"`
	SuggestedFilters []string                 `json:"suggested_filters"`
	// Matched says what an MCP target or hook name resolved to.
	Matched string `json:"matched,omitempty"`
	// Report is the assessment as a Markdown report (format=md).
	Report string `json:"report,omitempty"`
}

// MarkdownReport returns the Markdown report of the answer ("" unless
// asked for).
func (r Result) MarkdownReport() string { return r.Report }

// Investigator builds evidence bundles (the app service).
type Investigator interface {
	Investigate(ctx context.Context, lens string, p cortex.InvestigateParams) (cortex.Investigation, error)
}

// RowReader reads logs rows by id (for the skill document).
type RowReader interface {
	RowsByID(ctx context.Context, ids []int64) ([]cortex.EvidenceRow, error)
}

// Assessor runs assessments.
type Assessor struct {
	Investigator Investigator
	Rows         RowReader
	// Runner and Provider are needed only for LLM runs and dry runs.
	Runner   *llm.Runner
	Provider func(model string) (llm.Provider, error)
	// Available reports whether a lens is implemented.
	Available func(lens string) bool
}

// Assess assesses the best matching incidents of a target.
func (a *Assessor) Assess(ctx context.Context, target string, p Params) (Result, error) {
	t, ok := Targets()[target]
	if !ok {
		return Result{}, cortex.Errorf(cortex.CodeInvalid, "unknown assessment target %q (use skill, abuse, mcp or hooks)", target)
	}
	if a.Available != nil && !a.Available(t.Lens) {
		return Result{}, cortex.Errorf(cortex.CodeUnavailable,
			"cortex assess %s is not available yet: Cortex does not detect %s incidents yet", t.Name, t.Lens)
	}
	mode := ModeLLM
	switch {
	case p.NoLLM || p.PrintPrompt:
		mode = ModeNoLLM
	case p.DryRun || (p.Surface != "" && p.Surface != cortex.SurfaceCLI):
		mode = ModeDryRun
	}
	inv, err := a.Investigator.Investigate(ctx, t.Lens, p.InvestigateParams)
	if err != nil {
		return Result{}, err
	}
	res := Result{Target: t.Name, Mode: mode, Assessments: []Assessment{}, Total: inv.Total, OtherMatching: inv.OtherMatching,
		NoIncident: inv.NoIncident, NoData: inv.NoData, Message: inv.Message, SuggestedFilters: inv.SuggestedFilters,
		Matched: inv.Matched}
	if inv.NoData {
		// Nothing to assess: the caller named something that is not there.
		return res, inv.NoDataError(t.Lens)
	}
	var provider llm.Provider
	if mode != ModeNoLLM && len(inv.Bundles) > 0 {
		if provider, err = a.Provider(p.Model); err != nil {
			return res, err
		}
	}
	var stop error
	for _, b := range inv.Bundles {
		as := Assessment{IncidentID: b.Incident.ID, Incident: b.Incident, Findings: b.Findings}
		ev := Evidence{Bundle: b}
		if t.Lens == cortex.LensSkill {
			ev.SkillDocument = a.skillDocument(ctx, b)
			// The document is sent once, as skill_document.
			ev.Bundle.Skill = nil
		}
		if len(inv.Bundles) == 1 {
			ev.OtherMatching = inv.OtherMatching
		}
		prompt, evBytes, err := Prompt(t, ev)
		if err != nil {
			return res, err
		}
		as.PromptBytes, as.EvidenceBytes = len(prompt), evBytes
		if p.PrintPrompt {
			as.Prompt = prompt
		}
		switch {
		case mode == ModeNoLLM:
		case stop != nil:
			as.Skipped = "not attempted: an earlier LLM call was refused or failed (" + cortex.ErrorMessage(stop) + ")"
		default:
			spec := llm.Spec{Surface: surface(p.Surface), Action: t.Action, IncidentID: b.Incident.ID, Tool: b.Incident.Tool,
				Project: b.Incident.Project, Session: b.Incident.SessionID, Prompt: prompt,
				Evidence: counts(inv, b, evBytes), Metadata: tags(b.Incident)}
			if mode == ModeDryRun {
				var dr llm.DryRunResult
				if p.Unaudited {
					dr = a.Runner.Preview(spec)
				} else if dr, err = a.Runner.DryRun(ctx, spec, provider); err != nil {
					return res, err
				}
				as.InvocationID, as.PromptPreview, as.WouldExceedPromptLimit = dr.InvocationID, dr.PromptPreview, dr.WouldExceedPromptLimit
				break
			}
			if p.BeforeLLM != nil {
				p.BeforeLLM(as)
			}
			spec.Stream = p.Stream
			out, err := a.Runner.Run(ctx, spec, provider)
			as.InvocationID = out.InvocationID
			if err != nil {
				as.Error, stop = cortex.ErrorMessage(err), err
				break
			}
			as.Assessment, as.OutputTruncated = out.Output, out.OutputTruncated
		}
		res.Assessments = append(res.Assessments, as)
	}
	return res, stop
}

func surface(s string) string {
	if s == "" {
		return cortex.SurfaceCLI
	}
	return s
}

// counts summarizes the evidence for the audit.
func counts(inv cortex.Investigation, b cortex.Bundle, evBytes int) cortex.EvidenceCounts {
	return cortex.EvidenceCounts{TotalIncidents: inv.Total, Bundles: 1, Anchors: len(b.SignalAnchors), EvidenceBytes: evBytes,
		Truncated: b.SignalAnchorsTruncated || b.TranscriptBeforeTruncated || b.TranscriptAfterTruncated ||
			b.SkillEventsTruncated || b.NearbyToolFailuresTruncated || b.NearbyUserCorrectionsTruncated ||
			b.NearbyLogsTruncated || b.NearbyErrorsTruncated}
}

// tags are the audit metadata of an incident: its subject, nothing more.
func tags(inc cortex.Incident) map[string]any {
	m := map[string]any{"lens": inc.Lens}
	for k, v := range map[string]string{"skill_name": inc.SkillName, "skill_plugin": inc.SkillPlugin,
		"mcp_server": inc.MCPServer, "mcp_tool": inc.MCPTool, "hook_event": inc.HookEvent, "hook_name": inc.HookName} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// skillDocument returns the skill's own text: the document the run
// loaded as the bundle carries it (a Claude skill or command body, a Codex
// skill block or SKILL.md read), else an injected body or block among the
// bundle's skill events.
func (a *Assessor) skillDocument(ctx context.Context, b cortex.Bundle) *SkillDocument {
	if d := b.Skill; d != nil && d.Text != "" {
		doc := &SkillDocument{Path: d.Path, Content: d.Text, SourceLogID: d.LogID, AsPrinted: d.AsPrinted, Truncated: d.Truncated}
		if len(doc.Content) > maxSkillDocument {
			doc.Content, doc.Truncated = cortex.CutUTF8(doc.Content, maxSkillDocument), true
		}
		return doc
	}
	if a.Rows == nil {
		return nil
	}
	for _, ev := range b.SkillEvents {
		switch ev.EventKind {
		case cortex.SkillClaudeBody, cortex.SkillClaudeSlash, cortex.SkillCodexBlock:
		default:
			continue
		}
		rows, err := a.Rows.RowsByID(ctx, []int64{ev.LogID})
		if err != nil || len(rows) == 0 {
			continue
		}
		doc := &SkillDocument{Path: ev.SkillPath, Content: rows[0].Message, SourceLogID: ev.LogID}
		if len(doc.Content) > maxSkillDocument {
			doc.Content, doc.Truncated = cortex.CutUTF8(doc.Content, maxSkillDocument), true
		}
		return doc
	}
	return nil
}
