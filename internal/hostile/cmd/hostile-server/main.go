// Command hostile-server runs the hostile MCP server of package
// internal/hostile with one behaviour, for mcp-eval's own tests:
//
//	hostile-server --behaviour NAME               # stdio
//	hostile-server --behaviour NAME --http ADDR   # Streamable HTTP at http://ADDR/mcp
//	hostile-server --list
//
// In HTTP mode it prints "listening on http://ADDR/mcp" to stderr once the
// port is bound. It is test equipment: never point it at anything real.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcp-eval/mcp-eval-action/internal/hostile"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == hostile.SleeperArg {
		time.Sleep(5 * time.Minute)
		return
	}
	name := flag.String("behaviour", "", "the hostile `NAME` to run (see --list)")
	addr := flag.String("http", "", "serve Streamable HTTP on `ADDR` instead of stdio")
	list := flag.Bool("list", false, "list the behaviours and exit")
	flag.Parse()
	if *list {
		for _, b := range hostile.All() {
			fmt.Printf("%-22s %-10v %s\n", b.Name, b.Transports, b.Doc)
		}
		return
	}
	srv, err := hostile.New(*name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile-server:", err)
		os.Exit(2)
	}
	srv.Stderr = os.Stderr
	defer srv.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *addr == "" {
		if err := srv.ServeStdio(ctx, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "hostile-server:", err)
			os.Exit(1)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile-server:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "listening on http://%s/mcp\n", ln.Addr())
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		hs.Close()
	}()
	if err := hs.Serve(ln); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "hostile-server:", err)
		os.Exit(1)
	}
}
