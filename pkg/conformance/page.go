package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// PAGE: see ../shared/docs/spec-checklist.md.

var pageFamily = family{name: "PAGE", checks: []*check.Check{}}
