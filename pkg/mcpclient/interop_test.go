package mcpclient_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/internal/interop"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// TestRealServers runs the client against MCP servers written by others:
// the TypeScript SDK v2, go-sdk and mcp-go (modern, dual-era) and the
// legacy-only server-everything, over stdio and Streamable HTTP. Each must
// be classified in the right era, list its tools in its own order, and
// answer a tool call.
func TestRealServers(t *testing.T) {
	for _, tg := range interop.Targets() {
		t.Run(tg.Name, func(t *testing.T) {
			tg.Require(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var tr transport.Transport
			if tg.Transport == interop.HTTP {
				url := tg.StartHTTP(t)
				ht, err := transport.NewHTTP(transport.HTTPConfig{URL: url})
				if err != nil {
					t.Fatal(err)
				}
				tr = ht
			} else {
				argv, dir, err := tg.Command()
				if err != nil {
					t.Fatal(err)
				}
				env, _ := transport.ServerEnv(nil, nil, os.LookupEnv)
				st, err := transport.StartStdio(ctx, transport.StdioConfig{Argv: argv, Dir: dir, Env: env})
				if err != nil {
					t.Fatal(err)
				}
				tr = st
			}
			c, err := mcpclient.Connect(ctx, tr, mcpclient.Config{Trace: mcpclient.NewTrace()})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer c.Close()
			info := c.Info()
			wantEra := mcpclient.EraModern
			if tg.Era == interop.Legacy {
				wantEra = mcpclient.EraLegacy
			}
			if info.Era != wantEra {
				t.Fatalf("era = %s, want %s; probe: %+v", info.Era, wantEra, info.Probe)
			}
			if wantEra == mcpclient.EraModern && (info.ProtocolVersion != mcpclient.Latest || !slices.Contains(info.SupportedVersions, mcpclient.Latest)) {
				t.Fatalf("modern server: version %q, supported %q", info.ProtocolVersion, info.SupportedVersions)
			}
			if wantEra == mcpclient.EraLegacy && !slices.Contains(mcpclient.LegacyVersions, info.ProtocolVersion) {
				t.Fatalf("legacy server negotiated %q", info.ProtocolVersion)
			}
			if info.ServerInfo == nil || info.ServerInfo.Name == "" {
				t.Errorf("no serverInfo learnt (era %s)", info.Era)
			}
			tools, err := c.ListTools(ctx)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			var names []string
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
			}
			if !slices.Equal(names, tg.Tools) {
				t.Fatalf("tools = %q, want %q", names, tg.Tools)
			}
			args := map[string]any{"text": "ping-42"}
			if strings.HasPrefix(tg.Name, "everything") {
				args = map[string]any{"message": "ping-42"}
			}
			res, err := c.CallTool(ctx, "echo", args)
			if err != nil {
				t.Fatalf("tools/call echo: %v", err)
			}
			if res.MissingResultType != (wantEra == mcpclient.EraLegacy) {
				t.Errorf("MissingResultType = %v on a %s server", res.MissingResultType, wantEra)
			}
			tr2, err := res.Tool()
			if err != nil {
				t.Fatal(err)
			}
			if tr2.IsError || !strings.Contains(tr2.TextContent(), "ping-42") {
				t.Fatalf("echo returned %+v", tr2)
			}
		})
	}
}
