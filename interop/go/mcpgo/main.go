// Command mcpgo is a fixture MCP server built on github.com/mark3labs/mcp-go,
// used by the interop tests.
//
//	srv                                      serve MCP over stdin/stdout
//	srv -http 127.0.0.1:PORT [-stateless]    serve Streamable HTTP at http://ADDR/mcp
//
// With -http, PORT 0 picks a free port; once listening the server prints
// "listening on http://ADDR/mcp" on stderr. Without -stateless the library default
// (sessions) is used.
//
// Tools (tools/list order as served by the library): add {a,b} -> structured {sum},
// echo {text} (readOnlyHint), fail (isError). Resource mem://readme, prompt greet.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type addOut struct {
	Sum float64 `json:"sum"`
}

func build() *server.MCPServer {
	s := server.NewMCPServer("interop-mcp-go", "0.0.1",
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(false, true),
		server.WithPromptCapabilities(true))
	s.AddTool(mcp.NewTool("echo",
		mcp.WithDescription("Echo the text back"),
		mcp.WithString("text", mcp.Required(), mcp.Description("the text to echo back")),
		mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(r.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("add",
		mcp.WithDescription("Add two numbers"),
		mcp.WithNumber("a", mcp.Required()),
		mcp.WithNumber("b", mcp.Required()),
		mcp.WithOutputSchema[addOut]()),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			sum := r.GetFloat("a", 0) + r.GetFloat("b", 0)
			return mcp.NewToolResultStructured(addOut{Sum: sum}, fmt.Sprint(sum)), nil
		})
	s.AddTool(mcp.NewTool("fail", mcp.WithDescription("Always returns a tool error (isError: true)")),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("boom"), nil
		})
	s.AddResource(mcp.NewResource("mem://readme", "readme",
		mcp.WithMIMEType("text/plain"), mcp.WithResourceDescription("A static text resource")),
		func(ctx context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{
				URI: "mem://readme", MIMEType: "text/plain", Text: "hello from interop-mcp-go",
			}}, nil
		})
	s.AddPrompt(mcp.NewPrompt("greet",
		mcp.WithPromptDescription("A greeting prompt"),
		mcp.WithArgument("who", mcp.RequiredArgument())),
		func(ctx context.Context, r mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("greet", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Say hi to "+r.Params.Arguments["who"])),
			}), nil
		})
	return s
}

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP at this loopback address (e.g. 127.0.0.1:0) instead of stdio")
	stateless := flag.Bool("stateless", false, "use server.WithStateLess(true)")
	flag.Parse()
	log.SetFlags(0)

	s := build()
	if *addr == "" {
		if err := server.ServeStdio(s); err != nil {
			log.Fatal(err)
		}
		return
	}

	var opts []server.StreamableHTTPOption
	if *stateless {
		opts = append(opts, server.WithStateLess(true))
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(s, opts...))
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "listening on http://%s/mcp\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
