package cli

import (
	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/config"
	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/syslogd"
)

// effectiveConfig is the configuration as the commands use it: every
// setting left unset replaced by its default (the folders cortex index
// reads, the parsers (one per CPU but one), the syslog addresses and sizes, the Gemini
// home), tokens shown as "(set)" and store URLs without their passwords,
// and the price table with its date.
func effectiveConfig(cfg *config.Config) config.Config {
	e := *cfg
	if len(e.Index.Paths) == 0 {
		e.Index.Paths = []string{}
		for _, r := range ingest.DefaultRoots(cfg.Home) {
			e.Index.Paths = append(e.Index.Paths, r.Path)
		}
	}
	if e.Index.Workers == 0 {
		e.Index.Workers = ingest.DefaultWorkers()
	}
	for _, v := range []*string{&e.Syslog.UDP, &e.Syslog.TCP} {
		if *v == "" {
			*v = syslogd.DefaultAddr
		}
	}
	if e.Syslog.QueueSize == 0 {
		e.Syslog.QueueSize = syslogd.DefaultQueueSize
	}
	if e.Syslog.MaxMessageBytes == 0 {
		e.Syslog.MaxMessageBytes = syslogd.DefaultMaxMessageBytes
	}
	if e.LLM.Gemini.Home == "" {
		e.LLM.Gemini.Home = cfg.Home
	}
	if e.LLM.Gemini.Args == nil {
		e.LLM.Gemini.Args = []string{}
	}
	return e.Redacted()
}

// NewCmdConfig builds `cortex config`: print the effective configuration.
func NewCmdConfig(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration (file, then CORTEX_* environment, then defaults)",
		Long: `Prints every setting as the commands use it: from the config file, then the CORTEX_*
environment, then the defaults — unset values are shown with their default, tokens as
(set). The output is valid TOML for a config file. --json prints the same keys.`,
		Example: "  cortex config\n  cortex --config ./cortex.toml config --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			e := effectiveConfig(cfg)
			if asJSON {
				return f.IO.WriteJSON(struct {
					config.Config
					PricesAsOf string `json:"prices_as_of"`
				}{e, cortex.PricesAsOf})
			}
			if cfg.Path != "" {
				f.IO.Printf("# from %s, then the environment and defaults\n", cfg.Path)
			} else {
				f.IO.Printf("# no config file; defaults and environment\n")
			}
			f.IO.Printf("# prices: US dollars per million tokens, defaults as of %s (estimates; override per model)\n", cortex.PricesAsOf)
			f.IO.Printf("%s", e.String())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
