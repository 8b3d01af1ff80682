package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/httpapi"
	"github.com/cortexhq/cortex/httpapi/dashboard"
	"github.com/cortexhq/cortex/mcpserver"
	"github.com/cortexhq/cortex/postgres"
	"github.com/cortexhq/cortex/sqlite"
	"github.com/cortexhq/cortex/syslogd"
	"github.com/cortexhq/cortex/watch"
)

// ServeOptions are the flags of `cortex serve`.
type ServeOptions struct {
	Listen  string
	NoWatch bool
	Paths   []string
	// Syslog runs the syslog receiver too ([syslog] enabled does the
	// same); SyslogFlags are its --syslog-* flags.
	Syslog      bool
	SyslogFlags SyslogFlags
	// Ready, when set, is called with the bound address (tests).
	Ready func(addr string)
}

// NewCmdServe builds `cortex serve`.
func NewCmdServe(f *Factory, runF func(context.Context, *ServeOptions) error) *cobra.Command {
	opts := &ServeOptions{}
	cmd := &cobra.Command{
		Use:   "serve [PATH...]",
		Short: "Serve the web dashboard, the REST API and MCP over HTTP, and index transcripts as they are written",
		Long: `Runs, in one process: the web dashboard (/, open http://127.0.0.1:3100 in a browser),
the REST API (/api/…, OpenAPI at /api/openapi.json), the MCP
streamable-HTTP endpoint (/mcp), /health, the realtime watcher that indexes
transcript lines as the agents write them (like cortex watch; --no-watch to skip),
and with --syslog (or [syslog] enabled) the syslog receiver (like cortex syslog).

With --store postgres://… (or store, CORTEX_STORE) it serves a team's store instead —
what every laptop sends with cortex push — with the same dashboard, REST routes and
MCP tools, and a host filter on each; there is no watcher or syslog receiver then.

Listens on 127.0.0.1:3100 by default ([server] listen, CORTEX_LISTEN, --listen).
Authentication: bearer tokens [server] read_token (CORTEX_READ_TOKEN, scope cortex:read)
and admin_token (CORTEX_ADMIN_TOKEN, cortex:read + cortex:admin). Without tokens the
server is read-only and refuses non-loopback addresses. The LLM never runs from here:
skill_assess returns findings and a dry-run preview.

Ctrl-C (or SIGTERM) stops it gracefully: requests in flight finish (10 s at most), the
watcher finishes its pass.`,
		Example: `  cortex serve
  CORTEX_READ_TOKEN=… CORTEX_ADMIN_TOKEN=… cortex serve --listen 0.0.0.0:3100
  cortex serve --store postgres://cortex:change-me@db.example.com:5432/cortex --listen 0.0.0.0:3100
  curl -H "Authorization: Bearer $CORTEX_READ_TOKEN" 'localhost:3100/api/ai/skill-incidents?since=7d'`,
	}
	cmd.Flags().StringVar(&opts.Listen, "listen", "", "HTTP address (default [server] listen, 127.0.0.1:3100)")
	cmd.Flags().BoolVar(&opts.NoWatch, "no-watch", false, "do not watch transcript folders")
	cmd.Flags().BoolVar(&opts.Syslog, "syslog", false, "also receive syslog over UDP and TCP (default 127.0.0.1:1514; see cortex syslog)")
	opts.SyslogFlags.Register(cmd, "syslog-")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		opts.Paths = args
		if runF != nil {
			return runF(cmd.Context(), opts)
		}
		return serveRun(cmd.Context(), f, opts)
	}
	return cmd
}

func serveRun(ctx context.Context, f *Factory, opts *ServeOptions) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	syslogOn := opts.Syslog || cfg.Syslog.Enabled
	var sopts syslogd.Options
	if syslogOn {
		if sopts, err = syslogOptions(f, cfg, &opts.SyslogFlags); err != nil {
			return err
		}
	}
	listen := cfg.Server.Listen
	if opts.Listen != "" {
		listen = opts.Listen
	}
	hopts := httpapi.Options{ReadToken: cfg.Server.ReadToken, AdminToken: cfg.Server.AdminToken, Logger: f.Logger,
		Version: cortex.Version(), Listen: listen, AllowedHosts: cfg.Server.AllowedHosts}
	if err := httpapi.CheckListen(listen, hopts); err != nil {
		return err
	}
	team := cfg.Store != ""
	var local *sqlite.DB
	if team && opts.Syslog {
		return cortex.Errorf(cortex.CodeInvalid, "--syslog writes the local store; serving a team store (--store) it is off "+
			"(run cortex syslog beside cortex push --watch on the machine that receives the logs)")
	}
	syslogOn = syslogOn && !team
	var st app.Store
	if team {
		// The team's server creates the schema, so it can start before the
		// first push (and shows an empty store).
		pg, err := postgres.Open(ctx, cfg.Store, postgres.Options{Migrate: true, Logger: f.Logger, Now: f.Now, MaxConns: 16})
		if err != nil {
			return err
		}
		defer pg.Close()
		st = pg
	} else {
		db, err := f.OpenDB(ctx, false)
		if err != nil {
			return err
		}
		defer db.Close()
		local, st = db, db
	}
	svc := f.NewService(st)
	// Remote callers never reach a model: skill_assess previews the
	// prompt through the runner and writes nothing.
	if err := svc.EnableLLM(ctx, cfg.LLM, f.Provider); err != nil {
		return err
	}
	hopts.MCP = mcpserver.HTTPHandler(svc, httpapi.CallerFrom, cortex.Version())
	dash, err := dashboard.New(svc, dashboard.Options{ReadToken: cfg.Server.ReadToken, AdminToken: cfg.Server.AdminToken,
		Logger: f.Logger, Version: cortex.Version()})
	if err != nil {
		return err
	}
	defer dash.Close()
	hopts.Dashboard = dash
	var tlsConfig *tls.Config
	if cfg.Server.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.Server.TLSCert, cfg.Server.TLSKey)
		if err != nil {
			return cortex.WrapError(cortex.CodeInvalid, err, "[server] tls_cert/tls_key: %v", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "cannot listen on %s: %v", listen, err)
	}
	ln = httpapi.LimitListener(ln, cfg.Server.MaxConnections)
	srv := httpapi.NewServer(httpapi.NewHandler(svc, hopts))
	srv.BaseContext = func(net.Listener) context.Context { return context.WithoutCancel(ctx) }
	srv.TLSConfig = tlsConfig
	addr := ln.Addr().String()
	auth := "no token: read-only, loopback only"
	if cfg.Server.ReadToken != "" || cfg.Server.AdminToken != "" {
		auth = "bearer tokens required"
	}
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
	}
	fmt.Fprintf(f.IO.ErrOut, "cortex serve: %s://%s  (dashboard /, REST /api, MCP /mcp, OpenAPI /api/openapi.json; %s)\n", scheme, addr, auth)
	if team {
		fmt.Fprintf(f.IO.ErrOut, "cortex serve: team store %s (what laptops push; no watcher)\n", postgres.Redact(cfg.Store))
	}
	dash.Warm()
	if opts.Ready != nil {
		opts.Ready(addr)
	}

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		serve := func() error { return srv.Serve(ln) }
		if tlsConfig != nil {
			serve = func() error { return srv.ServeTLS(ln, "", "") }
		}
		if err := serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return cortex.WrapError(cortex.CodeUnavailable, err, "http server: %v", err)
		}
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	})
	if !opts.NoWatch && !team {
		wopts, err := watchOptions(f, opts.Paths)
		if err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "cortex serve: watching %d folder(s)\n", len(wopts.Roots))
		g.Go(func() error { return watch.Run(gctx, local, wopts) })
	}
	if syslogOn {
		sopts.Ready = func(udp, tcp net.Addr) {
			fmt.Fprintf(f.IO.ErrOut, "cortex serve: syslog on udp %s, tcp %s\n", addrOrOff(udp), addrOrOff(tcp))
		}
		g.Go(func() error { return syslogd.Run(gctx, local, sopts) })
	}
	err = g.Wait()
	if ctx.Err() != nil && err == nil {
		fmt.Fprintln(f.IO.ErrOut, "cortex serve: stopped")
	}
	return err
}
