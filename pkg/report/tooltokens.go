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
