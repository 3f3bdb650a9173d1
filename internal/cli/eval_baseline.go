package cli

import (
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/lexical"
)

// baselineProvider is the built-in "baseline, no LLM" selector that runs
// Layer 1 when no model is configured.
func baselineProvider() (llm.Provider, error) { return lexical.New(), nil }
