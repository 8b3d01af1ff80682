package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/incident"
	"github.com/cortexhq/cortex/report"
)

// IncidentOptions are the flags shared by the incident commands.
type IncidentOptions struct {
	scopeFlags
	Skill, Plugin string
	Terms         []string
	// MCP lens subject.
	Target, Server, MCPTool, ToolName string
	// Hook lens subject.
	Hook, HookEvent, HookSource, EvidenceKind string
	Window                                    int
	Signals                                   []string
	MinScore                                  float64
	IncidentID                                string
	IncludeUsage                              bool
	Limit                                     int
	Cursor                                    string
	JSON                                      bool
	// Detail prints whole evidence bundles with --json (else summaries).
	Detail bool
	// Format is the investigation's output: text, md or json.
	Format string
	// Investigation flags.
	All               bool
	CorrelationWindow int
	MaxBytes          int
	// Lens is the lens the command works on ("" for every lens).
	Lens string
	// Lenses (--lens of ai incidents) and LensName (--lens of ai
	// investigate) choose lenses on the all-lens commands.
	Lenses   []string
	LensName string
}

func (o *IncidentOptions) register(cmd *cobra.Command, lens string, investigate bool) {
	o.Lens = lens
	o.scopeFlags.register(cmd)
	fl := cmd.Flags()
	fl.IntVar(&o.Window, "window", incident.DefaultWindowMinutes,
		fmt.Sprintf("minutes without a candidate that end an incident (1..%d)", incident.MaxWindowMinutes))
	fl.StringSliceVar(&o.Signals, "signal", nil, "only incidents with one of these signals (repeatable)")
	fl.Float64Var(&o.MinScore, "min-score", 0, "only incidents scoring at least this")
	fl.StringVar(&o.IncidentID, "incident-id", "", "only this incident (found at any rank)")
	fl.BoolVar(&o.JSON, "json", false, "print JSON")
	if lens == "" {
		// The all-lens commands take every lens's subject filters; one
		// given picks its lens.
		fl.StringVar(&o.Skill, "skill", "", "only this skill (skill lens)")
		fl.StringVar(&o.Plugin, "plugin", "", "only skills of this plugin (skill lens)")
		fl.StringVar(&o.Target, "target", "", "an MCP server, mcp__server__tool or server/tool (mcp lens)")
		mcpSubjectFlags(cmd, &o.Server, &o.MCPTool, &o.ToolName)
		fl.StringVar(&o.Hook, "hook", "", "a hook: PostToolUse, post_tool_use or PostToolUse:Bash (hook lens)")
		hookSubjectFlags(cmd, &o.HookEvent, &o.HookSource, &o.EvidenceKind)
		fl.StringSliceVar(&o.Terms, "term", nil, "abuse terms instead of the defaults (abuse lens; repeatable)")
		if !investigate {
			fl.BoolVar(&o.IncludeUsage, "include-usage", false, "also list use without a negative signal")
		}
	}
	switch lens {
	case cortex.LensAbuse:
		fl.StringSliceVar(&o.Terms, "term", nil, "abuse terms to look for instead of the defaults (repeatable, at most 16)")
	case cortex.LensSkill:
		fl.StringVar(&o.Plugin, "plugin", "", "only skills of this plugin")
		if !investigate {
			fl.StringVar(&o.Skill, "skill", "", "only this skill (e.g. lavra:lavra-plan)")
			fl.BoolVar(&o.IncludeUsage, "include-usage", false, "also list skill use without a negative signal")
		}
	case cortex.LensMCP:
		mcpSubjectFlags(cmd, &o.Server, &o.MCPTool, &o.ToolName)
		if !investigate {
			fl.BoolVar(&o.IncludeUsage, "include-usage", false, "also list MCP use without a negative signal")
		}
	case cortex.LensHook:
		hookSubjectFlags(cmd, &o.HookEvent, &o.HookSource, &o.EvidenceKind)
		if !investigate {
			fl.BoolVar(&o.IncludeUsage, "include-usage", false, "also list hook runs without a negative signal")
		}
	case cortex.LensFriction:
		fl.StringVar(&o.Skill, "skill", "", "only friction charged to this skill or command (e.g. entire:search, or search)")
	}
	if investigate {
		formatFlag(cmd, &o.Format)
		fl.IntVar(&o.Limit, "limit", 0, fmt.Sprintf("evidence bundles to build (default 1 for one skill or id, else %d; max %d)",
			incident.DefaultBundles, incident.MaxBundles))
		fl.BoolVar(&o.All, "all", false, fmt.Sprintf("a bundle for every matching incident (up to %d)", incident.MaxBundles))
		fl.IntVar(&o.CorrelationWindow, "correlation-window", incident.DefaultCorrelationMinutes,
			fmt.Sprintf("minutes around the incident for nearby logs, errors and tool failures (1..%d)", incident.MaxWindowMinutes))
		fl.IntVar(&o.MaxBytes, "max-bytes", incident.DefaultMaxBytes, "bound on the text of each evidence row")
		fl.BoolVar(&o.Detail, "detail", false, "with --json or --format json: the full evidence bundles instead of summaries")
	} else {
		fl.IntVar(&o.Limit, "limit", incident.DefaultLimit, fmt.Sprintf("maximum incidents (max %d)", incident.MaxLimit))
		cursorFlag(cmd, &o.Cursor)
	}
}

func (o *IncidentOptions) params(f *Factory) (cortex.IncidentParams, error) {
	since, until, err := o.times(f)
	if err != nil {
		return cortex.IncidentParams{}, err
	}
	after, err := cortex.DecodeCursor(o.Cursor)
	if err != nil {
		return cortex.IncidentParams{}, err
	}
	return cortex.IncidentParams{After: after, Tool: cortex.Tool(o.Agent), Project: o.Project, Session: o.Session, Host: o.Host,
		Since: since, Until: until, Skill: o.Skill, Plugin: o.Plugin, Terms: o.Terms, WindowMinutes: o.Window,
		Signals: o.Signals, MinScore: o.MinScore, IncidentID: o.IncidentID, IncludeUsage: o.IncludeUsage, Limit: o.Limit,
		Target: o.Target, MCPServer: o.Server, MCPTool: o.MCPTool, ToolName: o.ToolName,
		Hook: o.Hook, HookEvent: o.HookEvent, HookSource: o.HookSource, EvidenceKind: o.EvidenceKind}, nil
}

// mcpSubjectFlags registers the MCP subject flags (the positional TARGET
// takes any form).
func mcpSubjectFlags(cmd *cobra.Command, server, tool, toolName *string) {
	cmd.Flags().StringVar(server, "server", "", "only this MCP server (e.g. labby)")
	cmd.Flags().StringVar(tool, "mcp-tool", "", "only this MCP tool of the server (e.g. search)")
	cmd.Flags().StringVar(toolName, "tool-name", "", "only this tool name as the agent saw it (e.g. mcp__labby__search)")
}

// hookSubjectFlags registers the hook subject flags (the positional HOOK
// takes PostToolUse, post_tool_use or PostToolUse:Bash).
func hookSubjectFlags(cmd *cobra.Command, event, source, evidence *string) {
	cmd.Flags().StringVar(event, "hook-event", "", "only this hook event (e.g. PreToolUse)")
	cmd.Flags().StringVar(source, "source", "", "only hooks from this source (e.g. claude:user:settings.json)")
	cmd.Flags().StringVar(evidence, "evidence-kind", "", "only this evidence kind: runtime_transcript, config_inventory, trusted_hash_state")
}

// setSubject puts a positional argument into the lens's subject.
func (o *IncidentOptions) setSubject(arg string) {
	switch o.Lens {
	case cortex.LensSkill:
		o.Skill = arg
	case cortex.LensMCP:
		o.Target = arg
	case cortex.LensHook:
		o.Hook = arg
	}
}

// NewCmdAIAllIncidents builds `cortex ai incidents`: the incidents of
// every lens of the engine in one list.
func NewCmdAIAllIncidents(f *Factory, runF func(context.Context, *IncidentOptions) error) *cobra.Command {
	opts := &IncidentOptions{}
	cmd := &cobra.Command{
		Use:   "incidents",
		Short: "Incidents of every lens in one list, most severe first",
		Long: `Lists the incidents of every lens (` + strings.Join(incident.Names(), ", ") + `) in one table with a LENS
column: the most severe label first (critical, high, medium, low), then by the lens's
score, then the newest. --lens keeps some lenses; --signal keeps incidents with one of
the signals (and the lenses that report them). Investigate one with
cortex ai investigate INCIDENT_ID; each lens also has its own command
(cortex ai skill-incidents, mcp-incidents, hook-incidents, abuse-incidents) with the
lens's subject filters.`,
		Example: `  cortex ai incidents --since 7d
  cortex ai incidents --lens skill --lens mcp --json
  cortex ai investigate skill-inc-3871b0698ae1063daab5bdad67c8926d`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return allIncidentsRun(cmd.Context(), f, opts)
		},
	}
	opts.register(cmd, "", false)
	cmd.Flags().StringSliceVar(&opts.Lenses, "lens", nil, "only these lenses: "+strings.Join(incident.Names(), ", ")+" (repeatable)")
	return cmd
}

func allIncidentsRun(ctx context.Context, f *Factory, opts *IncidentOptions) error {
	p, err := opts.params(f)
	if err != nil {
		return err
	}
	return withService(ctx, f, func(s *app.Service) error {
		res, err := s.IncidentsOfLenses(ctx, opts.Lenses, p)
		if err != nil {
			return err
		}
		if opts.JSON {
			return f.IO.WriteJSON(res)
		}
		printIncidents(f, "", res)
		return nil
	})
}

// NewCmdAIIncidents builds the incident listing of one lens: `cortex ai
// abuse-incidents`, `skill-incidents`, `mcp-incidents`, `hook-incidents`.
func NewCmdAIIncidents(f *Factory, lens string, runF func(context.Context, *IncidentOptions) error) *cobra.Command {
	opts := &IncidentOptions{}
	cmd := &cobra.Command{
		Use:   "abuse-incidents",
		Short: "Bursts of abusive language from users, grouped and scored",
		Long: `An abuse incident is a burst of abusive terms typed by the user in one session: terms
matched on word boundaries in user messages only, grouped until --window minutes pass
without another, scored count*10 + density*2 + distinct terms. (Before, this was
cortex ai incidents, which now lists every lens.)`,
		Example: `  cortex ai abuse-incidents --since 7d
  cortex ai abuse-incidents --term wtf --term useless --json`,
		Args: cobra.NoArgs,
	}
	if lens == cortex.LensSkill {
		cmd.Use, cmd.Short = "skill-incidents", "Skills followed by corrections, failures, confusion or loops, scored"
		cmd.Long = `A skill incident is a skill activation followed, in the same session and within --window
minutes of the skill's last event, by at least one negative signal:
  user_correction_after_skill          the user says the agent got it wrong
  tool_failure_after_skill             tool calls failed (repeated, unrecovered, or then corrected)
  scope_or_source_confusion            wrong repo, branch, file or source of truth
  ignored_skill_or_policy_instruction  the user names an instruction the agent skipped
  overlong_loop_after_skill            15+ tool calls and a correction or frustration
Skill use without a signal is usage, listed only with --include-usage.`
		cmd.Example = `  cortex ai skill-incidents --since 30d
  cortex ai skill-incidents --plugin lavra --signal user_correction_after_skill
  cortex ai skill-incidents --skill verify --include-usage --json`
	}
	switch lens {
	case cortex.LensFriction:
		cmd.Use = "friction-incidents"
		cmd.Short = "Where users pushed back on their agent, scored and charged to what was active"
		cmd.Long = `A friction incident is a burst of the user's own verdicts in one session, grouped until
--window minutes pass without another:
  user_interrupt      the user stopped the agent (Esc, Ctrl-C, Codex turn_aborted)
  user_rejection      the user refused a tool call (with their reason when given)
  user_stop           "you can stop", "unnecessary", "no need to …, I'll run them"
  user_correction     "i didnt ask you to …", "i meant …", "that's not how …", wrong repo,
                      "I told you …", an instruction right after a stop
  revert_request      "revert any changes you have", "undo", "start over"
  abuse_term          swearing at the agent (by intensity; quoted or mentioned words never)
  repeated_request    the same prompt asked again (weak)
  user_dissatisfied   "meh", "too complicated", "ew i hate all of those" (weak)
Each incident is charged to the skill runs, MCP tools and hooks active at the time
(attributed_to), or to nothing. Scored by cost to the user: stops and undo requests
first, then corrections, then complaints.`
		cmd.Example = `  cortex ai friction-incidents --since 30d
  cortex ai friction-incidents --skill entire:search
  cortex ai friction-incidents --signal user_rejection --json`
	case cortex.LensMCP:
		cmd.Use, cmd.Args = "mcp-incidents [SERVER|TOOL]", cobra.MaximumNArgs(1)
		cmd.Short = "MCP tools and servers that failed their calls: errors, timeouts, auth, schema, corrections, scored"
		cmd.Long = `An MCP incident is a burst of calls to one MCP server and tool in one session with at
least one negative signal:
  repeated_call_failure            two or more calls failed (structured error or exit status)
  timeout_or_rate_limit            the result says timed out / rate limited
  auth_or_permission_failure       the result says unauthorized / forbidden / permission denied
  schema_or_validation_error       the result says invalid arguments / validation failed
  unknown_tool_or_server           unknown tool, server not found or disconnected
  user_correction_after_tool_call  the user corrects the agent after the call
Builtin tools are context only, never MCP incidents. SERVER|TOOL may be a server
(labby), a tool name as the agent saw it (mcp__labby__search) or server/tool.`
		cmd.Example = `  cortex ai mcp-incidents --since 7d
  cortex ai mcp-incidents labby --signal timeout_or_rate_limit
  cortex ai mcp-incidents mcp__labby__search --json`
	case cortex.LensHook:
		cmd.Use, cmd.Args = "hook-incidents [HOOK]", cobra.MaximumNArgs(1)
		cmd.Short = "Hooks that failed, timed out, blocked the agent or fired too often, scored"
		cmd.Long = `A hook incident is a burst of runs of one hook in one session with a negative signal:
  hook_failed, hook_timed_out, hook_output_parse_error, hook_invoked_too_often,
  user_correction_after_hook, hook_blocked_agent_flow, hook_not_invoked.
Only runtime transcript rows prove a hook ran; configuration (hooks.json, settings,
[hooks.state]) says it was expected, never that it executed — every incident says
which (evidence_basis). HOOK may be PostToolUse, post_tool_use or PostToolUse:Bash.`
		cmd.Example = `  cortex ai hook-incidents --since 7d
  cortex ai hook-incidents PostToolUse:Bash
  cortex ai hook-incidents --hook-event Stop --json`
	}
	opts.register(cmd, lens, false)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 {
			opts.setSubject(args[0])
		}
		if runF != nil {
			return runF(cmd.Context(), opts)
		}
		return incidentsRun(cmd.Context(), f, opts)
	}
	return cmd
}

func incidentsRun(ctx context.Context, f *Factory, opts *IncidentOptions) error {
	p, err := opts.params(f)
	if err != nil {
		return err
	}
	return withService(ctx, f, func(s *app.Service) error {
		res, err := s.Incidents(ctx, opts.Lens, p)
		if err != nil {
			return err
		}
		if opts.JSON {
			return f.IO.WriteJSON(res)
		}
		printIncidents(f, opts.Lens, res)
		return nil
	})
}

func printIncidents(f *Factory, lens string, res cortex.IncidentList) {
	if len(res.Incidents) == 0 {
		switch lens {
		case cortex.LensSkill:
			f.IO.Printf("No skill incidents: no skill use was followed by a negative signal. (See all use: --include-usage)\n")
		case cortex.LensMCP:
			f.IO.Printf("No MCP incidents: no MCP calls with a negative signal. (See all use: --include-usage)\n")
		case cortex.LensHook:
			f.IO.Printf("No hook incidents: no hook runs with a negative signal. (See all runs: --include-usage)\n")
		case cortex.LensFriction:
			f.IO.Printf("No friction incidents: no interrupts, refusals, corrections or undo requests from the user.\n")
		case cortex.LensAbuse:
			f.IO.Printf("No abuse incidents found.\n")
		default:
			f.IO.Printf("No incidents found in any lens. (Each lens's own listing can also show use without a negative signal: --include-usage)\n")
		}
		printScan(f, res.CandidateRows, res.CandidateWindowTruncated)
		return
	}
	what := map[string]string{cortex.LensSkill: "SKILL", cortex.LensMCP: "MCP", cortex.LensHook: "HOOK",
		cortex.LensFriction: "CHARGED TO", "": "SUBJECT"}[lens]
	if what == "" {
		what = "TERMS"
	}
	cols := []column{{name: "SCORE"}, {name: "LABEL", style: labelStyle}, {name: what, max: 48, shrink: true},
		{name: "SIGNALS", max: 80, shrink: true}, {name: "AGENT"}, {name: "SESSION"}, {name: "LAST SEEN"}, {name: "TOKENS"},
		{name: "COST"}, {name: "ID"}}
	if lens == "" {
		cols = append([]column{{name: "LENS"}}, cols...)
	}
	t := newTable(f, cols...)
	for _, inc := range res.Incidents {
		row := []string{fmt.Sprintf("%.0f", inc.Score), inc.Label, incidentSubject(inc), signalSummary(inc), string(inc.Tool),
			shortSession(inc.SessionID), f.timeCell(inc.LastSeen, false), tokensCell(inc.Usage), costCell(inc.Usage), inc.ID}
		if lens == "" {
			row = append([]string{inc.Lens}, row...)
		}
		t.add(row...)
	}
	t.print()
	printMore(f, len(res.Incidents), res.Total, res.Next)
	printScan(f, res.CandidateRows, res.CandidateWindowTruncated)
}

// incidentSubject names an incident's subject in one short string.
func incidentSubject(inc cortex.Incident) string { return inc.Subject() }

func printScan(f *Factory, rows int, truncated bool) {
	if truncated {
		f.IO.Printf("(scanned the newest %d candidates only; older ones were not considered — narrow with --since)\n", rows)
	}
}

// signalSummary is "name×n, …" of the signals present, shortened.
func signalSummary(inc cortex.Incident) string {
	var parts []string
	for _, s := range inc.SignalsPresent {
		parts = append(parts, fmt.Sprintf("%s×%d", shortSignal(s), inc.SignalCounts[s]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}

func shortSignal(s string) string {
	for _, suffix := range []string{"_after_skill", "_instruction", "_after_tool_call", "_after_hook"} {
		s = strings.TrimSuffix(s, suffix)
	}
	return s
}

// NewCmdAIInvestigateAny builds `cortex ai investigate [INCIDENT_ID]`: one
// incident of any lens, by id (or the top incidents of --lens).
func NewCmdAIInvestigateAny(f *Factory, runF func(context.Context, *IncidentOptions) error) *cobra.Command {
	opts := &IncidentOptions{}
	cmd := &cobra.Command{
		Use:   "investigate [INCIDENT_ID]",
		Short: "Evidence and deterministic findings for one incident of any lens, by id",
		Long: `Give an incident id from cortex ai incidents (or any lens's listing): its lens is read
from the id (inc-… abuse, skill-inc-…, mcp-inc-…, hook-inc-…) and you get its bounded
evidence bundle — anchors, transcript before and after, failed tool calls and user
corrections nearby, non-AI logs of the same host — with deterministic findings
(failure mode, confidence, evidence ids, prevention hint), no LLM. Without an id,
--lens (or a subject filter: --skill, --target, --hook, --term) investigates that
lens's top incidents. With --json the bundles are summarized (findings, anchors,
counts, ids) unless --detail. (Before, this was the abuse investigation, now
cortex ai abuse-investigate.)`,
		Example: `  cortex ai investigate skill-inc-3871b0698ae1063daab5bdad67c8926d
  cortex ai investigate --lens hook --since 7d --json
  cortex ai investigate --skill lavra:lavra-plan`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if opts.IncidentID != "" && opts.IncidentID != args[0] {
					return usageError{errString("give the incident id once (argument or --incident-id)")}
				}
				opts.IncidentID = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return investigateRun(cmd.Context(), f, opts)
		},
	}
	opts.register(cmd, "", true)
	cmd.Flags().StringVar(&opts.LensName, "lens", "", "the lens when no incident id is given: "+strings.Join(incident.Names(), ", "))
	return cmd
}

// NewCmdAIInvestigate builds the investigation of one lens: `cortex ai
// abuse-investigate`, `skill-investigate [SKILL]`, `mcp-investigate
// [TARGET]`, `hook-investigate [HOOK]`.
func NewCmdAIInvestigate(f *Factory, lens string, runF func(context.Context, *IncidentOptions) error) *cobra.Command {
	opts := &IncidentOptions{}
	cmd := &cobra.Command{
		Use:   "abuse-investigate",
		Short: "Evidence and deterministic findings for the top abuse incidents",
		Long: `Builds a bounded evidence bundle per incident — the anchors, the transcript before and
after, failed tool calls and user corrections nearby, non-AI logs and errors of the same
host — and derives findings (failure mode, confidence, evidence ids, prevention hint)
without any LLM. (Before, this was cortex ai investigate, which now takes any lens's
incident id.)`,
		Example: `  cortex ai abuse-investigate --since 7d
  cortex ai abuse-investigate --incident-id inc-… --json`,
		Args: cobra.NoArgs,
	}
	switch lens {
	case cortex.LensFriction:
		cmd.Use = "friction-investigate"
		cmd.Short = "Evidence for the top friction incidents: the user's words, what was active, findings"
		cmd.Long = `For the top friction incidents: the user's own acts and words (user_voice, with their
reaction right after), what each was charged to, the transcript around them, tool
failures nearby and deterministic findings.`
		cmd.Example = `  cortex ai friction-investigate --since 7d
  cortex ai friction-investigate --skill verify --all
  cortex ai friction-investigate --incident-id friction-inc-… --json`
	case cortex.LensSkill:
		cmd.Use = "skill-investigate [SKILL]"
		cmd.Short = "Why did this skill go wrong? Evidence and findings for its top incident"
		cmd.Long = `Give a skill name and get its top incident: header with score and signals, deterministic
findings with prevention hints for the skill document, then evidence excerpts. Other
matching incidents are listed by id. A skill used without a negative signal gets a
low-severity usage summary; an unknown skill gets suggestions (nearest skill names,
wider --since).`
		cmd.Example = `  cortex ai skill-investigate lavra:lavra-plan --since 7d
  cortex ai skill-investigate --plugin lavra --all
  cortex ai skill-investigate worktree --tool codex --json
  cortex ai skill-investigate --incident-id skill-inc-…`
		cmd.Args = cobra.MaximumNArgs(1)
	case cortex.LensMCP:
		cmd.Use, cmd.Args = "mcp-investigate [TARGET]", cobra.MaximumNArgs(1)
		cmd.Short = "Why did this MCP server or tool fail? Evidence and findings for its top incident"
		cmd.Long = `TARGET is an MCP server (labby), a tool name as the agent saw it (mcp__labby__search)
or server/tool (labby/search); the answer says what it matched. You get the top incident:
the calls with the rows that prove each call happened and the rows that prove its result
or failure, deterministic findings with hints aimed at the right layer (tool description,
server, agent instruction), and evidence excerpts. A target used without a negative
signal gets a low-severity usage summary; an unknown one gets suggestions.`
		cmd.Example = `  cortex ai mcp-investigate labby --since 7d
  cortex ai mcp-investigate mcp__labby__search
  cortex ai mcp-investigate labby/search --json`
	case cortex.LensHook:
		cmd.Use, cmd.Args = "hook-investigate [HOOK]", cobra.MaximumNArgs(1)
		cmd.Short = "Why did this hook fail or get in the way? Evidence and findings for its top incident"
		cmd.Long = `HOOK is a hook as you would type it: PostToolUse, post_tool_use or PostToolUse:Bash
(case and separators do not matter; by event, or event:matcher). You get the top
incident: its hook events, the tool calls around it, deterministic findings and
evidence, with the evidence basis stated — runtime transcript rows prove a hook ran,
configuration alone never does. A hook that ran without problems gets a low-severity
usage summary; no hook evidence gets a clear no-data answer with suggestions.`
		cmd.Example = `  cortex ai hook-investigate PostToolUse:Bash --since 7d
  cortex ai hook-investigate post_tool_use --json`
	}
	opts.register(cmd, lens, true)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 {
			opts.setSubject(args[0])
		}
		if runF != nil {
			return runF(cmd.Context(), opts)
		}
		return investigateRun(cmd.Context(), f, opts)
	}
	return cmd
}

// formatFlag registers --format (text, md or json; --json is --format
// json).
func formatFlag(cmd *cobra.Command, format *string) {
	cmd.Flags().StringVar(format, "format", "text", "output: text, md (a Markdown report to paste into an issue or PR) or json")
	cmd.MarkFlagsMutuallyExclusive("json", "format")
}

// checkFormat validates a --format value.
func checkFormat(format string) error {
	switch format {
	case "text", "md", "json":
		return nil
	}
	return cortex.Errorf(cortex.CodeInvalid, "--format must be text, md or json, not %q", format)
}

func investigateRun(ctx context.Context, f *Factory, opts *IncidentOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	p, err := opts.params(f)
	if err != nil {
		return err
	}
	ip := cortex.InvestigateParams{IncidentParams: p, All: opts.All, CorrelationWindowMinutes: opts.CorrelationWindow,
		MaxBytes: opts.MaxBytes}
	return withService(ctx, f, func(s *app.Service) error {
		var res cortex.Investigation
		lens := opts.Lens
		if lens == "" { // cortex ai investigate: the id's, --lens or the subject's lens
			res, lens, err = s.InvestigateAny(ctx, opts.LensName, ip)
		} else {
			res, err = s.Investigate(ctx, lens, ip)
		}
		if err != nil {
			return err
		}
		if res.NoData {
			// Nothing matched: not found, as for cortex assess (exit 3).
			return res.NoDataError(lens)
		}
		switch {
		case opts.JSON || opts.Format == "json":
			return f.IO.WriteJSON(res.Summarized(opts.Detail))
		case opts.Format == "md":
			_, err := io.WriteString(f.IO.Out, report.Investigation(res))
			return err
		}
		printInvestigation(f, res)
		return nil
	})
}

// AbuseOptions are the flags of `cortex ai abuse`.
type AbuseOptions struct {
	scopeFlags
	Terms                          []string
	Before, After, Limit, MaxBytes int
	Cursor                         string
	JSON                           bool
}

// NewCmdAIAbuse builds `cortex ai abuse`.
func NewCmdAIAbuse(f *Factory, runF func(context.Context, *AbuseOptions) error) *cobra.Command {
	opts := &AbuseOptions{}
	cmd := &cobra.Command{
		Use:   "abuse",
		Short: "User messages with abusive terms, with the session rows around them",
		Long: `Finds abusive terms in what users typed (never in tool output or assistant text), on
word boundaries ("hell" does not match "shell"), newest first, each with --before and
--after rows of its session. Default terms: ` + strings.Join(incident.DefaultAbuseTerms(), ", ") + `.`,
		Example: `  cortex ai abuse --since 7d
  cortex ai abuse --term useless --before 5 --after 1 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return abuseRun(cmd.Context(), f, opts)
		},
	}
	opts.scopeFlags.register(cmd)
	fl := cmd.Flags()
	fl.StringSliceVar(&opts.Terms, "term", nil, "terms to look for instead of the defaults (repeatable, at most 16)")
	fl.IntVar(&opts.Before, "before", incident.DefaultAbuseContext, fmt.Sprintf("session rows before each match (max %d)", incident.MaxAbuseContext))
	fl.IntVar(&opts.After, "after", incident.DefaultAbuseContext, fmt.Sprintf("session rows after each match (max %d)", incident.MaxAbuseContext))
	fl.IntVar(&opts.Limit, "limit", incident.DefaultAbuseLimit, fmt.Sprintf("maximum matches (max %d)", incident.MaxAbuseLimit))
	fl.IntVar(&opts.MaxBytes, "max-bytes", incident.DefaultMaxBytes, "bound on the text of each row")
	cursorFlag(cmd, &opts.Cursor)
	fl.BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func abuseRun(ctx context.Context, f *Factory, opts *AbuseOptions) error {
	since, until, err := opts.times(f)
	if err != nil {
		return err
	}
	cursor, err := cortex.DecodeCursor(opts.Cursor)
	if err != nil {
		return err
	}
	p := cortex.AbuseParams{Tool: cortex.Tool(opts.Agent), Project: opts.Project, Session: opts.Session, Host: opts.Host,
		Since: since, Until: until, Terms: opts.Terms, Before: opts.Before, After: opts.After, Limit: opts.Limit, MaxBytes: opts.MaxBytes,
		Cursor: cursor}
	return withService(ctx, f, func(s *app.Service) error {
		res, err := s.AbuseMatches(ctx, p)
		if err != nil {
			return err
		}
		if opts.JSON {
			return f.IO.WriteJSON(res)
		}
		if len(res.Matches) == 0 {
			f.IO.Printf("No abuse terms found in user messages.\n")
			printScan(f, res.CandidateRows, res.CandidateWindowTruncated)
			return nil
		}
		for i, m := range res.Matches {
			if i > 0 {
				f.IO.Printf("\n")
			}
			f.IO.Printf("%s  %s  session %s  term %q\n", f.timeCell(m.Entry.Timestamp, true), m.Entry.Tool, OneLine(m.Entry.SessionID, 40), m.Term)
			for _, r := range m.Before {
				f.IO.Printf("    %s\n", rowLine(f, r, 160))
			}
			f.IO.Printf("  > %s\n", rowLine(f, m.Entry, 400))
			for _, r := range m.After {
				f.IO.Printf("    %s\n", rowLine(f, r, 160))
			}
		}
		printMore(f, len(res.Matches), 0, res.Next)
		printScan(f, res.CandidateRows, res.CandidateWindowTruncated)
		return nil
	})
}

// rowLine renders an evidence row on one line: time, who, text.
func rowLine(f *Factory, r cortex.EvidenceRow, max int) string {
	who := string(r.Role)
	switch {
	case r.Tool == "":
		who = OneLine(r.AppName, 20) + "/" + string(r.Severity)
	case r.ToolName != "":
		who += ":" + OneLine(r.ToolName, 24)
	}
	return fmt.Sprintf("[%d] %s %s  %s", r.ID, f.clockCell(r.Timestamp), who, OneLine(r.Message, max))
}
