package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// OTEL: see ../shared/docs/spec-checklist.md.

var otelFamily = family{name: "OTEL", checks: []*check.Check{}}
