package refserver

// Tool definitions exactly as served by tools/list. Names follow TOOL-5
// (^[A-Za-z0-9_.-]{1,128}$); every inputSchema has root type "object"
// (TOOL-4); the only x-mcp-header sits on a top-level string property
// (TOOL-6) of a dedicated tool, so the common tools stay plain.

const getWeatherDef = `{
  "name": "get_weather",
  "title": "Weather lookup",
  "description": "Get the current weather for a city. The data is fake but deterministic: the same location always gives the same weather.",
  "inputSchema": {
    "type": "object",
    "properties": {
      "location": {"type": "string", "minLength": 1, "maxLength": 100, "description": "City name, e.g. \"Seattle, WA\" or \"Paris\""},
      "units": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius", "description": "Temperature units"}
    },
    "required": ["location"],
    "additionalProperties": false
  },
  "outputSchema": {
    "type": "object",
    "properties": {
      "location": {"type": "string"},
      "temperature": {"type": "number"},
      "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
      "conditions": {"type": "string"}
    },
    "required": ["location", "temperature", "units", "conditions"],
    "additionalProperties": false
  },
  "annotations": {"title": "Weather lookup", "readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}
}`

// searchInvoicesDef uses $defs and $ref in both schemas so that clients'
// $ref resolution (SCHEMA-1, SCHEMA-2) is exercised.
const searchInvoicesDef = `{
  "name": "search_invoices",
  "title": "Invoice search",
  "description": "List a customer's invoices, optionally filtered by status. Customer ids look like C1234. The data is fake but deterministic.",
  "inputSchema": {
    "type": "object",
    "$defs": {
      "customerId": {"type": "string", "pattern": "^C[0-9]{4}$", "description": "Customer id: the letter C followed by four digits"},
      "invoiceStatus": {"type": "string", "enum": ["paid", "open", "overdue"]}
    },
    "properties": {
      "customer_id": {"$ref": "#/$defs/customerId"},
      "status": {"$ref": "#/$defs/invoiceStatus", "description": "Only return invoices with this status"},
      "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10, "description": "Maximum number of invoices to return"}
    },
    "required": ["customer_id"],
    "additionalProperties": false
  },
  "outputSchema": {
    "type": "object",
    "$defs": {
      "invoiceStatus": {"type": "string", "enum": ["paid", "open", "overdue"]},
      "invoice": {
        "type": "object",
        "properties": {
          "id": {"type": "string"},
          "customer_id": {"type": "string"},
          "status": {"$ref": "#/$defs/invoiceStatus"},
          "amount_cents": {"type": "integer", "minimum": 0},
          "currency": {"type": "string", "const": "USD"},
          "due_date": {"type": "string", "format": "date"}
        },
        "required": ["id", "customer_id", "status", "amount_cents", "currency", "due_date"],
        "additionalProperties": false
      }
    },
    "properties": {
      "customer_id": {"type": "string"},
      "invoices": {"type": "array", "items": {"$ref": "#/$defs/invoice"}},
      "total": {"type": "integer", "minimum": 0, "description": "Number of matching invoices before the limit was applied"}
    },
    "required": ["customer_id", "invoices", "total"],
    "additionalProperties": false
  },
  "annotations": {"title": "Invoice search", "readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}
}`

const sendEmailDef = `{
  "name": "send_email",
  "title": "Send email",
  "description": "Queue an email. Asks the user to confirm first (form elicitation through a multi round-trip request); needs the elicitation client capability. Demo only: nothing is ever sent.",
  "inputSchema": {
    "type": "object",
    "properties": {
      "to": {"type": "string", "format": "email", "maxLength": 254, "description": "Recipient address"},
      "subject": {"type": "string", "minLength": 1, "maxLength": 200},
      "body": {"type": "string", "maxLength": 10000}
    },
    "required": ["to", "subject", "body"],
    "additionalProperties": false
  },
  "annotations": {"title": "Send email", "readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": true}
}`

// lookupRegionDef carries the x-mcp-header annotation: on HTTP, a call with a
// region must repeat it in Mcp-Param-Region (HDR-5).
const lookupRegionDef = `{
  "name": "lookup_region",
  "title": "Regional lookup",
  "description": "Count the records matching a query in a region (fake, deterministic). On Streamable HTTP the region is mirrored into the Mcp-Param-Region header.",
  "inputSchema": {
    "type": "object",
    "properties": {
      "region": {"type": "string", "x-mcp-header": "Region", "maxLength": 64, "description": "Region to search, e.g. us-west1; defaults to global"},
      "query": {"type": "string", "maxLength": 500, "description": "Search text"}
    },
    "required": ["query"],
    "additionalProperties": false
  },
  "annotations": {"title": "Regional lookup", "readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}
}`

const slowCountDef = `{
  "name": "slow_count",
  "title": "Slow counter",
  "description": "Count from 1 to n, one step at a time. Sends notifications/progress when the request carries a progressToken, and notifications/message when it sets a logLevel.",
  "inputSchema": {
    "type": "object",
    "properties": {
      "n": {"type": "integer", "minimum": 1, "maximum": 20, "description": "How far to count"}
    },
    "required": ["n"],
    "additionalProperties": false
  },
  "outputSchema": {
    "type": "object",
    "properties": {"count": {"type": "integer"}},
    "required": ["count"],
    "additionalProperties": false
  },
  "annotations": {"title": "Slow counter", "readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}
}`
