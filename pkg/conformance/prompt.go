package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// PROMPT: see ../shared/docs/spec-checklist.md.

var promptFamily = family{name: "PROMPT", checks: []*check.Check{}}
