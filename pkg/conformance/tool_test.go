package conformance

import (
	"slices"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

func TestTOOLMutants(t *testing.T) {
	for _, c := range toolFamily.checks {
		if c.Level != check.Must {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

// The SHOULD checks warn on their mutants and pass on the correct server.
func TestTOOLShouldMutants(t *testing.T) {
	for _, c := range []*check.Check{TOOL3, TOOL5, TOOL7} {
		t.Run(c.ID, func(t *testing.T) { featAssertShould(t, c) })
	}
}

func TestToolSensitiveNames(t *testing.T) {
	for _, name := range []string{"password", "api_key", "apiKey", "X-API-Key", "Authorization", "userEmail", "session_token", "credit_card_number", "dateOfBirth", "Api-Key"} {
		if !toolSensitive(name) {
			t.Errorf("%q not flagged", name)
		}
	}
	for _, name := range []string{"region", "query", "author", "tokenizer_model", "passage", "address_line_count", "Region"} {
		if toolSensitive(name) {
			t.Errorf("%q flagged", name)
		}
	}
	if got := toolNameTokens("XMLHttpRequestID"); !slices.Equal(got, []string{"xml", "http", "request", "id"}) {
		t.Errorf("tokens %q", got)
	}
}

func TestToolShape(t *testing.T) {
	for raw, want := range map[string]int{
		`{"name":"a","inputSchema":{"type":"object"}}`:                   0,
		`{"name":"a","inputSchema":{"type":"object"},"outputSchema":{}}`: 0,
		`{"inputSchema":{"type":"object"}}`:                              1,
		`{"name":"a","inputSchema":null}`:                                1,
		`{"name":"a","inputSchema":{"type":"string"}}`:                   1,
		`{"name":"a","inputSchema":{}}`:                                  1,
		`{"name":7,"inputSchema":{"type":"object"},"outputSchema":null}`: 2,
		`[]`: 1,
	} {
		if got := toolShape([]byte(raw)); len(got) != want {
			t.Errorf("toolShape(%s) = %q, want %d problems", raw, got, want)
		}
	}
}
