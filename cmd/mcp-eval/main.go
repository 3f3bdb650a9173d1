// Command mcp-eval tests MCP servers. See internal/cli for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/mcp-eval/mcp-eval-action/internal/cli"
)

// softMemoryLimit is where the collector starts working harder: a run
// over a server of 1,000 tools holds 10-30 MB live but, at the pace below,
// lets the heap reach five times that between collections. Since the
// POISON scan and the token count run beside the checks (both on the
// listing, while the heap is at its largest), 44 MiB let that run peak at
// 62-68 MB RSS (issue 15: at most 64); at 42 MiB it peaks at 61-62 MB for
// no CPU a run of eight could tell apart. Small runs never reach it. A
// GOMEMLIMIT in the environment wins.
const softMemoryLimit = 42 << 20

// gcPercent lets the heap grow to five times what is live before a
// collection, not twice: a check run on a small server holds a few MB
// live, and at the default pace the collector took a fifth of mcp-eval's
// CPU. The soft memory limit above still bounds a large run. A GOGC in
// the environment wins.
const gcPercent = 400

func main() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(softMemoryLimit)
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	// Cancelling the context on SIGINT/SIGTERM stops every server the run
	// started before mcp-eval exits: no orphans when a CI job is cancelled.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := (&cli.Command{Stdout: os.Stdout, Stderr: os.Stderr, LookupEnv: os.LookupEnv, Environ: os.Environ}).Main(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
