package report

// ToolTokens is what the server's tools cost in every model request: the
// tools array as mcp-eval sends it, tokenized offline. Counts[0] is
// o200k_base; a cl100k_base count follows when the run used a GPT-4 or
// GPT-3.5 model. These are estimates for other providers' models, whose
// tokenizers differ: the encoding says which one was used.
type ToolTokens struct {
	// Serialization says what exactly was tokenized.
	Serialization string           `json:"serialization"`
	Counts        []ToolTokenCount `json:"counts"`
	// Exact are the providers' own counts, made only when the run opts
	// in (tool-tokens: exact): one per model of the run, with the count
	// or the reason there is none. The gates read Counts, never these:
	// they are made on some runs only (a key, an opt-in), so a baseline
	// and a new run would rarely both hold one.
	Exact []ToolTokenExact `json:"exact,omitempty"`
	// ExactMethod says what an exact count measures (ExactMethod), set
	// with Exact; ExactNote is why no model was counted, when none was.
	ExactMethod string `json:"exactMethod,omitempty"`
	ExactNote   string `json:"exactNote,omitempty"`
}

// ExactMethod is what ToolTokenExact.Tokens measures.
const ExactMethod = "the tools' share of a request as the provider counts it: a fixed one-line message counted at the provider's token-counting endpoint with the tools, minus the same message without them (so it includes any prompt the provider adds when tools are offered)"

// ToolTokenExact is one model's provider-side count of the tools array
// as mcp-eval sends that provider, beside the embedded estimate for the
// same model.
type ToolTokenExact struct {
	// Model is the model spec of the run, e.g. anthropic:claude-sonnet-4-5.
	Model string `json:"model"`
	// Provider is the counting API (anthropic, openai, gemini) and
	// Endpoint its method and path; empty when none was asked.
	Provider string `json:"provider,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	// Tokens is WithTools − WithoutTools; nil when no count was made.
	Tokens       *int `json:"tokens,omitempty"`
	WithTools    int  `json:"withTools,omitempty"`
	WithoutTools int  `json:"withoutTools,omitempty"`
	// Encoding and Estimate are the embedded count standing for this
	// model, to read beside Tokens.
	Encoding string `json:"encoding"`
	Estimate int    `json:"estimate"`
	// Note says why there is no count (no key, no counting endpoint, the
	// provider's error); it never fails the run.
	Note string `json:"note,omitempty"`
}

// ToolTokenCount is the count in one encoding.
type ToolTokenCount struct {
	Encoding string `json:"encoding"`
	// Models are the run's models this encoding stands for ([] for the
	// default count).
	Models []string `json:"models"`
	// Total is the tokens of the whole array.
	Total int `json:"total"`
	// Tools are each tool's element of the array, largest first.
	Tools []ToolTokenItem `json:"tools"`
}

// ToolTokenItem is one tool's tokens.
type ToolTokenItem struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
}

// Primary is the default (o200k_base) count, nil when none was made.
func (t *ToolTokens) Primary() *ToolTokenCount {
	if t == nil || len(t.Counts) == 0 {
		return nil
	}
	return &t.Counts[0]
}

// Count is the count in encoding, nil when none was made.
func (t *ToolTokens) Count(encoding string) *ToolTokenCount {
	if t == nil {
		return nil
	}
	for i := range t.Counts {
		if t.Counts[i].Encoding == encoding {
			return &t.Counts[i]
		}
	}
	return nil
}
