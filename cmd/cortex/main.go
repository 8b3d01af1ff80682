// Command cortex turns AI coding-agent transcripts into evidence about why
// agents fail their users. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/cortexhq/cortex/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(ctx, cli.NewFactory(), os.Args[1:])
	stop()
	os.Exit(code)
}
