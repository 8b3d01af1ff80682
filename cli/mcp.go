package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/mcpserver"
)

// MCPOptions are the flags of `cortex mcp`.
type MCPOptions struct {
	// Admin grants the cortex:admin scope (llm_invocations,
	// skills_backfill) besides cortex:read.
	Admin bool
}

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
		Long: `Runs an MCP server on stdin/stdout for a coding agent. Every Cortex action is one
tool of the same name (status, search, skill_investigate, …; the agent shows them as
mcp__cortex__skill_investigate), with its own parameter schema, so each can be
allow-listed on its own. Call help for the actions and how to use them cheaply.

Tools get the cortex:read scope; --admin adds cortex:admin (llm_invocations,
skills_backfill). skill_assess returns findings and a dry-run prompt preview (a read:
nothing is written); the LLM itself runs only in ` + "`cortex assess`" + `.

Stdout carries the protocol only; logs go to stderr. The database must exist
(run ` + "`cortex index`" + ` first); it is opened for writing because admin actions
(skills_backfill) write.

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
	return cmd
}

func mcpRun(ctx context.Context, f *Factory, opts *MCPOptions) error {
	db, closeStore, err := f.OpenStore(ctx, true)
	if err != nil {
		return err
	}
	defer closeStore()
	cfg, _ := f.Config()
	svc := f.NewService(db)
	// No model ever runs from MCP: skill_assess previews the prompt through
	// the runner (its limits) and writes nothing.
	if err := svc.EnableLLM(ctx, cfg.LLM, f.Provider); err != nil {
		return err
	}
	if err := mcpserver.ServeStdio(ctx, svc, opts.Caller(), cortex.Version()); err != nil {
		return fmt.Errorf("cortex mcp: %w", err)
	}
	return nil
}
