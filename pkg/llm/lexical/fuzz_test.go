package lexical

import (
	"encoding/json"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
)

// Prompts come from golden files and schemas from the server under test:
// neither may make the baseline panic or emit arguments that are not a
// JSON object.
func FuzzExtract(f *testing.F) {
	f.Add(`Email "Hi" to a@b.co up to 7 times in Paris, France`, `{"type":"object","properties":{"to":{"type":"string","format":"email"},"n":{"type":"integer","minimum":1}},"required":["to"]}`)
	f.Add(`C1234 'x'`, `{"properties":{"id":{"$ref":"#/$defs/i"}},"$defs":{"i":{"type":"string","pattern":"^C[0-9]{4}$"}}}`)
	f.Add(`eu-central1`, `{"properties":{"r":{"type":"string","description":"e.g. us-west1","enum":[1,"a",null]}}}`)
	f.Fuzz(func(t *testing.T, prompt, schema string) {
		tool := llm.Tool{Name: "t", Description: prompt, InputSchema: json.RawMessage(schema)}
		Rank(prompt, []llm.Tool{tool, {Name: "u"}})
		b, err := json.Marshal(ExtractArgs(prompt, tool))
		if err != nil || b[0] != '{' {
			t.Fatalf("%s %v", b, err)
		}
	})
}
