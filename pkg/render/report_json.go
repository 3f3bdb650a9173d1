package render

import (
	"io"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// ReportJSON writes the report as the indented JSON of report.json, with
// [] for every empty list.
func ReportJSON(w io.Writer, rep *report.Report) error { return report.Encode(w, rep) }
