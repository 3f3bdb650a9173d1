package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// RSRC: see ../shared/docs/spec-checklist.md.

var rsrcFamily = family{name: "RSRC", checks: []*check.Check{}}
