package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// RPC: see ../shared/docs/spec-checklist.md.

var rpcFamily = family{name: "RPC", checks: []*check.Check{}}
