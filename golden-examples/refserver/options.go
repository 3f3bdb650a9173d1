package refserver

import (
	"log/slog"
	"time"
)

// Options configures a Server. The zero value is a fully correct MCP
// 2026-07-28 server; every field only tunes limits and timings, except the
// fields in the "mutant switches" block, which deliberately break one rule
// each.
type Options struct {
	// PageSize is the number of items per page of tools/list, prompts/list,
	// resources/list and resources/templates/list. Zero means 3, so that the
	// five tools span two pages and clients must follow nextCursor (PAGE-1).
	PageSize int

	// StepDelay is how long slow_count waits between two counts. Zero means
	// 5ms: long enough that progress notifications are streamed one by one,
	// short enough that a conformance run calling it many times stays fast.
	StepDelay time.Duration

	// KeepAliveInterval is the period of the SSE comment line (": keepalive")
	// written on open HTTP event streams (HTTP-5, SUB-8). Zero means 15s.
	KeepAliveInterval time.Duration

	// MaxBodyBytes bounds one HTTP request body and one stdio line. Zero
	// means 1 MiB. Larger HTTP bodies get 413; larger stdio lines get -32600.
	MaxBodyBytes int64

	// MaxConcurrent bounds the number of requests in flight on one stdio
	// stream (subscriptions included). Zero means 64. Requests beyond it get
	// -32603 instead of piling up goroutines.
	MaxConcurrent int

	// StateKey is the HMAC key protecting MRTR requestState (MRTR-7). Nil
	// means a random per-process key: retries must reach the same process.
	// Set it (32 random bytes) to let several replicas share retries.
	StateKey []byte

	// StateTTL is how long an issued requestState stays valid (mrtr.mdx:
	// "a short expiry"). Zero means 10 minutes.
	StateTTL time.Duration

	// Now returns the current time; nil means time.Now. It only feeds the
	// requestState expiry, the one place the server reads the clock.
	Now func() time.Time

	// AllowedOrigins lists extra exact Origin values (e.g.
	// "https://inspector.example") accepted besides the loopback origins
	// http://localhost, http://127.0.0.1 and http://[::1] on any port (HTTP-2).
	AllowedOrigins []string

	// Logger receives diagnostics. Nil discards them. It must never write to
	// the stdio transport's output (STDIO-1); the example binary logs to stderr.
	Logger *slog.Logger

	// MRTRItems adds multi round-trip tools and prompts besides send_email
	// (mrtr_items.go), listed after the server's own in this order. Empty
	// in the zero value; ParseMRTRItems reads the example binary's
	// --mrtr-items.
	MRTRItems []MRTRItem

	// DualEra makes the server dual-era (basic/versioning.mdx §Terminology):
	// it also answers a legacy initialize and serves legacy requests (on
	// stdio a request without params._meta, over HTTP one without a modern
	// MCP-Protocol-Version header, and the legacy GET stream). It is a
	// correct server either way; dualera.go says what it does.
	DualEra bool

	// Break names checklist rules to break, by check id ("RES-1"): the
	// server then violates exactly that rule, so the conformance tests can
	// prove the matching check fires (a "mutant"). Empty in the zero value;
	// never set in a real deployment. Mutants lists what each id does.
	Break map[string]bool

	// Describe replaces the description of the tools it names: the same
	// server with a changed tool surface (a replayed cassette must then
	// go stale). Empty in the zero value.
	Describe map[string]string
}

// Mutants documents every rule the server can break, by check id. The
// example binary's --break flag accepts these ids.
var Mutants = map[string]string{
	"DISC-1":      "answers server/discover with -32601",
	"DISC-2":      "leaves ttlMs out of the discover result",
	"DISC-3":      "lists only 2025-11-25 in supportedVersions while serving 2026-07-28",
	"DISC-6":      "serves prompts without declaring the prompts capability",
	"DISC-7":      "declares an extension key without a prefix",
	"DISC-8":      "answers server/discover with input_required",
	"DISC-9":      "declares the client-only capabilities sampling, elicitation and roots in server/discover",
	"RES-1":       "drops resultType from every result",
	"RES-2":       "answers tools/list with resultType \"success\"",
	"RES-3":       "leaves serverInfo out of every result's _meta",
	"RES-4":       "puts the malformed _meta key \"refserver:cached\" on tools/list results",
	"RPC-1":       "answers a string id made of digits (\"123\") with the number 123",
	MutantWrongID: "answers every request under another id (a number plus 1000000, a string with a suffix)",
	"RPC-2":       "leaves the id out of error responses to readable requests",
	"RPC-3":       "answers client notifications with a result",
	"RPC-4":       "sends a ping request while answering tools/list",
	"RPC-5":       "answers invalid JSON and invalid requests with -32603 over HTTP, and exits on them over stdio",
	"RPC-6":       "writes its messages in Latin-1 instead of UTF-8",
	"META-1":      "accepts a request without _meta clientCapabilities",
	"META-2":      "rejects a request without _meta clientInfo",
	"META-3":      "remembers that an earlier request declared elicitation and asks for it later",
	"META-4":      "answers a missing elicitation capability with -32021 without data",
	"VER-1":       "leaves data.requested out of -32022",
	"VER-2":       "serves server/discover whatever protocol version it names",
	"VER-3":       "rejects the request after an unsupported version too",
	"STATE-1":     "fills a missing protocolVersion or clientCapabilities from the previous request",
	"ERR-1":       "answers an unknown tool with -32050, an undefined code of the MCP range",
	"ERR-2":       "answers a missing resource with -32002",
	"ERR-3":       "answers an unknown method with -32000",
	"ERR-4":       "sends -32022 data.supported as a comma-separated string",
	"CACHE-1":     "gives resources/read results a ttlMs of -1",
	"CACHE-2":     "puts ttlMs and cacheScope on input_required results",
	"CACHE-3":     "gives tools/list pages after the first cacheScope \"private\"",
	"PAGE-2":      "reads a cursor it did not issue as the start of the list",
	"PAGE-3":      "moves every other cursor request one item back",
	"TOOL-3":      "returns tools/list in a random order on every call",

	// Tools, tool calls, tool schemas, resources, prompts, completion and
	// multi round-trip requests (behaviour in mutants_features.go).
	"TOOL-1":   "serves the tools/list array under \"items\" instead of \"tools\"",
	"TOOL-2":   "stops listing slow_count once any tool has run",
	"TOOL-4":   "serves slow_count's inputSchema without \"type\": \"object\"",
	"TOOL-5":   "lists get_weather under the name \"get weather!\"",
	"TOOL-6":   "declares lookup_region's x-mcp-header as \"Region Name\" (not a token)",
	"TOOL-7":   "mirrors an api_key property of lookup_region into header Mcp-Param-Api-Key",
	"CALL-1":   "leaves content out of tool results",
	"CALL-2":   "answers an unknown tool with an isError result instead of a JSON-RPC error",
	"CALL-3":   "answers arguments that break the inputSchema with a normal success",
	"CALL-4":   "adds a property to structuredContent that the outputSchema forbids",
	"CALL-5":   "leaves the text mirror of structuredContent out of content",
	"CALL-6":   "adds an image block whose data is not base64 to tool results",
	"SCHEMA-1": "serves get_weather's inputSchema with minLength -1",
	"SCHEMA-2": "points search_invoices' customer_id at a remote $ref",
	"SCHEMA-3": "serves slow_count's inputSchema with a property nested 80 levels deep",
	"SCHEMA-4": "declares an unknown $schema dialect on get_weather's outputSchema",
	"RSRC-1":   "lists resources without their name",
	"RSRC-2":   "answers resources/read with \"content\" instead of \"contents\"",
	"RSRC-3":   "answers a missing resource with -32002 (RSRC-3's own mutant)",
	"RSRC-4":   "fails reading the summary resource with -32000 instead of -32603",
	"PROMPT-1": "leaves messages out of prompts/get results",
	"PROMPT-2": "answers an unknown prompt with -32601",
	"COMP-1":   "returns all 250 completion values, over the cap of 100",
	"COMP-2":   "answers completion for an unknown prompt with an empty list",
	"COMP-3":   "answers completion/complete with a result that has no completion",
	"MRTR-1":   "answers resources/templates/list with input_required",
	"MRTR-2":   "sends send_email's input_required without inputRequests or requestState",
	"MRTR-3":   "wraps send_email's input request in a JSON-RPC envelope (jsonrpc, id)",
	"MRTR-4":   "asks send_email's confirmation even when the request declares no elicitation",
	"MRTR-5":   "refuses every retry of send_email with -32602",
	"MRTR-6":   "answers a send_email retry without inputResponses with -32602",
	"MRTR-7":   "answers a tampered requestState with a complete result that has no content",
	"MRTR-8":   "writes a notification after an input_required result on its SSE stream",

	// Transport, headers, removed methods, subscriptions, logging,
	// progress, cancellation and trace context (behaviour in
	// mutants_transport.go).
	"HTTP-1":              "answers a POSTed tools/list with 405 and no body, as if it lived elsewhere",
	"HTTP-2":              "accepts any Origin",
	"HTTP-3":              "answers JSON responses with Content-Type text/plain",
	"HTTP-4":              "answers a POSTed notifications/cancelled with 200 and a JSON body",
	"HTTP-5":              "puts notifications/tools/list_changed on tools/call response streams",
	"HTTP-6":              "answers unknown methods with HTTP 200 instead of 404",
	"HTTP-7":              "answers a request without _meta with HTTP 200 instead of 400",
	MutantRemovedStatus:   "answers the removed methods (ping, logging/setLevel, …) with -32601 under HTTP 200 instead of 404",
	"RESIL-1":             "stops answering once a client drops a request mid-stream (HTTP)",
	"HDR-1":               "takes a missing MCP-Protocol-Version header for 2026-07-28",
	"HDR-2":               "ignores the MCP-Protocol-Version header when it differs from _meta",
	"HDR-3":               "accepts a request without Mcp-Method",
	"HDR-4":               "accepts tools/call, resources/read and prompts/get without Mcp-Name",
	"HDR-5":               "ignores the Mcp-Param-* headers the client sends",
	"REM-1":               "answers ping with an empty result",
	"REM-2":               "answers initialize with an empty result",
	MutantUnnamedVersions: "rejects initialize with -32601 without naming the supported versions",
	"REM-3":               "answers notifications/initialized with a JSON-RPC error",
	"REM-4":               "answers GET and DELETE with 400 and echoes Mcp-Session-Id (with DualEra: serves the legacy GET stream also to a GET with MCP-Protocol-Version: 2026-07-28)",
	"STDIO-1":             "writes a plain-text line to stdout after each response",
	MutantParseNoise:      "writes a plain-text complaint to stdout when a request line is not JSON",
	"STDIO-2":             "sends a ping request on stdout before answering tools/list",
	"STDIO-4":             "keeps running after stdin is closed",
	"STDIO-5":             "answers a request that comes while another is in flight with -32603",
	"SUB-1":               "ends the listen stream right after acknowledging it",
	"SUB-2":               "acknowledges a numeric listen id as a string subscriptionId",
	"SUB-3":               "sends notifications/prompts/list_changed after the acknowledgment although not requested",
	"SUB-4":               "sends notifications/tools/list_changed without a subscriptionId after the acknowledgment",
	MutantSubOtherID:      "sends notifications/tools/list_changed after the acknowledgment with the subscriptionId of the listen request before it",
	"SUB-5":               "sends a log message on the listen stream when the listen request sets a logLevel",
	"SUB-7":               "answers a cancelled listen request with its closing result",
	"LOG-1":               "logs at debug level for requests that set no logLevel",
	MutantListLogs:        "sends notifications/message on list requests that set no logLevel",
	"LOG-2":               "logs at debug level whatever logLevel the request sets",
	"LOG-3":               "leaves logging out of the capabilities while slow_count logs",
	"LOG-4":               "ignores an unknown logLevel instead of rejecting it",
	"PROG-1":              "echoes a numeric progressToken as a string",
	"CANC-1":              "sends notifications/cancelled for the tools/list request it is answering",
	"CANC-2":              "ignores notifications/cancelled for ordinary requests",
	"OTEL-1":              "rejects requests whose _meta carries baggage",
	"OTEL-2":              "puts a traceparent with an all-zero trace id in every result's _meta",
	MutantProgressTrace:   "puts a traceparent with an all-zero trace id in the _meta of every notifications/progress",
}

// breaks reports whether the rule with this check id is to be broken.
func (o Options) breaks(id string) bool { return o.Break[id] }

const (
	defaultPageSize          = 3
	defaultStepDelay         = 5 * time.Millisecond
	defaultKeepAliveInterval = 15 * time.Second
	defaultMaxBodyBytes      = 1 << 20
	defaultMaxConcurrent     = 64
	defaultStateTTL          = 10 * time.Minute
)

// withDefaults returns a copy of o with every zero limit replaced by its
// documented default, so the rest of the package never checks for zero.
func (o Options) withDefaults() Options {
	if o.PageSize <= 0 {
		o.PageSize = defaultPageSize
	}
	if o.StepDelay <= 0 {
		o.StepDelay = defaultStepDelay
	}
	if o.KeepAliveInterval <= 0 {
		o.KeepAliveInterval = defaultKeepAliveInterval
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = defaultMaxBodyBytes
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = defaultMaxConcurrent
	}
	if o.StateTTL <= 0 {
		o.StateTTL = defaultStateTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
