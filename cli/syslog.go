package cli

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/config"
	"github.com/cortexhq/cortex/syslogd"
)

// SyslogFlags are the receiver's flags, shared by `cortex syslog` and
// `cortex serve` (there prefixed "syslog-").
type SyslogFlags struct {
	UDP             string
	TCP             string
	QueueSize       int
	MaxMessageBytes int
}

// Register adds the flags to cmd, each name prefixed with prefix.
func (s *SyslogFlags) Register(cmd *cobra.Command, prefix string) {
	fs := cmd.Flags()
	fs.StringVar(&s.UDP, prefix+"udp", syslogd.DefaultAddr, `UDP listen address ("off" to disable)`)
	fs.StringVar(&s.TCP, prefix+"tcp", syslogd.DefaultAddr, `TCP listen address ("off" to disable)`)
	fs.IntVar(&s.QueueSize, prefix+"queue-size", syslogd.DefaultQueueSize, "messages buffered before new ones are dropped (and counted)")
	fs.IntVar(&s.MaxMessageBytes, prefix+"max-message-bytes", syslogd.DefaultMaxMessageBytes, "longer messages are cut (and marked)")
}

// SyslogOptions are the flags of `cortex syslog`.
type SyslogOptions struct {
	SyslogFlags
	// Ready, when set, is called with the bound addresses (tests).
	Ready func(udp, tcp net.Addr)
}

// NewCmdSyslog builds `cortex syslog`.
func NewCmdSyslog(f *Factory, runF func(context.Context, *SyslogOptions) error) *cobra.Command {
	opts := &SyslogOptions{}
	cmd := &cobra.Command{
		Use:   "syslog",
		Short: "Receive syslog messages (UDP and TCP) into the store as non-AI log rows",
		Long: `Runs the syslog receiver alone (cortex serve --syslog runs it next to the API).

Listens on 127.0.0.1:1514 for UDP (one message per datagram) and TCP (octet-counted
or newline-framed messages), parses RFC 5424 and RFC 3164 messages and stores them
with ai_tool NULL: they are searchable, listed by cortex logs, and shown as
nearby_logs / nearby_errors in incident evidence of the same host.

Nothing is lost silently: messages that do not parse are stored whole with a
parse-error note, longer ones are cut and marked, and when the queue is full
messages are dropped and counted (cortex status shows received, stored, dropped,
malformed and kernel-dropped counts). Ctrl-C stores what was queued and stops.`,
		Example: `  cortex syslog
  cortex syslog --udp 0.0.0.0:1514 --tcp off
  logger -n 127.0.0.1 -P 1514 -d "hello from logger"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return syslogRun(cmd.Context(), f, opts)
		},
	}
	opts.Register(cmd, "")
	return cmd
}

// syslogOptions builds the receiver's options from the configuration and
// flags (nil flags: the defaults).
func syslogOptions(f *Factory, cfg *config.Config, fl *SyslogFlags) (syslogd.Options, error) {
	// A flag left at its default yields to the [syslog] configuration.
	c := cfg.Syslog
	o := syslogd.Options{UDP: listenFlag(orDefault(c.UDP, syslogd.DefaultAddr)), TCP: listenFlag(orDefault(c.TCP, syslogd.DefaultAddr)),
		QueueSize: c.QueueSize, MaxMessageBytes: c.MaxMessageBytes, Hostname: cfg.Hostname, Logger: f.Logger}
	if fl != nil {
		if fl.UDP != syslogd.DefaultAddr {
			o.UDP = listenFlag(fl.UDP)
		}
		if fl.TCP != syslogd.DefaultAddr {
			o.TCP = listenFlag(fl.TCP)
		}
		if fl.QueueSize != syslogd.DefaultQueueSize {
			o.QueueSize = fl.QueueSize
		}
		if fl.MaxMessageBytes != syslogd.DefaultMaxMessageBytes {
			o.MaxMessageBytes = fl.MaxMessageBytes
		}
	}
	if o.UDP == "" && o.TCP == "" {
		return o, cortex.Errorf(cortex.CodeInvalid, "syslog: both UDP and TCP are off")
	}
	if o.QueueSize < 0 || o.MaxMessageBytes < 0 {
		return o, cortex.Errorf(cortex.CodeInvalid, "syslog: queue size and message size must be positive")
	}
	return o, nil
}

func orDefault(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return v
}

// listenFlag maps "off" (and "") to a disabled transport.
func listenFlag(v string) string {
	v = strings.TrimSpace(v)
	if strings.EqualFold(v, "off") || strings.EqualFold(v, "none") {
		return ""
	}
	return v
}

func syslogRun(ctx context.Context, f *Factory, opts *SyslogOptions) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	sopts, err := syslogOptions(f, cfg, &opts.SyslogFlags)
	if err != nil {
		return err
	}
	if err := f.LocalOnly("cortex syslog"); err != nil {
		return err
	}
	db, err := f.OpenDB(ctx, false)
	if err != nil {
		return err
	}
	defer db.Close()
	sopts.Ready = func(udp, tcp net.Addr) {
		fmt.Fprintf(f.IO.ErrOut, "cortex syslog: listening on udp %s, tcp %s; storing into %s\n", addrOrOff(udp), addrOrOff(tcp), db.Path())
		if opts.Ready != nil {
			opts.Ready(udp, tcp)
		}
	}
	srv, err := syslogd.New(db, sopts)
	if err != nil {
		return err
	}
	if err := srv.Run(ctx); err != nil {
		return err
	}
	st := srv.Stats().Total()
	fmt.Fprintf(f.IO.ErrOut, "cortex syslog: stopped: %d received, %d stored, %d dropped, %d malformed, %d oversized\n",
		st.Received, st.Stored, st.Dropped+st.KernelDrops, st.Malformed, st.Oversized)
	return nil
}

func addrOrOff(a net.Addr) string {
	if a == nil {
		return "off"
	}
	return a.String()
}
