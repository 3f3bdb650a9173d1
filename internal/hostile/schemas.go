package hostile

import (
	"context"
)

// Behaviours with tool schemas built to hang or exhaust a validator, or to
// make it fetch from the network.
func schemaBehaviours() []*Behaviour {
	return []*Behaviour{
		schemaTool("ref-cycle", "lists a tool whose inputSchema is a $ref cycle (a → b → a, and the root through #)",
			func() any {
				return map[string]any{
					"type": "object", "$ref": "#/$defs/a",
					"$defs":      map[string]any{"a": map[string]any{"$ref": "#/$defs/b"}, "b": map[string]any{"$ref": "#/$defs/a"}},
					"properties": map[string]any{"self": map[string]any{"$ref": "#"}},
				}
			}),
		{
			Name: "remote-ref", Transports: both,
			Doc: "lists a tool whose inputSchema points at a remote $ref (HOSTILE_TRIPWIRE, which must never be fetched)",
			Reply: onMethod("tools/list", func(ctx context.Context, s *Server, req *Request) []byte {
				target := s.Tripwire
				if target == "" {
					target = "https://evil.example"
				}
				schema := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"$ref": target + "/schema.json#/q"}}}
				return mustJSON(withTools(ctx, s, req, tool("remote_ref", "remote $ref", schema)))
			}),
		},
		// Empty subschemas keep the document near 300 KB, under the
		// size bound, so the count of subschemas is what is tested.
		schemaTool("many-subschemas", "lists a tool whose inputSchema has 100,000 (empty) subschemas under anyOf", func() any {
			subs := make([]any, 100_000)
			for i := range subs {
				subs[i] = map[string]any{}
			}
			return map[string]any{"type": "object", "anyOf": subs}
		}),
	}
}

// schemaTool lists one extra tool with the schema built by schema, called
// only when the tool list is asked for: the list of behaviours stays cheap.
func schemaTool(name, doc string, schema func() any) *Behaviour {
	return &Behaviour{
		Name: name, Doc: doc, Transports: both,
		Reply: onMethod("tools/list", func(ctx context.Context, s *Server, req *Request) []byte {
			return mustJSON(withTools(ctx, s, req, tool(name, doc, schema())))
		}),
	}
}
