package resilience

import (
	"fmt"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Conversation rebuilds the conversation of a stored run from its
// trajectory, for ClassifyFault and ClassifyAttack: the user's prompt,
// then each turn as an assistant message followed by its results. A
// report's trajectory clips long texts (2 KiB per result), so a payload
// or fault text cut there no longer matches; Run classifies from the
// whole conversation instead.
func Conversation(prompt string, tr *report.Trajectory) []llm.Message {
	msgs := []llm.Message{{Role: llm.User, Text: prompt}}
	if tr == nil {
		return msgs
	}
	for i, t := range tr.Turns {
		m := llm.Message{Role: llm.Assistant, Text: t.Text}
		var results []llm.ToolResult
		for j, c := range t.Calls {
			id := fmt.Sprintf("t%d_%d", i, j)
			m.Calls = append(m.Calls, llm.ToolCall{ID: id, Name: c.Name, Arguments: c.Arguments, ArgumentsRaw: c.ArgumentsRaw, ParseError: c.ParseError})
			results = append(results, llm.ToolResult{CallID: id, Content: c.Result, IsError: c.IsError})
		}
		msgs = append(msgs, m)
		// The last turn of a run stopped at the step limit made calls
		// whose results the model never read; they are still results.
		if len(results) > 0 {
			msgs = append(msgs, llm.Message{Role: llm.ToolRole, Results: results})
		}
	}
	return msgs
}
