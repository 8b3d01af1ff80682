package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cortexhq/cortex"
)

// NewRootCmd builds the `cortex` command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "cortex",
		Short: "Turn AI coding-agent transcripts into evidence about why agents fail their users",
		Long: `Cortex ingests Claude Code, Codex CLI and Gemini CLI transcripts into an embedded
SQLite store with full-text search, and finds the incidents in them.`,
		Example: `  cortex index                 # index ~/.claude, ~/.codex, ~/.gemini transcripts
  cortex search "permission denied" --since 7d
  cortex sessions --tool codex
  cortex status`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&f.DBPath, "db", "", "database file (default $XDG_DATA_HOME/cortex/cortex.db; env CORTEX_DB)")
	root.PersistentFlags().StringVar(&f.StoreURL, "store", "", "read a team's PostgreSQL store (postgres://…) instead of the local database (env CORTEX_STORE)")
	root.PersistentFlags().StringVar(&f.ConfigPath, "config", "", "config file (default $XDG_CONFIG_HOME/cortex/config.toml; env CORTEX_CONFIG)")
	root.PersistentFlags().BoolVar(&f.UTC, "utc", false, "show times in UTC instead of the local time zone")
	var cpuProfile string
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile to this file")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	var stopProfile func()
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if cpuProfile == "" {
			return nil
		}
		out, err := os.Create(cpuProfile)
		if err != nil {
			return cortex.WrapError(cortex.CodeInvalid, err, "cannot create %s: %v", cpuProfile, err)
		}
		if err := pprof.StartCPUProfile(out); err != nil {
			out.Close()
			return cortex.WrapError(cortex.CodeInvalid, err, "cannot profile: %v", err)
		}
		stopProfile = func() { pprof.StopCPUProfile(); out.Close() }
		return nil
	}
	root.PersistentPostRun = func(cmd *cobra.Command, args []string) {
		if stopProfile != nil {
			stopProfile()
		}
	}
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetIn(f.IO.In)
	root.AddCommand(
		NewCmdIndex(f, nil),
		NewCmdSearch(f, nil),
		NewCmdSessions(f, nil),
		NewCmdShow(f),
		NewCmdStatus(f, nil),
		NewCmdAI(f),
		NewCmdAssess(f, nil),
		NewCmdServe(f, nil),
		NewCmdWatch(f, nil),
		NewCmdMCP(f, nil),
		NewCmdBench(f),
		NewCmdConfig(f),
		NewCmdSyslog(f, nil),
		NewCmdLogs(f, nil),
		NewCmdIngestLogs(f, nil),
		NewCmdPush(f, nil),
		NewCmdVersion(f),
		NewCmdRedact(f, nil),
		NewCmdPurge(f, nil),
	)
	root.SetGlobalNormalizationFunc(agentAlias)
	root.Version = cortex.Version()
	root.SetVersionTemplate("cortex {{.Version}}\n")
	rejectUnknownSubcommands(root)
	registerCompletions(f, root)
	return root
}

// Execute runs the CLI and returns the process exit code. Errors print as
// one line on stderr, or as {"error":{"code","message"}} on stdout when the
// command was given --json.
func Execute(ctx context.Context, f *Factory, args []string) int {
	root := NewRootCmd(f)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	code := cortex.ErrorCode(err)
	msg := cortex.ErrorMessage(err)
	var rep reportedError
	if errors.As(err, &rep) {
		return code.ExitCode() // the command's output already says what failed
	}
	var ce *cortex.Error
	if !errors.As(err, &ce) {
		// Flag and argument errors from cobra are usage errors.
		if cmd != nil && isUsageError(err) {
			code, msg = cortex.CodeInvalid, err.Error()
		} else if errors.Is(err, context.Canceled) {
			code, msg = cortex.CodeUnavailable, "canceled"
		} else {
			f.Logger.Debug("command failed", "err", err)
			msg = err.Error()
		}
	}
	if cmd != nil && jsonFlag(cmd) {
		_ = f.IO.WriteJSON(map[string]any{"error": map[string]string{"code": string(code), "message": msg}})
	} else {
		fmt.Fprintf(f.IO.ErrOut, "cortex: %s\n", Safe(msg))
	}
	return code.ExitCode()
}

func jsonFlag(cmd *cobra.Command) bool {
	fl := cmd.Flags().Lookup("json")
	return fl != nil && fl.Value.String() == "true"
}

// reportedError marks a failure the command's own output already
// reports (a --json summary listing its errors): Execute only turns it
// into the exit code.
type reportedError struct{ error }

func (r reportedError) Unwrap() error { return r.error }

// reported wraps err (nil stays nil) as already reported.
func reported(err error) error {
	if err == nil {
		return nil
	}
	return reportedError{err}
}

// usageError marks errors in how a command was invoked.
type usageError struct{ error }

func isUsageError(err error) bool {
	var u usageError
	if errors.As(err, &u) {
		return true
	}
	s := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand", "flag needs an argument", "invalid argument", "accepts ", "requires at least", "unknown command", "required flag", "bad flag syntax"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// agentFlag registers --agent (claude, codex or gemini); --tool, its
// older name, is still accepted.
func agentFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().SetNormalizeFunc(agentAlias)
	cmd.Flags().StringVar(v, "agent", "", "only this agent: claude, codex or gemini (older name: --tool)")
}

// agentAlias maps the flag --tool to --agent.
func agentAlias(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if name == "tool" {
		name = "agent"
	}
	return pflag.NormalizedName(name)
}

// timeFlag parses a --since/--until value (zero time when empty).
func timeFlag(f *Factory, name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := cortex.ParseTimeArg(v, f.Now())
	if err != nil {
		return time.Time{}, cortex.Errorf(cortex.CodeInvalid, "--%s: %s", name, cortex.ErrorMessage(err))
	}
	return t, nil
}
