package cli

import (
	"github.com/spf13/cobra"
)

// NewCmdConfig builds `cortex config`: print the effective configuration.
func NewCmdConfig(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "config",
		Short:   "Print the effective configuration (file, then CORTEX_* environment, then defaults)",
		Example: "  cortex config\n  cortex --config ./cortex.toml config --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			if asJSON {
				return f.IO.WriteJSON(map[string]any{"config_file": cfg.Path, "db": cfg.DB, "hostname": cfg.Hostname, "index": cfg.Index})
			}
			if cfg.Path != "" {
				f.IO.Printf("# from %s\n", cfg.Path)
			} else {
				f.IO.Printf("# no config file; defaults and environment\n")
			}
			f.IO.Printf("%s", cfg.String())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
