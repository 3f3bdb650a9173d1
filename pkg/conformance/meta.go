package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// META: see ../shared/docs/spec-checklist.md.

var metaFamily = family{name: "META", checks: []*check.Check{}}
