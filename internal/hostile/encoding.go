package hostile

import (
	"context"
	"strings"
)

// Behaviours that send bytes a JSON decoder must survive: invalid UTF-8,
// nesting deeper than any sane limit, numbers no float64 holds, duplicate
// keys.
func encodingBehaviours() []*Behaviour {
	return []*Behaviour{
		{
			Name: "invalid-utf8", Transports: both,
			Doc: "puts bytes that are not UTF-8 into a tool description on tools/list",
			Reply: onMethod("tools/list", func(ctx context.Context, s *Server, req *Request) []byte {
				return spliced(withTools(ctx, s, req, tool("latin1_tool", "@@DESC@@", nil)), map[string][]byte{"@@DESC@@": []byte("\"caf\xe9 \xff\xfe \xc3\x28\"")})
			}),
		},
		{
			Name: "deep-nesting", Transports: both,
			Doc: "lists a tool whose inputSchema nests 100,000 arrays deep",
			Reply: onMethod("tools/list", func(ctx context.Context, s *Server, req *Request) []byte {
				deep := "[" + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "]"
				schema := map[string]any{"type": "object", "default": "@@DEEP@@"}
				return spliced(withTools(ctx, s, req, tool("deep_tool", "deep", schema)), map[string][]byte{"@@DEEP@@": []byte(deep)})
			}),
		},
		{
			Name: "huge-number", Transports: both,
			Doc: "sends ttlMs 1e400 on server/discover and tools/list, and 1e400 bounds in a schema",
			Reply: func(ctx context.Context, s *Server, req *Request) []byte {
				switch req.Method {
				case "server/discover", "tools/list":
				default:
					return nil
				}
				resp := s.reference(ctx, req)
				if req.Method == "tools/list" {
					schema := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "number", "maximum": "@@BIG@@", "default": "@@BIGINT@@"}}}
					resp = withTools(ctx, s, req, tool("big_number", "numbers beyond float64", schema))
				}
				if res, ok := resp["result"].(map[string]any); ok {
					if _, has := res["ttlMs"]; has {
						res["ttlMs"] = "@@TTL@@"
					}
				}
				return spliced(resp, map[string][]byte{"@@BIG@@": []byte("1e400"), "@@BIGINT@@": []byte("123456789012345678901234567890123456789"), "@@TTL@@": []byte("1e400")})
			},
		},
		{
			Name: "duplicate-keys", Transports: both,
			Doc: "answers tools/list with duplicate keys: id twice (a wrong one first), tools twice (a shadow list first)",
			Reply: onMethod("tools/list", func(ctx context.Context, s *Server, req *Request) []byte {
				resp := withTools(ctx, s, req)
				res, _ := resp["result"].(map[string]any)
				if res == nil {
					return nil
				}
				tools := res["tools"]
				res["tools"] = "@@TOOLS@@"
				return spliced(map[string]any{"jsonrpc": "2.0", "id": "@@ID@@", "result": res}, map[string][]byte{
					"@@ID@@":    []byte(`"dup-wrong","id":` + string(req.ID)),
					"@@TOOLS@@": append([]byte(`[{"name":"shadow_tool","inputSchema":{"type":"object"}}],"tools":`), mustJSON(tools)...),
				})
			}),
		},
	}
}
