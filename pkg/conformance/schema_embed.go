package conformance

import _ "embed"

// ReportSchema is report.schema.json, the shape of a Layer 0 report; the
// whole-run report (package report) references it for its conformance
// section.
//
//go:embed report.schema.json
var ReportSchema []byte
