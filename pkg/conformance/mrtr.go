package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// MRTR: see ../shared/docs/spec-checklist.md.

var mrtrFamily = family{name: "MRTR", checks: []*check.Check{}}
