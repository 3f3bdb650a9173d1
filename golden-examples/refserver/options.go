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
	// 25ms: long enough that progress notifications are visibly streamed,
	// short enough that n=20 finishes in half a second.
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

	// Break names checklist rules to break, by check id ("RES-1"): the
	// server then violates exactly that rule, so the conformance tests can
	// prove the matching check fires (a "mutant"). Empty in the zero value;
	// never set in a real deployment. Mutants lists what each id does.
	Break map[string]bool
}

// Mutants documents every rule the server can break, by check id. The
// example binary's --break flag accepts these ids.
var Mutants = map[string]string{
	"DISC-1": "answers server/discover with -32601",
	"DISC-2": "leaves ttlMs out of the discover result",
	"DISC-3": "lists only 2025-11-25 in supportedVersions while serving 2026-07-28",
	"DISC-6": "serves prompts without declaring the prompts capability",
	"DISC-7": "declares an extension key without a prefix",
	"DISC-8": "answers server/discover with input_required",
	"RES-1":  "drops resultType from every result",
	"TOOL-3": "returns tools/list in a random order on every call",
}

// breaks reports whether the rule with this check id is to be broken.
func (o Options) breaks(id string) bool { return o.Break[id] }

const (
	defaultPageSize          = 3
	defaultStepDelay         = 25 * time.Millisecond
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
