package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/assess"
	"github.com/cortexhq/cortex/incident"
	"github.com/cortexhq/cortex/report"
)

// AssessOptions are the flags of `cortex assess <target>`.
type AssessOptions struct {
	scopeFlags
	Target string
	Skill  string
	// Subject is the positional argument: a skill, an MCP target or a hook.
	Subject string
	// MCP and hook subject flags.
	Server, MCPTool, ToolName, Hook string
	Plugin                          string
	Terms                           []string
	Window                          int
	IncidentID                      string
	Signals                         []string
	MinScore                        float64
	All                             bool
	// CorrelationWindow and MaxBytes bound the evidence.
	CorrelationWindow int
	MaxBytes          int
	Limit             int
	NoLLM             bool
	DryRun            bool
	PrintPrompt       bool
	Model             string
	JSON              bool
	// Format is the output: text, md or json.
	Format string
}

// NewCmdAssess builds `cortex assess skill|abuse|mcp|hooks`.
func NewCmdAssess(f *Factory, runF func(context.Context, *AssessOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "assess",
		Short: "Assess incidents with deterministic findings and an optional local LLM",
		Long: `Picks the best matching incident of a target (like investigate), prints its header and
deterministic findings, then streams a Markdown assessment from the local LLM (the Gemini
CLI by default; claude -p, codex exec or an OpenAI-compatible endpoint by [llm] provider) through Cortex's one guarded runner: kill switch, per-action enablement,
rate limits, circuit breaker, concurrency caps, timeout, byte caps. Every attempt —
denials and dry runs included — is audited in llm_invocations
(see cortex ai llm-invocations).

Evidence is passed to the model as untrusted data; the model may not use tools or edit
files: proposed skill-document changes come back as diffs in the Markdown.

--no-llm stops at the findings; --print-prompt prints the whole prompt and runs nothing;
--dry-run builds the prompt, audits a dry run and
prints its size and a preview without calling any model.`,
		Example: `  cortex assess skill lavra:lavra-plan --since 7d
  cortex assess skill --plugin lavra --no-llm --json
  cortex assess abuse --since 24h --dry-run
  cortex assess skill --incident-id skill-inc-… --model gemini-2.5-pro`,
	}
	for _, target := range []string{"skill", "abuse", "mcp", "hooks"} {
		cmd.AddCommand(newCmdAssessTarget(f, target, runF))
	}
	return cmd
}

func newCmdAssessTarget(f *Factory, target string, runF func(context.Context, *AssessOptions) error) *cobra.Command {
	opts := &AssessOptions{Target: target}
	cmd := &cobra.Command{Args: cobra.NoArgs}
	switch target {
	case "skill":
		cmd.Use, cmd.Short, cmd.Args = "skill [SKILL]", "Assess the top incident of a skill and propose skill-document fixes", cobra.MaximumNArgs(1)
		cmd.Example = `  cortex assess skill verify --since 30d
  cortex assess skill --plugin lavra --all --no-llm`
	case "abuse":
		cmd.Use, cmd.Short = "abuse", "Assess the top abuse/frustration incident: real frustration or false positive, and why"
		cmd.Example = `  cortex assess abuse --since 7d
  cortex assess abuse --incident-id inc-… --dry-run`
	case "mcp":
		cmd.Use, cmd.Short, cmd.Args = "mcp [SERVER|TOOL]", "Assess the top incident of an MCP server or tool", cobra.MaximumNArgs(1)
	case "hooks":
		cmd.Use, cmd.Short, cmd.Args = "hooks [HOOK]", "Assess the top incident of a hook", cobra.MaximumNArgs(1)
	}
	opts.scopeFlags.register(cmd)
	fl := cmd.Flags()
	switch target {
	case "skill":
		fl.StringVar(&opts.Plugin, "plugin", "", "only skills of this plugin")
	case "abuse":
		fl.StringSliceVar(&opts.Terms, "term", nil, "abuse terms to look for instead of the defaults (repeatable)")
	case "mcp":
		mcpSubjectFlags(cmd, &opts.Server, &opts.MCPTool, &opts.ToolName)
	case "hooks":
		fl.StringVar(&opts.Hook, "hook", "", "the hook: PostToolUse, post_tool_use or PostToolUse:Bash")
	}
	fl.IntVar(&opts.Window, "window", incident.DefaultWindowMinutes, "minutes without a candidate that end an incident")
	fl.StringVar(&opts.IncidentID, "incident-id", "", "assess this incident (found at any rank)")
	fl.StringSliceVar(&opts.Signals, "signal", nil, "only incidents with one of these signals (repeatable)")
	fl.Float64Var(&opts.MinScore, "min-score", 0, "only incidents scoring at least this")
	fl.IntVar(&opts.CorrelationWindow, "correlation-window", incident.DefaultCorrelationMinutes,
		"minutes around the incident for nearby logs, errors and tool failures")
	fl.IntVar(&opts.MaxBytes, "max-bytes", incident.DefaultMaxBytes, "bound on the text of each evidence row")
	fl.BoolVar(&opts.All, "all", false, fmt.Sprintf("assess every matching incident (up to %d; each is one LLM call, rate limits apply)", incident.MaxBundles))
	fl.IntVar(&opts.Limit, "limit", 0, "incidents to assess (default 1)")
	fl.BoolVar(&opts.NoLLM, "no-llm", false, "stop at the deterministic findings")
	fl.BoolVar(&opts.PrintPrompt, "print-prompt", false, "print the whole prompt of each incident and run no model")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "build the prompt, audit a dry run, print its size and a preview; call no model")
	fl.StringVar(&opts.Model, "model", "", "model to ask instead of [llm.gemini] model")
	fl.BoolVar(&opts.JSON, "json", false, "print JSON (the assessment is not streamed)")
	formatFlag(cmd, &opts.Format)
	cmd.MarkFlagsMutuallyExclusive("no-llm", "dry-run", "print-prompt")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 {
			opts.Subject = args[0]
		}
		if runF != nil {
			return runF(cmd.Context(), opts)
		}
		return assessRun(cmd.Context(), f, opts)
	}
	return cmd
}

func (o *AssessOptions) params(f *Factory) (assess.Params, error) {
	since, until, err := o.times(f)
	if err != nil {
		return assess.Params{}, err
	}
	limit := o.Limit
	if limit == 0 && !o.All {
		limit = 1
	}
	skill, target, hook := "", "", o.Hook
	switch o.Target {
	case "skill":
		skill = o.Subject
	case "mcp":
		target = o.Subject
	case "hooks":
		if o.Subject != "" {
			hook = o.Subject
		}
	}
	ip := cortex.InvestigateParams{IncidentParams: cortex.IncidentParams{Tool: cortex.Tool(o.Agent), Project: o.Project,
		Session: o.Session, Host: o.Host, Since: since, Until: until, Skill: skill, Plugin: o.Plugin, Terms: o.Terms,
		Target: target, MCPServer: o.Server, MCPTool: o.MCPTool, ToolName: o.ToolName, Hook: hook,
		WindowMinutes: o.Window, IncidentID: o.IncidentID, Signals: o.Signals, MinScore: o.MinScore, Limit: limit}, All: o.All,
		CorrelationWindowMinutes: o.CorrelationWindow, MaxBytes: o.MaxBytes}
	return assess.Params{InvestigateParams: ip, Surface: cortex.SurfaceCLI, NoLLM: o.NoLLM, DryRun: o.DryRun,
		PrintPrompt: o.PrintPrompt, Model: o.Model}, nil
}

func assessRun(ctx context.Context, f *Factory, opts *AssessOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	opts.JSON = opts.JSON || opts.Format == "json"
	md := opts.Format == "md"
	p, err := opts.params(f)
	if err != nil {
		return err
	}
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	// The audit is written, so the store is opened for writing.
	db, closeStore, err := f.OpenStore(ctx, true)
	if err != nil {
		return err
	}
	defer closeStore()
	s := f.NewService(db)
	if opts.PrintPrompt {
		res, err := s.Assess(ctx, opts.Target, p)
		if err != nil {
			return err
		}
		if opts.JSON {
			return f.IO.WriteJSON(res)
		}
		for i, a := range res.Assessments {
			if i > 0 {
				f.IO.Printf("\n")
			}
			f.IO.Printf("%s", Safe(a.Prompt))
		}
		return nil
	}
	if !opts.NoLLM {
		if err := s.EnableLLM(ctx, cfg.LLM, f.Provider); err != nil {
			return err
		}
	}
	if md {
		p.BeforeLLM = func(a assess.Assessment) {
			fmt.Fprintf(f.IO.ErrOut, "Asking the model about %s (the report follows when it has answered)…\n", OneLine(a.IncidentID, 80))
		}
	}
	if !opts.JSON && !md {
		stream := &safeWriter{w: f.IO.Out}
		p.Stream = stream
		p.BeforeLLM = func(a assess.Assessment) {
			printIncidentHead(f, a.Incident)
			printFindings(f, a.Findings)
			// The heading appears with the first streamed text, so a
			// refused call shows none.
			stream.first = func() {
				f.IO.Printf("\nAssessment (%s; %s bytes of prompt)\n\n", modelName(cfg.LLM.Gemini.Model, opts.Model), commas(a.PromptBytes))
			}
		}
	}
	res, err := s.Assess(ctx, opts.Target, p)
	if opts.JSON {
		if err != nil && len(res.Assessments) == 0 {
			return err
		}
		if jerr := f.IO.WriteJSON(res); jerr != nil {
			return jerr
		}
		return err
	}
	if err != nil && len(res.Assessments) == 0 {
		return err
	}
	if md {
		if _, werr := io.WriteString(f.IO.Out, report.Assessment(res)); werr != nil {
			return werr
		}
		return err
	}
	printAssessment(f, res)
	return err
}

// printAssessment prints what was not streamed: the header and findings
// of assessments without an LLM run, dry-run previews, outcomes.
func printAssessment(f *Factory, res assess.Result) {
	if res.Matched != "" {
		f.IO.Printf("Matched %s\n", OneLine(res.Matched, 0))
	}
	if res.Message != "" {
		f.IO.Printf("%s\n", OneLine(res.Message, 0))
	}
	if len(res.Assessments) == 0 {
		f.IO.Printf("No incidents to assess.\n")
	}
	for i, a := range res.Assessments {
		switch {
		case res.Mode == assess.ModeLLM && a.Skipped == "" && (a.Assessment != "" || a.Error != ""):
			// Header, findings and Markdown were streamed; the error, if
			// any, is the command's error.
			if a.Error != "" {
				f.IO.Printf("\nNo assessment (audited as %s).\n", a.InvocationID)
				break
			}
			if !strings.HasSuffix(a.Assessment, "\n") {
				f.IO.Printf("\n")
			}
			note := ""
			if a.OutputTruncated {
				note = ", cut at [llm] max_output_bytes"
			}
			f.IO.Printf("\n(audited as %s%s)\n", a.InvocationID, note)
		default:
			if i > 0 {
				f.IO.Printf("\n")
			}
			printIncidentHead(f, a.Incident)
			printFindings(f, a.Findings)
			f.IO.Printf("\nPrompt: %s bytes (%s of evidence)\n", commas(a.PromptBytes), commas(a.EvidenceBytes))
			switch {
			case a.Skipped != "":
				f.IO.Printf("Skipped: %s\n", OneLine(a.Skipped, 0))
			case res.Mode == assess.ModeDryRun:
				if a.WouldExceedPromptLimit {
					f.IO.Printf("Warning: the prompt is over [llm] max_prompt_bytes; a real run would be refused.\n")
				}
				f.IO.Printf("Dry run audited as %s. Preview:\n%s\n", a.InvocationID, indent(Safe(a.PromptPreview), "  | "))
			}
		}
	}
	if len(res.OtherMatching) > 0 {
		f.IO.Printf("\nOther matching incidents (%d of %d; assess one with --incident-id):\n", len(res.OtherMatching), res.Total)
		for _, o := range res.OtherMatching {
			f.IO.Printf("  %s  %-8s %5.0f  %s → %s  session %s\n", o.ID, o.Label, o.Score, f.timeCell(o.FirstSeen, false),
				f.timeCell(o.LastSeen, false),
				shortSession(o.SessionID))
		}
	}
}

func modelName(configured, override string) string {
	if override != "" {
		return override
	}
	return configured
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}

func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// safeWriter passes model output to a terminal without control
// characters (escape sequences), keeping a rune split across writes
// whole.
type safeWriter struct {
	w    io.Writer
	tail []byte
	// first, when set, runs before the first text is written.
	first func()
}

func (s *safeWriter) Write(b []byte) (int, error) {
	if s.first != nil && len(b) > 0 {
		s.first()
		s.first = nil
	}
	buf := append(s.tail, b...)
	cut := len(buf)
	// Hold back an incomplete rune at the end.
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-utf8.UTFMax; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				cut = i
			}
			break
		}
	}
	s.tail = append([]byte(nil), buf[cut:]...)
	if _, err := io.WriteString(s.w, Safe(string(buf[:cut]))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// newCmdAIAssessAlias builds `cortex ai skill-assess` and `cortex ai
// assess`, the `cortex ai` spellings of `cortex assess skill|abuse`.
func newCmdAIAssessAlias(f *Factory, target, use string) *cobra.Command {
	cmd := newCmdAssessTarget(f, target, nil)
	cmd.Use = use
	cmd.Short += fmt.Sprintf(" (same as cortex assess %s)", target)
	return cmd
}

// LLMInvocationsOptions are the flags of `cortex ai llm-invocations`.
type LLMInvocationsOptions struct {
	Since  string
	Action string
	Status string
	Limit  int
	Cursor string
	JSON   bool
}

// NewCmdAILLMInvocations builds `cortex ai llm-invocations`.
func NewCmdAILLMInvocations(f *Factory, runF func(context.Context, *LLMInvocationsOptions) error) *cobra.Command {
	opts := &LLMInvocationsOptions{}
	cmd := &cobra.Command{
		Use:   "llm-invocations",
		Short: "The audit of every LLM invocation: who asked, what, how it ended",
		Long: `Every attempt to call an LLM — successful, failed, timed out, cancelled, refused
(disabled, rate_limited, circuit_open, denied) or dry run — has one row, written before
the provider starts and completed after. Rows left running by a process that died are
marked interrupted when the next runner starts.`,
		Example: `  cortex ai llm-invocations --since 24h
  cortex ai llm-invocations --status rate_limited --json`,
		Args: cobra.NoArgs,
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Since, "since", "", "newer than (30m, 7d, today, RFC 3339)")
	fl.StringVar(&opts.Action, "action", "", "only this action (skill_assess, ai_assess, mcp_assess, hook_assess)")
	fl.StringVar(&opts.Status, "status", "", "only this status (success, error, timeout, cancelled, disabled, rate_limited, circuit_open, denied, dry_run, interrupted, running)")
	fl.IntVar(&opts.Limit, "limit", app.DefaultInvocationsLimit, fmt.Sprintf("maximum rows (max %d)", app.MaxInvocationsLimit))
	cursorFlag(cmd, &opts.Cursor)
	fl.BoolVar(&opts.JSON, "json", false, `print JSON: {"invocations":[…],"total":N,"truncated":bool,"next":"…"}`)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if runF != nil {
			return runF(cmd.Context(), opts)
		}
		return llmInvocationsRun(cmd.Context(), f, opts)
	}
	return cmd
}

func llmInvocationsRun(ctx context.Context, f *Factory, opts *LLMInvocationsOptions) error {
	since, err := timeFlag(f, "since", opts.Since)
	if err != nil {
		return err
	}
	after, err := cortex.DecodeCursor(opts.Cursor)
	if err != nil {
		return err
	}
	p := cortex.InvocationParams{Since: since, Action: opts.Action, Status: opts.Status, Limit: opts.Limit, After: after}
	return withService(ctx, f, func(s *app.Service) error {
		res, err := s.Invocations(ctx, p)
		if err != nil {
			return err
		}
		if opts.JSON {
			return f.IO.WriteJSON(res)
		}
		if len(res.Invocations) == 0 {
			f.IO.Printf("No LLM invocations.\n")
			return nil
		}
		t := newTable(f, column{name: "STARTED"}, column{name: "ACTION"}, column{name: "STATUS", style: statusStyle},
			column{name: "VIA"}, column{name: "TIME"}, column{name: "PROMPT B"}, column{name: "INCIDENT", max: 48, shrink: true},
			column{name: "ID"}, column{name: "ERROR", max: 160, shrink: true})
		for _, inv := range res.Invocations {
			dur := "-"
			if inv.DurationMS != nil {
				dur = fmt.Sprintf("%.1fs", float64(*inv.DurationMS)/1000)
			}
			subject := inv.IncidentID
			if subject == "" {
				subject = "-"
			}
			t.add(f.timeCell(cortex.FormatTime(inv.StartedAt), true), inv.Action, inv.Status, inv.CallerSurface, dur,
				commas(int(inv.PromptBytes)), subject, inv.ID, inv.Error)
		}
		t.print()
		printMore(f, len(res.Invocations), 0, res.Next)
		return nil
	})
}
