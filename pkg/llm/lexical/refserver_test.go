package lexical

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
)

// exampleTools lists the reference server's tools through its own
// tools/list handler, so the tests see exactly what a model would.
func exampleTools(t *testing.T) []llm.Tool {
	t.Helper()
	srv := refserver.New(refserver.Options{})
	defer srv.Close()
	var tools []llm.Tool
	cursor := ""
	for page := 0; page < 10; page++ {
		params := map[string]any{"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    refserver.ProtocolVersion,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "lexical-test", "version": "0"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}}
		if cursor != "" {
			params["cursor"] = cursor
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": page + 1, "method": "tools/list", "params": params})
		msg, perr := refserver.ParseMessage(body)
		if perr != nil {
			t.Fatalf("parse: %+v", perr)
		}
		resp := srv.Handle(context.Background(), msg, nil)
		if resp == nil || resp.Error != nil {
			t.Fatalf("tools/list: %+v", resp)
		}
		raw, _ := json.Marshal(resp.Result["tools"])
		var list []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			t.Fatal(err)
		}
		for _, x := range list {
			tools = append(tools, llm.Tool{Name: x.Name, Description: x.Description, InputSchema: x.InputSchema})
		}
		next, _ := resp.Result["nextCursor"].(string)
		if next == "" {
			return tools
		}
		cursor = next
	}
	t.Fatal("tools/list did not end")
	return nil
}
