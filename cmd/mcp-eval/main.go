// Command mcp-eval tests MCP servers. See internal/cli for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcp-eval/mcp-eval-action/internal/cli"
)

func main() {
	// Cancelling the context on SIGINT/SIGTERM stops every server the run
	// started before mcp-eval exits: no orphans when a CI job is cancelled.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := (&cli.Command{Stdout: os.Stdout, Stderr: os.Stderr, LookupEnv: os.LookupEnv, Environ: os.Environ}).Main(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
