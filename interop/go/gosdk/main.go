// Command gosdk is a fixture MCP server built on github.com/modelcontextprotocol/go-sdk,
// used by the interop tests.
//
//	srv                                      serve MCP over stdin/stdout
//	srv -http 127.0.0.1:PORT [-stateless]    serve Streamable HTTP at http://ADDR/mcp
//	srv -echo-prefix STR                     echo answers STR+text: a new build whose
//	                                         results changed while its tool list did not
//	srv -echo-nonce                          echo appends " #N", N new on every call (the
//	                                         clock): a tool that answers the same call
//	                                         differently, even across processes
//	srv -tools N                             serve N tools: the three below plus N-3
//	                                         generated ones (bench/: a large tool surface
//	                                         against its 3-tool twin)
//
// With -http, PORT 0 picks a free port; once listening the server prints
// "listening on http://ADDR/mcp" on stderr. Without -stateless the handler uses the
// SDK's default (stateful) options.
//
// Tools (tools/list order as served by the SDK): add {a,b} -> structured {sum},
// echo {text} (readOnlyHint), fail (isError). Resource mem://readme, prompt greet.
// With -exit-on-call NAME the process exits (code 3) when tool NAME is
// called: a server that crashes on one tool.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo back"`
}

type addIn struct {
	A float64 `json:"a" jsonschema:"first addend"`
	B float64 `json:"b" jsonschema:"second addend"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

// echoOpts change what echo answers, never how it is listed.
type echoOpts struct {
	prefix string
	nonce  bool
	calls  atomic.Int64
	exitOn string // a tool whose call ends the process
}

// maxTools bounds -tools, so that a typo cannot exhaust memory.
const maxTools = 100_000

type lookupIn struct {
	Key   string `json:"key" jsonschema:"the record key, e.g. K-0001"`
	Limit int    `json:"limit,omitempty" jsonschema:"most records to return (1-50)"`
}

// addGenerated adds n plain tools shaped like a real server's: a title, a
// sentence of description, two arguments. They carry no readOnlyHint, so a
// harness that calls only read-only tools lists and validates them without
// calling each one.
func addGenerated(s *mcp.Server, n int) {
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("lookup_%04d", i)
		mcp.AddTool(s, &mcp.Tool{
			Name:        name,
			Title:       fmt.Sprintf("Lookup %d", i),
			Description: fmt.Sprintf("Look up records in table %d by key. Returns at most limit records as text.", i),
		}, func(ctx context.Context, r *mcp.CallToolRequest, in lookupIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + ": no record " + in.Key}}}, nil, nil
		})
	}
}

func build(eo *echoOpts, tools int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "interop-go-sdk", Version: "0.0.1"}, nil)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "echo",
		Description: "Echo the text back",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, r *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		text := eo.prefix + in.Text
		if eo.nonce {
			// The clock, so that a new process does not repeat the last
			// one's answers; the counter, so that two calls in one clock
			// tick differ.
			text += fmt.Sprintf(" #%d-%d", time.Now().UnixNano(), eo.calls.Add(1))
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Add two numbers"},
		func(ctx context.Context, r *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always returns a tool error (isError: true)"},
		func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "boom"}}}, nil, nil
		})
	s.AddResource(&mcp.Resource{Name: "readme", URI: "mem://readme", MIMEType: "text/plain", Description: "A static text resource"},
		func(ctx context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
				URI: "mem://readme", MIMEType: "text/plain", Text: "hello from interop-go-sdk",
			}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{
		Name:        "greet",
		Description: "A greeting prompt",
		Arguments:   []*mcp.PromptArgument{{Name: "who", Required: true}},
	}, func(ctx context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		who := r.Params.Arguments["who"]
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{
			Role: "user", Content: &mcp.TextContent{Text: "Say hi to " + who},
		}}}, nil
	})
	addGenerated(s, tools-3)
	if eo.exitOn != "" {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" && p.Name == eo.exitOn {
					fmt.Fprintf(os.Stderr, "crashing on a call of %s\n", p.Name)
					os.Exit(3)
				}
				return next(ctx, method, req)
			}
		})
	}
	return s
}

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP at this loopback address (e.g. 127.0.0.1:0) instead of stdio")
	stateless := flag.Bool("stateless", false, "use StreamableHTTPOptions{Stateless: true}")
	eo := &echoOpts{}
	flag.StringVar(&eo.prefix, "echo-prefix", "", "prefix every echo result with this text")
	flag.BoolVar(&eo.nonce, "echo-nonce", false, `append " #N" to every echo result, N new on every call`)
	tools := flag.Int("tools", 3, "number of tools to serve (at least 3: echo, add, fail, then generated lookup_NNNN tools)")
	flag.StringVar(&eo.exitOn, "exit-on-call", "", "exit (code 3) when this tool is called: a server that crashes on one tool")
	flag.Parse()
	log.SetFlags(0)
	if *tools < 3 || *tools > maxTools {
		log.Fatalf("-tools %d: want 3 … %d", *tools, maxTools)
	}

	if *addr == "" {
		if err := build(eo, *tools).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
		return
	}

	srv := build(eo, *tools)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: *stateless})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "listening on http://%s/mcp\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
