package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/report"

// ReportSchema is the JSON Schema of a Layer 0 report, what
// `mcp-eval check --json` writes. Package report owns the type and so the
// schema (conformance.schema.json); this is a copy for tests and tools
// that start from this package.
var ReportSchema = report.ConformanceSchema()
