package cli

import (
	"runtime"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/sqlite"
)

// VersionInfo is what `cortex version --json` prints.
type VersionInfo struct {
	Version string `json:"version"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
	// Schema is the newest store schema this binary knows.
	Schema int `json:"schema_version"`
}

func versionInfo() VersionInfo {
	return VersionInfo{Version: cortex.Version(), Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		Schema: sqlite.SchemaVersion()}
}

// NewCmdVersion builds `cortex version` (also `cortex --version`).
func NewCmdVersion(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the version of this cortex binary",
		Example: "  cortex version\n  cortex --version\n  cortex version --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := versionInfo()
			if asJSON {
				return f.IO.WriteJSON(v)
			}
			f.IO.Printf("cortex %s (%s, %s/%s, schema v%d)\n", v.Version, v.Go, v.OS, v.Arch, v.Schema)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// rejectUnknownSubcommands makes every command that only groups others
// fail on an argument that names no subcommand (`cortex ai skil-incidents`
// is a usage error with suggestions, exit 2) instead of printing help and
// succeeding; called without arguments such a command prints its help.
func rejectUnknownSubcommands(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		rejectUnknownSubcommands(c)
	}
	if !cmd.HasSubCommands() || cmd == cmd.Root() {
		return
	}
	if cmd.Runnable() {
		// A command with its own work and subcommands (ai skills,
		// ai skills backfill): an argument its own Args refuses is most
		// likely a mistyped subcommand.
		if args := cmd.Args; args != nil {
			cmd.Args = func(c *cobra.Command, a []string) error {
				err := args(c, a)
				if err != nil && len(a) > 0 {
					return unknownCommand(c, a[0])
				}
				return err
			}
		}
		return
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		return unknownCommand(cmd, args[0])
	}
}

// unknownCommand is the usage error for a mistyped subcommand name.
func unknownCommand(cmd *cobra.Command, name string) error {
	msg := "unknown command " + quote(name) + " for " + quote(cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	if s := cmd.SuggestionsFor(name); len(s) > 0 {
		msg += "; did you mean " + quote(s[0]) + "?"
	} else {
		msg += "; see " + quote(cmd.CommandPath()+" --help")
	}
	return usageError{errString(msg)}
}

type errString string

func (e errString) Error() string { return string(e) }

func quote(s string) string { return "\"" + Safe(s) + "\"" }
