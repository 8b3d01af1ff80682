// Command cortex turns AI coding-agent transcripts into evidence about why
// agents fail their users. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/cortexhq/cortex/cli"
)

// Garbage collection: Cortex's queries allocate many small, short-lived
// values (rows read from SQLite) over a small live heap, so with Go's
// default (GOGC=100) the collector ran ~14 times per incident listing and
// took a quarter of its CPU. A larger heap goal under a soft memory limit (160 MiB)
// collects four times less often while the heap stays bounded (the
// commands that ingest lower the limit further: see cli/memlimit.go). GOGC
// and GOMEMLIMIT in the environment take precedence.
const (
	gcPercent   = 400
	memoryLimit = 160 << 20
)

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(ctx, cli.NewFactory(), os.Args[1:])
	stop()
	os.Exit(code)
}
