package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cortexhq/cortex/app"
)

// cliName maps registry parameter names to CLI flags where they differ;
// positional parameters map to "".
var cliName = map[string]map[string]string{
	"*": {"window_minutes": "window", "signals": "signal", "terms": "term",
		"correlation_window_minutes": "correlation-window"},
	"mcp_events":        {"mcp_server": "server", "only_mcp": "mcp-only"},
	"incidents":         {"mcp_server": "server", "hook_source": "source"},
	"investigate":       {"mcp_server": "server", "hook_source": "source", "lens": "lens"},
	"hook_events":       {"hook_source": "source"},
	"mcp_incidents":     {"mcp_server": "server", "target": ""},
	"mcp_investigate":   {"mcp_server": "server", "target": ""},
	"hook_incidents":    {"hook_source": "source", "hook": ""},
	"hook_investigate":  {"hook_source": "source", "hook": ""},
	"search":            {"query": ""},
	"skill_investigate": {"skill": ""},
	"skill_assess":      {"skill": ""},
	"help":              {"action": ""},
	"skills_backfill":   {"kinds": ""},
	"session_show":      {"session": "", "row": "row"},
	"row_show":          {"id": ""},
	"redact_rescan":     {},
	"skill_versions":    {"skill": ""},
	"skill_health":      {"skill": ""},
	"skill_compare":     {"skill": ""},
	"skill_propose":     {"skill": ""},
	"skill_evals":       {"skill": ""},
}

// TestEveryActionHasACommandWithItsParameters keeps the CLI in step with
// the registry: each action's command exists and takes each parameter as
// a flag (or positional argument).
func TestEveryActionHasACommandWithItsParameters(t *testing.T) {
	root := NewRootCmd(NewFactory())
	for _, a := range app.Actions() {
		var path []string
		for _, w := range strings.Fields(a.CLI)[1:] {
			if strings.HasPrefix(w, "-") || strings.ToUpper(w) == w || strings.HasPrefix(w, "[") {
				break
			}
			path = append(path, w)
		}
		cmd, rest, err := root.Find(path)
		if err != nil || len(rest) > 0 || (len(path) > 0 && cmd == root) {
			t.Errorf("%s: no command %q", a.Name, a.CLI)
			continue
		}
		for _, p := range a.Params() {
			flag, mapped := cliName[a.Name][p]
			if !mapped {
				if flag, mapped = cliName["*"][p]; !mapped {
					flag = strings.ReplaceAll(p, "_", "-")
				}
			}
			if flag == "" {
				continue
			}
			if !hasFlag(cmd, flag) {
				t.Errorf("%s: parameter %s has no flag --%s on `cortex %s`", a.Name, p, flag, strings.Join(path, " "))
			}
		}
	}
}

func hasFlag(cmd *cobra.Command, name string) bool {
	var found bool
	cmd.Flags().VisitAll(func(f *pflag.Flag) { found = found || f.Name == name })
	cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) { found = found || f.Name == name })
	return found
}
