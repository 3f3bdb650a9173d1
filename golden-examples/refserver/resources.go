package refserver

import (
	"context"
	"fmt"
	"strings"
)

const (
	summaryURI          = "example://invoices/summary"
	customerURIPrefix   = "example://invoices/"
	customerURITemplate = "example://invoices/{customer_id}"
	maxURILen           = 2048
)

var resourceList = []any{
	map[string]any{
		"uri":         summaryURI,
		"name":        "invoice_summary",
		"title":       "Invoice summary",
		"description": "Open and overdue totals for a few sample customers (fake data).",
		"mimeType":    "text/markdown",
	},
}

var resourceTemplateList = []any{
	map[string]any{
		"uriTemplate": customerURITemplate,
		"name":        "customer_invoices",
		"title":       "Customer invoices",
		"description": "All invoices of one customer as JSON; customer_id is C followed by four digits.",
		"mimeType":    "application/json",
	},
}

// listResources answers resources/list (RSRC-1).
func (s *Server) listResources(_ context.Context, r *request) (map[string]any, *Error) {
	start, end, next, err := s.page(r, "resources", len(resourceList))
	if err != nil {
		return nil, err
	}
	return s.mutResourcePage(pagedResult("resources", resourceList[start:end], next)), nil
}

// listResourceTemplates answers resources/templates/list (RSRC-1).
func (s *Server) listResourceTemplates(_ context.Context, r *request) (map[string]any, *Error) {
	if res := s.mutTemplatesList(); res != nil {
		return res, nil
	}
	start, end, next, err := s.page(r, "resourceTemplates", len(resourceTemplateList))
	if err != nil {
		return nil, err
	}
	return pagedResult("resourceTemplates", resourceTemplateList[start:end], next), nil
}

// readResource answers resources/read (RSRC-2). A URI that names nothing is
// -32602 with data.uri (RSRC-3): never -32002, never empty contents.
func (s *Server) readResource(_ context.Context, r *request) (map[string]any, *Error) {
	uri, present, err := r.stringParam("uri")
	if err != nil {
		return nil, err
	}
	if !present {
		return nil, errorf(CodeInvalidParams, "Invalid params: uri is required")
	}
	if e := s.mutReadFails(uri); e != nil {
		return nil, e
	}
	mime, text, ok := resourceText(uri)
	if !ok {
		return nil, s.mutMissingResource(s.mutMissingResourceCode(&Error{Code: CodeInvalidParams, Message: "Resource not found", Data: map[string]any{"uri": truncate(uri, maxURILen)}}))
	}
	return s.mutReadResult(s.mutReadShape(cacheable(map[string]any{
		"contents": []any{map[string]any{"uri": uri, "mimeType": mime, "text": text}},
	}, readTTLMs, scopePrivate))), nil
}

// resourceText renders a readable resource; ok is false for unknown URIs.
func resourceText(uri string) (mime, text string, ok bool) {
	if uri == summaryURI {
		return "text/markdown", invoiceSummary(), true
	}
	if id, found := strings.CutPrefix(uri, customerURIPrefix); found && customerIDPattern().MatchString(id) {
		body, err := marshal(map[string]any{"customer_id": id, "invoices": invoicesFor(id)})
		if err != nil {
			return "", "", false
		}
		return "application/json", string(body), true
	}
	return "", "", false
}

// knownResource reports whether uri can be read (used to acknowledge
// resourceSubscriptions, SUB-2).
func knownResource(uri string) bool {
	_, _, ok := resourceText(uri)
	return ok
}

func invoiceSummary() string {
	var b strings.Builder
	b.WriteString("# Invoice summary\n\n| customer | invoices | open | overdue | outstanding (USD) |\n|---|---|---|---|---|\n")
	for _, c := range summaryCustomers {
		invs := invoicesFor(c)
		open, overdue, cents := 0, 0, 0
		for _, inv := range invs {
			switch inv.Status {
			case "open":
				open++
				cents += inv.AmountCents
			case "overdue":
				overdue++
				cents += inv.AmountCents
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d.%02d |\n", c, len(invs), open, overdue, cents/100, cents%100)
	}
	return b.String()
}
