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
	if s.opts.breaks("DISC-1") {
		return nil, methodNotFound("server/discover")
	}
	caps := map[string]any{
		"tools":       map[string]any{"listChanged": true},
		"resources":   map[string]any{"subscribe": true, "listChanged": true},
		"prompts":     map[string]any{},
		"completions": map[string]any{},
		"logging":     map[string]any{}, // LOG-3: slow_count emits notifications/message
		// A vendor extension with a proper prefix (DISC-7): it only says
		// that every answer is deterministic, which clients may rely on.
		"extensions": map[string]any{"com.example/deterministic-data": map[string]any{}},
	}
	if s.opts.breaks("DISC-6") {
		delete(caps, "prompts")
	}
	if s.opts.breaks("DISC-7") {
		caps["extensions"] = map[string]any{"deterministic-data": map[string]any{}}
	}
	if s.opts.breaks("DISC-9") {
		// Capabilities only a client has, as a server that copied its
		// client's capability object would declare them.
		caps["sampling"], caps["elicitation"], caps["roots"] = map[string]any{}, map[string]any{"form": map[string]any{}}, map[string]any{"listChanged": true}
	}
	versions := supportedVersions
	if s.opts.breaks("DISC-3") {
		versions = []string{"2025-11-25"}
	}
	result := cacheable(map[string]any{
		"supportedVersions": versions,
		"capabilities":      caps,
		"instructions":      instructions,
	}, discoverTTLMs, scopePublic)
	if s.opts.breaks("DISC-2") {
		delete(result, "ttlMs")
	}
	if s.opts.breaks("DISC-8") {
		return map[string]any{"resultType": "input_required", "requestState": "discover-needs-input"}, nil
	}
	return result, nil
}
