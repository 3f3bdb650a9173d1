package refserver

import "context"

const instructions = "Example MCP server for mcp-eval. Tools: get_weather (fake weather), " +
	"search_invoices (fake invoices for customers C0000-C9999), send_email (asks for confirmation, never sends), " +
	"lookup_region (region is mirrored into the Mcp-Param-Region header) and slow_count (streams progress and logs). " +
	"All data is deterministic and fake."

// discover answers server/discover (DISC-1..DISC-8). capabilities declare
// exactly what is served (DISC-6): prompts have no listChanged, so a
// subscription asking for promptsListChanged has it left out of the
// acknowledgment (SUB-2).
func (s *Server) discover(_ context.Context, _ *request) (map[string]any, *Error) {
	return cacheable(map[string]any{
		"supportedVersions": supportedVersions,
		"capabilities": map[string]any{
			"tools":       map[string]any{"listChanged": true},
			"resources":   map[string]any{"subscribe": true, "listChanged": true},
			"prompts":     map[string]any{},
			"completions": map[string]any{},
			"logging":     map[string]any{}, // LOG-3: slow_count emits notifications/message
		},
		"instructions": instructions,
	}, discoverTTLMs, scopePublic), nil
}
