package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/ingest"
)

// NewCmdAI builds `cortex ai`: the AI-transcript analysis commands.
func NewCmdAI(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ai",
		Short: "Events, incidents and evidence extracted from transcripts",
		Long: `Cortex extracts normalized events from every transcript record at ingest:
skill use (Claude attribution, Skill tool calls, skill bodies, Codex <skill> blocks),
tool and MCP calls with their results, and hook runs. Hook configuration files
are inventoried separately (configured is not proof a hook ran).

Incidents group negative signals — abusive language, user corrections after a skill,
failing tools, scope confusion, loops, failing MCP calls, failing or blocking hooks —
into scored incidents with stable ids (four lenses: abuse, skill, mcp, hook);
investigate builds bounded evidence bundles with deterministic findings.`,
		Example: `  cortex ai skills --summary
  cortex ai mcp-events --errors --since 7d
  cortex ai hook-events --status failed
  cortex ai backfill --all --dry-run
  cortex ai skill-incidents --since 30d
  cortex ai skill-investigate lavra:lavra-plan
  cortex ai skill-health
  cortex ai skill-compare verify
  cortex ai abuse --since 7d
  cortex ai mcp-investigate labby
  cortex ai hook-incidents PostToolUse:Bash`,
	}
	cmd.AddCommand(
		NewCmdAISkills(f, nil),
		NewCmdAIMCPEvents(f, nil),
		NewCmdAIHookEvents(f, nil),
		NewCmdAIHooks(f),
		NewCmdAIBackfill(f, nil, nil),
		NewCmdAIAbuse(f, nil),
		NewCmdAIAllIncidents(f, nil),
		NewCmdAIInvestigateAny(f, nil),
		NewCmdAIIncidents(f, cortex.LensAbuse, nil),
		NewCmdAIInvestigate(f, cortex.LensAbuse, nil),
		NewCmdAIIncidents(f, cortex.LensSkill, nil),
		NewCmdAIInvestigate(f, cortex.LensSkill, nil),
		NewCmdAIIncidents(f, cortex.LensFriction, nil),
		NewCmdAIInvestigate(f, cortex.LensFriction, nil),
		NewCmdAIIncidents(f, cortex.LensMCP, nil),
		NewCmdAIInvestigate(f, cortex.LensMCP, nil),
		NewCmdAIIncidents(f, cortex.LensHook, nil),
		NewCmdAIInvestigate(f, cortex.LensHook, nil),
		newCmdAIAssessAlias(f, "skill", "skill-assess [SKILL]"),
		newCmdAIAssessAlias(f, "abuse", "assess"),
		NewCmdAISignals(f, nil),
		NewCmdAILLMInvocations(f, nil),
	)
	cmd.AddCommand(newSkillLifecycleCmds(f)...)
	return cmd
}

// scopeFlags are the filters of every AI listing: agent, project, session,
// host and time range.
type scopeFlags struct {
	Agent, Project, Session, Host, Since, Until string
}

func (sc *scopeFlags) register(cmd *cobra.Command) {
	agentFlag(cmd, &sc.Agent)
	cmd.Flags().StringVar(&sc.Project, "project", "", "only this project")
	cmd.Flags().StringVar(&sc.Session, "session", "", "only this session id")
	cmd.Flags().StringVar(&sc.Host, "host", "", "only this host")
	cmd.Flags().StringVar(&sc.Since, "since", "", "newer than (30m, 7d, today, 2026-11-30, RFC 3339)")
	cmd.Flags().StringVar(&sc.Until, "until", "", "older than")
}

// times parses --since and --until.
func (sc *scopeFlags) times(f *Factory) (time.Time, time.Time, error) {
	return timeRange(f, sc.Since, sc.Until)
}

// timeRange parses the --since and --until values.
func timeRange(f *Factory, since, until string) (time.Time, time.Time, error) {
	s, err := timeFlag(f, "since", since)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	u, err := timeFlag(f, "until", until)
	return s, u, err
}

// eventFlags are the filters every event listing takes.
type eventFlags struct {
	scopeFlags
	Limit  int
	Cursor string
	JSON   bool
}

func (e *eventFlags) register(cmd *cobra.Command) {
	e.scopeFlags.register(cmd)
	cmd.Flags().IntVar(&e.Limit, "limit", app.DefaultEventsLimit, fmt.Sprintf("maximum events (max %d)", app.MaxEventsLimit))
	cursorFlag(cmd, &e.Cursor)
	cmd.Flags().BoolVar(&e.JSON, "json", false, `print JSON: {"events":[…],"total":N,"truncated":bool,"next":"…"}`)
}

// cursorFlag registers --cursor: the next page of a listing.
func cursorFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "cursor", "", "continue a listing: the next value of the previous page")
}

func (e *eventFlags) filter(f *Factory) (cortex.EventFilter, error) {
	since, until, err := e.times(f)
	if err != nil {
		return cortex.EventFilter{}, err
	}
	after, err := cortex.DecodeCursor(e.Cursor)
	if err != nil {
		return cortex.EventFilter{}, err
	}
	return cortex.EventFilter{Tool: cortex.Tool(e.Agent), Project: e.Project, Session: e.Session, Host: e.Host,
		Since: since, Until: until, Limit: e.Limit, After: after}, nil
}

// withService opens the store read-only (the local database, or a team
// store with --store) and runs fn with a service.
func withService(ctx context.Context, f *Factory, fn func(*app.Service) error) error {
	st, closeStore, err := f.OpenStore(ctx, false)
	if err != nil {
		return err
	}
	defer closeStore()
	return fn(f.NewService(st))
}

// showResult opens the store, asks get for an answer and prints it: as JSON
// with asJSON, else with print.
func showResult[T any](ctx context.Context, f *Factory, asJSON bool, get func(*app.Service) (T, error), print func(T)) error {
	return withService(ctx, f, func(s *app.Service) error {
		res, err := get(s)
		if err != nil {
			return err
		}
		if asJSON {
			return f.IO.WriteJSON(res)
		}
		print(res)
		return nil
	})
}

// SkillsOptions are the flags of `cortex ai skills`.
type SkillsOptions struct {
	eventFlags
	Skill   string
	Plugin  string
	Summary bool
}

// NewCmdAISkills builds `cortex ai skills`.
func NewCmdAISkills(f *Factory, runF func(context.Context, *SkillsOptions) error) *cobra.Command {
	opts := &SkillsOptions{}
	cmd := &cobra.Command{
		Use:   "skills",
		Short: "List skill events: which skills were loaded or used, where and when",
		Example: `  cortex ai skills --session 3f1c9a60-1111-4a2b-9c1d-000000000007
  cortex ai skills --skill lavra:lavra-plan --since 7d
  cortex ai skills --summary --tool codex --json
  cortex ai skills backfill --since 30d --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return skillsRun(cmd.Context(), f, opts)
		},
	}
	opts.register(cmd)
	cmd.Flags().StringVar(&opts.Skill, "skill", "", "only this skill (e.g. lavra:lavra-plan)")
	cmd.Flags().StringVar(&opts.Plugin, "plugin", "", "only skills of this plugin")
	cmd.Flags().BoolVar(&opts.Summary, "summary", false, "one line per skill: events, sessions, first and last seen")
	cmd.AddCommand(NewCmdAIBackfill(f, []string{"skills"}, nil))
	return cmd
}

func skillsRun(ctx context.Context, f *Factory, opts *SkillsOptions) error {
	flt, err := opts.filter(f)
	if err != nil {
		return err
	}
	p := cortex.SkillEventParams{EventFilter: flt, Skill: opts.Skill, Plugin: opts.Plugin}
	return withService(ctx, f, func(s *app.Service) error {
		if opts.Summary {
			res, err := s.SkillSummaries(ctx, p)
			if err != nil {
				return err
			}
			return printList(f, res, opts.JSON, noSkillEvents, []column{{name: "SKILL", max: 48, shrink: true},
				{name: "PLUGIN", max: 24, shrink: true}, {name: "EVENTS"}, {name: "SESSIONS"}, {name: "AGENTS"}, {name: "FIRST SEEN"},
				{name: "LAST SEEN"}},
				func(e cortex.SkillSummary) []string {
					return []string{e.SkillName, e.SkillPlugin, fmt.Sprint(e.Events), fmt.Sprint(e.Sessions),
						e.Tools, f.timeCell(e.FirstSeen, false), f.timeCell(e.LastSeen, false)}
				})
		}
		res, err := s.SkillEvents(ctx, p)
		if err != nil {
			return err
		}
		return printList(f, res, opts.JSON, noSkillEvents, []column{{name: "TIME"}, {name: "AGENT"},
			{name: "SKILL", max: 48, shrink: true}, {name: "KIND"}, {name: "SESSION"}, {name: "PROJECT", max: 60, shrink: true}},
			func(e cortex.SkillEventRow) []string {
				return []string{f.timeCell(e.Timestamp, true), string(e.Tool), e.SkillName, e.EventKind, shortSession(e.SessionID),
					e.Project}
			})
	})
}

// printList writes an event listing: JSON as is, or a table (header, one
// row per event) followed by how to get the next page, or the empty
// message.
func printList[T any](f *Factory, res cortex.EventList[T], asJSON bool, empty string, cols []column, row func(T) []string) error {
	if asJSON {
		return f.IO.WriteJSON(res)
	}
	if len(res.Events) == 0 {
		f.IO.Printf("%s\n", empty)
		return nil
	}
	t := newTable(f, cols...)
	for _, e := range res.Events {
		t.add(row(e)...)
	}
	t.print()
	printMore(f, len(res.Events), 0, res.Next)
	return nil
}

const noSkillEvents = "No skill events found. (Indexed before events existed? Run: cortex ai backfill --all)"

// MCPEventsOptions are the flags of `cortex ai mcp-events`.
type MCPEventsOptions struct {
	eventFlags
	ToolName string
	Server   string
	MCPTool  string
	MCPOnly  bool
	Errors   bool
}

// NewCmdAIMCPEvents builds `cortex ai mcp-events`.
func NewCmdAIMCPEvents(f *Factory, runF func(context.Context, *MCPEventsOptions) error) *cobra.Command {
	opts := &MCPEventsOptions{}
	cmd := &cobra.Command{
		Use:   "mcp-events",
		Short: "List tool and MCP calls with their results (one row per call)",
		Long: `Each row is one tool call: the call and its result merged (call_log_id proves the call,
result_log_id the outcome). MCP calls have mcp_server/mcp_tool; builtin tools do not.`,
		Example: `  cortex ai mcp-events --server labby --errors
  cortex ai mcp-events --tool-name Bash --since 1d --json
  cortex ai mcp-events backfill --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpEventsRun(cmd.Context(), f, opts)
		},
	}
	opts.register(cmd)
	cmd.Flags().StringVar(&opts.ToolName, "tool-name", "", "only this tool (e.g. Bash, exec_command, mcp__labby__search)")
	cmd.Flags().StringVar(&opts.Server, "server", "", "only this MCP server")
	cmd.Flags().StringVar(&opts.MCPTool, "mcp-tool", "", "only this MCP tool")
	cmd.Flags().BoolVar(&opts.MCPOnly, "mcp-only", false, "only calls classified as MCP")
	cmd.Flags().BoolVar(&opts.Errors, "errors", false, "only failed calls")
	cmd.AddCommand(NewCmdAIBackfill(f, []string{"mcp"}, nil))
	return cmd
}

func mcpEventsRun(ctx context.Context, f *Factory, opts *MCPEventsOptions) error {
	flt, err := opts.filter(f)
	if err != nil {
		return err
	}
	return withService(ctx, f, func(s *app.Service) error {
		res, err := s.ToolEvents(ctx, cortex.ToolEventParams{EventFilter: flt, ToolName: opts.ToolName, MCPServer: opts.Server,
			MCPTool: opts.MCPTool, OnlyMCP: opts.MCPOnly, ErrorsOnly: opts.Errors})
		if err != nil {
			return err
		}
		return printList(f, res, opts.JSON, "No tool calls found.", []column{{name: "TIME"}, {name: "AGENT"},
			{name: "TOOL", max: 48, shrink: true}, {name: "STATUS", style: statusStyle}, {name: "MS"}, {name: "SESSION"},
			{name: "DETAIL", max: 120, shrink: true}},
			func(e cortex.ToolEventRow) []string {
				ms := ""
				if e.DurationMS != nil {
					ms = fmt.Sprint(*e.DurationMS)
				}
				detail := e.ErrorText
				if detail == "" {
					detail = e.ArgumentsJSON
				}
				return []string{f.timeCell(e.Timestamp, true), string(e.Tool), e.ToolName, e.Status, ms, shortSession(e.SessionID),
					detail}
			})
	})
}

// HookEventsOptions are the flags of `cortex ai hook-events`.
type HookEventsOptions struct {
	eventFlags
	Hook         string
	HookEvent    string
	Source       string
	Status       string
	EvidenceKind string
}

// NewCmdAIHookEvents builds `cortex ai hook-events`.
func NewCmdAIHookEvents(f *Factory, runF func(context.Context, *HookEventsOptions) error) *cobra.Command {
	opts := &HookEventsOptions{}
	cmd := &cobra.Command{
		Use:   "hook-events",
		Short: "List hook runs (from transcripts) and configured hooks (from settings files)",
		Long: `evidence_kind says what a row proves: runtime_transcript rows are hook runs the agent
wrote into its transcript; config_inventory and trusted_hash_state rows come from
configuration files and are NOT proof that a hook ran. Codex writes no hook runs
into its rollouts, so Codex hooks only appear as configuration.`,
		Example: `  cortex ai hook-events --status failed
  cortex ai hook-events --hook PostToolUse:Bash --since 7d
  cortex ai hook-events --evidence-kind config_inventory --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return hookEventsRun(cmd.Context(), f, opts)
		},
	}
	opts.register(cmd)
	cmd.Flags().StringVar(&opts.Hook, "hook", "", "only this hook (hook name like PostToolUse:Bash, or an event like Stop)")
	cmd.Flags().StringVar(&opts.HookEvent, "hook-event", "", "only this hook event (SessionStart, PreToolUse, …)")
	cmd.Flags().StringVar(&opts.Source, "source", "", "only configured hooks from this source (e.g. claude:user:settings.json)")
	cmd.Flags().StringVar(&opts.Status, "status", "", "success, failed, blocked, cancelled, error, unknown or configured")
	cmd.Flags().StringVar(&opts.EvidenceKind, "evidence-kind", "", "runtime_transcript, config_inventory or trusted_hash_state")
	return cmd
}

func hookEventsRun(ctx context.Context, f *Factory, opts *HookEventsOptions) error {
	flt, err := opts.filter(f)
	if err != nil {
		return err
	}
	return withService(ctx, f, func(s *app.Service) error {
		res, err := s.HookEvents(ctx, cortex.HookEventParams{EventFilter: flt, Hook: opts.Hook, HookEvent: opts.HookEvent,
			HookSource: opts.Source, Status: opts.Status, EvidenceKind: opts.EvidenceKind})
		if err != nil {
			return err
		}
		return printList(f, res, opts.JSON, "No hook events found.", []column{{name: "TIME"}, {name: "AGENT"},
			{name: "HOOK", max: 40, shrink: true}, {name: "STATUS", style: statusStyle}, {name: "EXIT"}, {name: "EVIDENCE"},
			{name: "COMMAND", max: 120, shrink: true}},
			func(e cortex.HookEventRow) []string {
				exit := ""
				if e.ExitCode != nil {
					exit = fmt.Sprint(*e.ExitCode)
				}
				name := e.HookName
				if name == "" {
					name = e.HookEvent
				}
				return []string{f.timeCell(e.Timestamp, true), string(e.Tool), name, e.Status, exit, e.EvidenceKind, e.HookCommand}
			})
	})
}

// BackfillCLIOptions are the flags of the backfill commands.
type BackfillCLIOptions struct {
	Kinds   []string
	All     bool
	Since   string
	Limit   int
	AfterID int64
	DryRun  bool
	JSON    bool
}

// NewCmdAIBackfill builds a backfill command: `cortex ai backfill` (kinds
// nil: --all or --kind) or `cortex ai <kind> backfill`.
func NewCmdAIBackfill(f *Factory, kinds []string, runF func(context.Context, *BackfillCLIOptions) error) *cobra.Command {
	opts := &BackfillCLIOptions{Kinds: kinds}
	what := "skill, tool-call and hook"
	if len(kinds) == 1 {
		what = map[string]string{"skills": "skill", "mcp": "tool-call (MCP)", "hooks": "hook"}[kinds[0]]
	}
	cmd := &cobra.Command{
		Use:   "backfill",
		Short: fmt.Sprintf("Extract %s events from rows already stored", what),
		Long: fmt.Sprintf(`Rebuilds %s events from the records stored in the database (not from the
transcript files), in keyset batches of 2000 rows with one short write transaction
each. It is idempotent: running it again adds nothing. --dry-run writes nothing and
reports what it would add. Only one backfill runs at a time. Kind bodies recomputes
the body version of every skill load (see docs/skills.md).`, what),
		Example: "  cortex ai backfill --all --since 30d --dry-run\n  cortex ai skills backfill --limit 100000 --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(kinds) == 0 && !opts.All && len(opts.Kinds) == 0 {
				return usageError{fmt.Errorf("say which events to backfill: --all, or --kind skills,mcp,hooks")}
			}
			if opts.All {
				opts.Kinds = nil
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return backfillRun(cmd.Context(), f, opts)
		},
	}
	if len(kinds) == 0 {
		cmd.Flags().BoolVar(&opts.All, "all", false, "all event kinds")
		cmd.Flags().StringSliceVar(&opts.Kinds, "kind", nil, "event kinds: skills, mcp, hooks, users, bodies (skill versions)")
	}
	cmd.Flags().StringVar(&opts.Since, "since", "", "only rows at or after (30m, 7d, 2026-11-30, RFC 3339)")
	cmd.Flags().IntVar(&opts.Limit, "limit", 0, "scan at most this many rows (default: all)")
	cmd.Flags().Int64Var(&opts.AfterID, "after-id", 0, "start after this row id (continue a run stopped by --limit)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "write nothing; report what would be written")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func backfillRun(ctx context.Context, f *Factory, opts *BackfillCLIOptions) error {
	since, err := timeFlag(f, "since", opts.Since)
	if err != nil {
		return err
	}
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	if err := f.LocalOnly("cortex ai backfill"); err != nil {
		return err
	}
	db, err := f.OpenDB(ctx, false)
	if err != nil {
		return err
	}
	defer db.Close()
	progress, done, err := scanProgress(f, opts.JSON, func() (int64, error) {
		total, err := ingest.BackfillScope(ctx, db, opts.Kinds, opts.AfterID, since)
		if opts.Limit > 0 {
			total = min(total, int64(opts.Limit))
		}
		return total, err
	})
	if err != nil {
		return err
	}
	res, err := app.New(db).Backfill(ctx, app.BackfillParams{Kinds: opts.Kinds, Since: since, Limit: opts.Limit, AfterID: opts.AfterID,
		DryRun: opts.DryRun, Hostname: cfg.Hostname, Holder: "cli", Progress: progress})
	done()
	if err != nil {
		return err
	}
	if opts.JSON {
		return f.IO.WriteJSON(res)
	}
	verb := "added"
	if res.DryRun {
		verb = "would add"
	}
	f.IO.Printf("Backfill of %s events: scanned %d rows\n", strings.Join(res.Kinds, ", "), res.Scanned)
	if !(len(res.Kinds) == 1 && res.Kinds[0] == ingest.KindBodies) {
		f.IO.Printf("  %s %d skill, %d tool-call, %d hook and %d user events; %d already stored, %d merged into existing calls\n",
			verb, res.Events.Skills, res.Events.Tools, res.Events.Hooks, res.Events.Users, res.Events.Duplicates, res.Events.Merged)
	}
	if b := res.SkillBodies; b != nil {
		f.IO.Printf("  skill versions: %d loads looked at, %d showed a body\n", b.Loads, b.Bodies)
	}
	if res.ParseErrors > 0 {
		f.IO.Printf("  %d rows could not be read (see --json for details)\n", res.ParseErrors)
	}
	if res.Truncated {
		f.IO.Printf("  stopped at --limit; continue with --after-id %d\n", res.LastID)
	}
	return nil
}

// NewCmdAIHooks builds `cortex ai hooks` (collect-config, backfill).
func NewCmdAIHooks(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Hook configuration inventory and hook-event backfill",
		Example: `  cortex ai hooks collect-config
  cortex ai hooks backfill --dry-run
  cortex ai hook-events --evidence-kind config_inventory`,
	}
	cmd.AddCommand(newCmdAIHooksCollect(f), NewCmdAIBackfill(f, []string{"hooks"}, nil))
	return cmd
}

func newCmdAIHooksCollect(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "collect-config",
		Short: "Record the hooks configured for Claude Code, Codex and Gemini CLI (not proof they ran)",
		Long: `Reads ~/.claude/settings.json, ~/.claude/settings.local.json, ~/.codex/hooks.json,
~/.codex/config.toml ([hooks.state] trust hashes), ~/.gemini/settings.json and the same
files inside every project seen in transcripts, and records each configured hook as
config_inventory (or trusted_hash_state) evidence. A hook already recorded gets a new
last_seen. cortex index runs this too when it indexes the default folders.`,
		Example: "  cortex ai hooks collect-config --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			if err := f.LocalOnly("cortex ai hooks collect-config"); err != nil {
				return err
			}
			db, err := f.OpenDB(ctx, false)
			if err != nil {
				return err
			}
			defer db.Close()
			svc := app.New(db)
			svc.Now = f.Now
			res, err := svc.CollectHookConfig(ctx, cfg.Home, cfg.Hostname)
			if err != nil {
				return err
			}
			if asJSON {
				return f.IO.WriteJSON(res)
			}
			printHookConfig(f, res)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printHookConfig(f *Factory, res app.HookConfigResult) {
	if len(res.Files) == 0 {
		f.IO.Printf("No hook configuration files found.\n")
		return
	}
	for _, fr := range res.Files {
		if fr.Error != "" {
			fmt.Fprintf(f.IO.ErrOut, "cortex: %s: %s\n", Safe(fr.Path), OneLine(fr.Error, 300))
		}
		f.IO.Printf("  %-4d hooks  %s\n", fr.Hooks, Safe(fr.Path))
	}
	f.IO.Printf("%d configured hooks: %d new, %d seen before (configuration only: not proof they ran)\n",
		res.Hooks, res.Inserted, res.Refreshed)
}
