package llm

import (
	"encoding/json"
	"fmt"
)

// ToolsArray is the tools array exactly as the Chat Completions dialect
// sends it to a model: provider names, converted schemas, compact JSON,
// one element per tool (the first definition of a name listed twice). The
// tool-surface token count tokenizes these bytes, so that it measures what
// every request carries rather than the server's own listing.
func ToolsArray(tools []Tool) (whole []byte, each []NamedJSON, err error) {
	plan := planTools(DialectOpenAIChat, tools)
	arr := make([]chatTool, 0, len(plan.tools))
	for _, t := range plan.tools {
		ct := chatTool{Type: "function", Function: chatFunction{Name: t.name, Description: t.description, Parameters: t.schema}}
		b, err := json.Marshal(ct)
		if err != nil {
			return nil, nil, fmt.Errorf("encoding tool %q: %w", t.name, err)
		}
		arr = append(arr, ct)
		each = append(each, NamedJSON{Name: plan.names.mcp(t.name), JSON: b})
	}
	whole, err = json.Marshal(arr)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the tools array: %w", err)
	}
	return whole, each, nil
}

// NamedJSON is one tool's element of the tools array, under its MCP name.
type NamedJSON struct {
	Name string
	JSON []byte
}
