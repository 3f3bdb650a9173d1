package mcpclient

import (
	"encoding/json"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Protocol versions this client knows. Only Latest is spoken in the modern
// way; the others are legacy revisions reached through initialize.
const (
	Latest     = "2026-07-28"
	Legacy1125 = "2025-11-25"
	Legacy0618 = "2025-06-18"
	Legacy0326 = "2025-03-26"
	Legacy1105 = "2024-11-05"
)

// ModernVersions are the modern revisions this client speaks.
var ModernVersions = []string{Latest}

// LegacyVersions are the initialize-era revisions this client can fall back
// to, newest first.
var LegacyVersions = []string{Legacy1125, Legacy0618, Legacy0326, Legacy1105}

// Reserved _meta keys (basic/index.mdx §_meta).
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// HTTP header names of Streamable HTTP (streamable-http.mdx §Request Metadata).
const (
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderParamPrefix     = "Mcp-Param-"
	HeaderSessionID       = "Mcp-Session-Id" // legacy revisions only
)

// Result types (basic/index.mdx §ResultType).
const (
	ResultComplete      = "complete"
	ResultInputRequired = "input_required"
)

// Implementation is clientInfo / serverInfo; the report records the
// server's, so the report owns the type.
type Implementation = report.Implementation

// DiscoverResult is the answer to server/discover.
type DiscoverResult struct {
	ResultType        string          `json:"resultType"`
	SupportedVersions []string        `json:"supportedVersions"`
	Capabilities      json.RawMessage `json:"capabilities"`
	Instructions      string          `json:"instructions,omitempty"`
	TTLMs             *json.Number    `json:"ttlMs,omitempty"`
	CacheScope        string          `json:"cacheScope,omitempty"`
	Meta              struct {
		ServerInfo *Implementation `json:"io.modelcontextprotocol/serverInfo,omitempty"`
	} `json:"_meta"`
	// ServerInfo at the top level is a pre-final leftover (DISC-5).
	ServerInfo *Implementation `json:"serverInfo,omitempty"`
}

// InitializeResult is a legacy server's answer to initialize.
type InitializeResult struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ServerInfo      *Implementation `json:"serverInfo,omitempty"`
	Instructions    string          `json:"instructions,omitempty"`
}

// Tool is one entry of tools/list. Schemas stay raw for the conformance layer.
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	// Raw is the tool object as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// ToolAnnotations are the behaviour hints of a tool.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// ReadOnly reports whether the server marked the tool readOnlyHint: true.
func (t *Tool) ReadOnly() bool {
	return t.Annotations != nil && t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint
}

// InputRequiredResult is an MRTR interim result (basic/patterns/mrtr.mdx).
type InputRequiredResult struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	// RequestState is kept as the exact raw JSON string the server sent, so
	// the retry echoes it byte for byte (MRTR-5).
	RequestState json.RawMessage `json:"requestState,omitempty"`
}

// InputRequest is one entry of inputRequests.
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// CallToolResult is a complete tools/call result.
type CallToolResult struct {
	ResultType        string            `json:"resultType"`
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
	IsError           bool              `json:"isError,omitempty"`
}

// TextContent returns the text of the result's text blocks, joined by newlines.
func (r *CallToolResult) TextContent() string {
	var out string
	for _, c := range r.Content {
		var b struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(c, &b) == nil && b.Type == "text" {
			if out != "" {
				out += "\n"
			}
			out += b.Text
		}
	}
	return out
}

// Resource, ResourceTemplate and Prompt are list entries.
type Resource struct {
	URI      string          `json:"uri"`
	Name     string          `json:"name"`
	MIMEType string          `json:"mimeType,omitempty"`
	Raw      json.RawMessage `json:"-"`
}

type ResourceTemplate struct {
	URITemplate string          `json:"uriTemplate"`
	Name        string          `json:"name"`
	Raw         json.RawMessage `json:"-"`
}

type Prompt struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Arguments   []struct {
		Name     string `json:"name"`
		Required bool   `json:"required,omitempty"`
	} `json:"arguments,omitempty"`
	Raw json.RawMessage `json:"-"`
}
