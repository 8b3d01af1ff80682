package cli

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/config"
	"github.com/cortexhq/cortex/mcpserver"
	"github.com/cortexhq/cortex/watch"
)

// MCPOptions are the flags of `cortex mcp`.
type MCPOptions struct {
	// Admin grants the cortex:admin scope (llm_invocations,
	// skills_backfill) besides cortex:read.
	Admin bool
	// NoWatch indexes once before answering and does not watch for new
	// transcript lines afterwards.
	NoWatch bool
	// IndexWait bounds how long the first index pass may delay the first
	// answer; a longer pass goes on while the server answers.
	IndexWait time.Duration
}

// DefaultIndexWait is how long `cortex mcp` waits for its first index pass.
const DefaultIndexWait = 20 * time.Second

// Caller is who the stdio server calls actions as.
func (o *MCPOptions) Caller() app.Caller {
	scopes := []app.Scope{app.ScopeRead}
	if o.Admin {
		scopes = append(scopes, app.ScopeAdmin)
	}
	return app.Caller{Surface: cortex.SurfaceMCP, Scopes: scopes, Name: "stdio"}
}

// NewCmdMCP builds `cortex mcp`. runF replaces the run function in tests.
func NewCmdMCP(f *Factory, runF func(context.Context, *MCPOptions) error) *cobra.Command {
	opts := &MCPOptions{}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve Cortex's actions as MCP tools over stdio (for agent configs)",
		Long: `Runs an MCP server on stdin/stdout for a coding agent. Before it answers, it
brings the store up to date: it creates the database if there is none and indexes the
transcript folders incrementally (what cortex index reads; unchanged files cost one
stat), then keeps watching them, so the agent asks about its own latest sessions.
A first index that takes longer than --index-wait goes on while the server answers.
With --store it serves a team store as it is (no index, no watcher: laptops push to it).

Tools: incidents (what went wrong, every lens), investigate (findings and key evidence
of an incident; detail=true for the full bundle, format=md for a Markdown report),
search, sessions, session_show, row_show, events (kind=skill, mcp, hook or abuse),
skill (view=health, versions, compare, propose or evals: for skill authors), signals,
status — each with its own parameter schema and output schema, so each can be
allow-listed on its own (the agent shows them as mcp__cortex__investigate). A lens's
own REST route (skill_incidents, mcp_investigate, …) is the incidents or investigate
tool with lens=… or a subject filter; the event listings, abuse and the skill_* routes
are the events and skill tools with kind=… or view=…. skill_assess and help are CLI
and REST only.

Tools get the cortex:read scope; --admin adds cortex:admin and lists llm_invocations,
skills_backfill, redact_rescan and purge (a client without it never sees them).

Stdout carries the protocol only; logs go to stderr.

Setup:
  Claude Code:  claude mcp add cortex -- cortex mcp
  Codex (~/.codex/config.toml):
    [mcp_servers.cortex]
    command = "cortex"
    args = ["mcp"]
  Gemini CLI (~/.gemini/settings.json):
    {"mcpServers":{"cortex":{"command":"cortex","args":["mcp"]}}}`,
		Example: `  claude mcp add cortex -- cortex mcp
  claude mcp add cortex-admin -- cortex --db ~/cortex.db mcp --admin`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Admin, "admin", false, "also grant the cortex:admin scope (llm_invocations, skills_backfill)")
	cmd.Flags().BoolVar(&opts.NoWatch, "no-watch", false, "index once before answering, then stop watching the transcript folders")
	cmd.Flags().DurationVar(&opts.IndexWait, "index-wait", DefaultIndexWait,
		"how long the first index pass may delay answering (it goes on in the background after)")
	return cmd
}

func mcpRun(ctx context.Context, f *Factory, opts *MCPOptions) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	if cfg.Store != "" {
		return mcpTeam(ctx, f, opts, cfg)
	}
	db, err := f.OpenDB(ctx, false) // creates and migrates the store if needed
	if err != nil {
		return err
	}
	defer db.Close()
	svc := f.NewService(db)
	// No model ever runs from MCP: skill_assess previews the prompt through
	// the runner (its limits) and writes nothing.
	if err := svc.EnableLLM(ctx, cfg.LLM, f.Provider); err != nil {
		return err
	}
	wopts, err := watchOptions(f, nil)
	if err != nil {
		return err
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	first := make(chan struct{})
	var once sync.Once
	wopts.OnIngest = func(r watch.Report) {
		if r.Full {
			once.Do(func() { close(first) })
		}
	}
	watched := make(chan error, 1)
	go func() { watched <- watch.Run(watchCtx, db, wopts) }()
	select {
	case <-first:
	case err := <-watched:
		return err
	case <-ctx.Done():
		return nil
	case <-time.After(opts.IndexWait):
		fmt.Fprintf(f.IO.ErrOut, "cortex mcp: the first index pass takes longer than %s; answering while it goes on\n", opts.IndexWait)
	}
	if opts.NoWatch {
		go func() { <-first; stopWatch() }() // finish the first pass, then stop
	}
	serveErr := mcpserver.ServeStdio(ctx, svc, opts.Caller(), cortex.Version())
	stopWatch()
	if err := <-watched; err != nil && serveErr == nil {
		serveErr = err
	}
	if serveErr != nil {
		return fmt.Errorf("cortex mcp: %w", serveErr)
	}
	return nil
}

// mcpTeam serves a team store (--store): what laptops push, read as it is
// (no index pass, no watcher: a team store receives rows through cortex
// push).
func mcpTeam(ctx context.Context, f *Factory, opts *MCPOptions, cfg *config.Config) error {
	st, closeStore, err := f.OpenStore(ctx, true)
	if err != nil {
		return err
	}
	defer closeStore()
	svc := f.NewService(st)
	if err := svc.EnableLLM(ctx, cfg.LLM, f.Provider); err != nil {
		return err
	}
	if err := mcpserver.ServeStdio(ctx, svc, opts.Caller(), cortex.Version()); err != nil {
		return fmt.Errorf("cortex mcp: %w", err)
	}
	return nil
}
