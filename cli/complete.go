package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/incident"
)

// Dynamic shell completion (cortex completion bash|zsh|fish|powershell):
// skill names, MCP servers and tools, hooks and session ids come from the
// store, so they complete to what was actually seen; agents, lenses,
// roles and signals to their fixed values.

// completer answers one completion from the store the read commands read
// (the local store read-only, or the team store of --store; no store, no
// answers).
type completer func(ctx context.Context, db app.Store, typed string) ([]string, error)

func (f *Factory) complete(fn completer) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		db, closeDB, err := f.OpenStore(ctx, false)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer closeDB()
		all, err := fn(ctx, db, typed)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return prefixed(all, typed), cobra.ShellCompDirectiveNoFileComp
	}
}

func fixed(values ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return prefixed(values, typed), cobra.ShellCompDirectiveNoFileComp
	}
}

func prefixed(all []string, typed string) []cobra.Completion {
	var out []cobra.Completion
	seen := map[string]bool{}
	for _, v := range all {
		if v != "" && !seen[v] && strings.HasPrefix(strings.ToLower(v), strings.ToLower(typed)) {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func skillNames(ctx context.Context, db app.Store, _ string) ([]string, error) {
	return db.SkillNames(ctx)
}

// mcpNames lists the MCP servers seen, and with tools also server/tool.
func mcpNames(tools bool) completer {
	return func(ctx context.Context, db app.Store, _ string) ([]string, error) {
		names, err := db.MCPNames(ctx)
		var out []string
		for _, n := range names {
			out = append(out, n.Server)
			if tools && n.Tool != "" {
				out = append(out, n.Server+"/"+n.Tool)
			}
		}
		return out, err
	}
}

// hookNames lists the hook events seen, and with names also the hook
// names (PostToolUse:Bash).
func hookNames(names bool) completer {
	return func(ctx context.Context, db app.Store, _ string) ([]string, error) {
		hooks, err := db.HookNames(ctx)
		var out []string
		for _, h := range hooks {
			out = append(out, h.Event)
			if names && h.Name != "" {
				out = append(out, h.Name)
			}
		}
		return out, err
	}
}

func sessionIDs(ctx context.Context, db app.Store, typed string) ([]string, error) {
	return db.RecentSessionIDs(ctx, typed, 200)
}

func allSignals() []string {
	var out []string
	for _, name := range incident.Names() {
		l, _ := incident.LensByName(name)
		out = append(out, incident.Signals(l)...)
	}
	return out
}

// registerCompletions gives every command of the tree the completions of
// its flags (by flag name) and of its positional subject.
func registerCompletions(f *Factory, root *cobra.Command) {
	var roles []string
	for _, r := range cortex.Roles() {
		roles = append(roles, string(r))
	}
	byFlag := map[string]cobra.CompletionFunc{
		"agent":      fixed(string(cortex.ToolClaude), string(cortex.ToolCodex), string(cortex.ToolGemini)),
		"lens":       fixed(incident.Names()...),
		"role":       fixed(roles...),
		"signal":     fixed(allSignals()...),
		"kind":       fixed("skills", "mcp", "hooks"),
		"skill":      f.complete(skillNames),
		"server":     f.complete(mcpNames(false)),
		"target":     f.complete(mcpNames(true)),
		"hook":       f.complete(hookNames(true)),
		"hook-event": f.complete(hookNames(false)),
		"session":    f.complete(sessionIDs),
	}
	byCommand := map[string]cobra.CompletionFunc{
		"cortex ai skill-investigate": f.complete(skillNames),
		"cortex ai skill-assess":      f.complete(skillNames),
		"cortex assess skill":         f.complete(skillNames),
		"cortex ai mcp-incidents":     f.complete(mcpNames(true)),
		"cortex ai mcp-investigate":   f.complete(mcpNames(true)),
		"cortex assess mcp":           f.complete(mcpNames(true)),
		"cortex ai hook-incidents":    f.complete(hookNames(true)),
		"cortex ai hook-investigate":  f.complete(hookNames(true)),
		"cortex assess hooks":         f.complete(hookNames(true)),
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, fn := range byFlag {
			if c.Flags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, fn)
			}
		}
		if fn := byCommand[c.CommandPath()]; fn != nil && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = onlyFirst(fn)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// onlyFirst completes the first positional argument only.
func onlyFirst(fn cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return fn(cmd, args, typed)
	}
}
