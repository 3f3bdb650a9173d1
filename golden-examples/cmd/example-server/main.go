// Command example-server runs the reference MCP 2026-07-28 server
// (package refserver) over stdio or Streamable HTTP. It is the bundled target
// of the mcp-eval quick start.
//
//	example-server                       # stdio: JSON-RPC on stdin/stdout, logs on stderr
//	example-server --http 127.0.0.1:0    # Streamable HTTP at http://ADDR/mcp
//
// In HTTP mode it prints "listening on http://ADDR/mcp" to stderr once the
// port is bound (with the real port when :0 was asked for). It exits on
// SIGINT/SIGTERM, and in stdio mode also when stdin reaches EOF.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // the server failed while running
	exitUsage = 2 // bad command line
)

const usage = `usage: example-server [--http ADDR] [--dual-era] [--break IDS] [--mrtr-items ITEMS]

Runs the mcp-eval reference MCP server (protocol 2026-07-28).

Without flags it speaks stdio: newline-delimited JSON-RPC on stdin/stdout,
logs on stderr. It exits when stdin is closed.

  --http ADDR   serve Streamable HTTP at http://ADDR/mcp instead, e.g.
                --http 127.0.0.1:8080, or 127.0.0.1:0 for a free port.
                The chosen address is printed to stderr as
                "listening on http://ADDR/mcp".
  --dual-era    also serve legacy (2025-11-25) clients: initialize, and
                requests without _meta or without a modern
                MCP-Protocol-Version header (a dual-era server).
  --break IDS   break the rules of these check ids on purpose, e.g.
                --break RES-1,TOOL-3: a mutant for conformance tests.
  --mrtr-items ITEMS
                add multi round-trip tools and prompts besides send_email,
                e.g. tool:ask_a,prompt:ask_b:MRTR-4,tool:ask_c:stateless
                (KIND:NAME[:FLAG...]; FLAG stateless, an MRTR rule id to
                break on that item only, or xN for N copies).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole program with its streams injected, so tests can drive it
// in-process as well as through the built binary.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("example-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	httpAddr := fs.String("http", "", "serve Streamable HTTP on `ADDR` at /mcp")
	dualEra := fs.Bool("dual-era", false, "also serve legacy clients (initialize, requests without _meta): a dual-era server")
	breakIDs := fs.String("break", "", "comma-separated check `IDS` whose rule to break on purpose (a conformance-test mutant)")
	mrtrItems := fs.String("mrtr-items", "", "extra multi round-trip tools and prompts, `ITEMS` like tool:ask_a,prompt:ask_b:MRTR-4")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "example-server: unexpected argument %q\n\n%s", fs.Arg(0), usage)
		return exitUsage
	}
	broken := map[string]bool{}
	for _, id := range strings.Split(*breakIDs, ",") {
		if id = strings.TrimSpace(id); id == "" {
			continue
		}
		if _, ok := refserver.Mutants[id]; !ok {
			fmt.Fprintf(stderr, "example-server: --break %q: no such mutant; known: %s\n", id, strings.Join(slices.Sorted(maps.Keys(refserver.Mutants)), ", "))
			return exitUsage
		}
		broken[id] = true
	}
	items, err := refserver.ParseMRTRItems(*mrtrItems)
	if err != nil {
		fmt.Fprintf(stderr, "example-server: --mrtr-items: %v\n", err)
		return exitUsage
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	srv := refserver.New(refserver.Options{Logger: logger, Break: broken, MRTRItems: items, DualEra: *dualEra})
	defer srv.Close()

	if *httpAddr == "" {
		// stdout carries JSON-RPC only (STDIO-1); everything else goes to stderr.
		if err := srv.ServeStdio(ctx, stdin, stdout); err != nil && !errors.Is(err, context.Canceled) {
			logger.Error("stdio transport failed", "err", err)
			return exitError
		}
		return exitOK
	}
	return serveHTTP(ctx, srv, *httpAddr, stderr, logger)
}

func serveHTTP(ctx context.Context, srv *refserver.Server, addr string, stderr io.Writer, logger *slog.Logger) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "example-server: %v\n", err)
		return exitError
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		// HTTP-2: local servers SHOULD bind to 127.0.0.1 only.
		logger.Warn("listening on a non-loopback address; prefer 127.0.0.1", "addr", ln.Addr().String())
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler())
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	fmt.Fprintf(stderr, "listening on http://%s/mcp\n", ln.Addr().String())

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		logger.Error("http server failed", "err", err)
		return exitError
	case <-ctx.Done():
	}
	// End subscription streams gracefully first; Shutdown would otherwise
	// wait for them until its deadline.
	srv.Close()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		logger.Warn("http shutdown", "err", err)
		hs.Close()
	}
	return exitOK
}
