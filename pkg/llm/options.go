package llm

import (
	"context"
	"net/http"
	"time"
)

// Options tune a provider's HTTP behaviour. The zero value of every field
// is its documented default.
type Options struct {
	// HTTPClient sends the requests (default: a client of its own whose
	// deadlines come from the contexts below, never http.DefaultClient).
	HTTPClient *http.Client
	// Timeout bounds one Complete call, retries and backoff included
	// (default 5 minutes), within the caller's context deadline.
	Timeout time.Duration
	// AttemptTimeout bounds one HTTP attempt (default 2 minutes): a hung
	// connection is retried, not waited on until Timeout.
	AttemptTimeout time.Duration
	// MaxRetries is how often a 429, 5xx or network error is retried
	// (default 4; negative: never).
	MaxRetries int
	// MaxBackoff caps one wait between attempts, a Retry-After included
	// (default 60s): a server asking for longer is given up on.
	MaxBackoff time.Duration
	// DefaultMaxTokens is max_tokens when the request sets none, for the
	// Anthropic API, which requires it (default 4096).
	DefaultMaxTokens int
	// Sleep waits between attempts (default: a timer that stops with
	// ctx). Tests inject one so retry tests take no time.
	Sleep func(ctx context.Context, d time.Duration) error
	// UserAgent is sent with every request (default "mcp-eval").
	UserAgent string
}

// Defaults of Options.
const (
	DefaultTimeout          = 5 * time.Minute
	DefaultAttemptTimeout   = 2 * time.Minute
	DefaultMaxRetries       = 4
	DefaultMaxBackoff       = 60 * time.Second
	DefaultMaxTokens        = 4096
	defaultUserAgent        = "mcp-eval"
	maxResponseBytes        = 16 << 20 // a reply with tool calls is a few KiB
	maxErrorExcerpt         = 500      // characters of a provider error kept
	firstBackoff            = 500 * time.Millisecond
	maxExponentialBackoff   = 8 * time.Second
	maxToolCallsPerResponse = 128
)

func (o Options) withDefaults() Options {
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{
			// Never follow a redirect: Go drops Authorization on a
			// cross-host hop but would forward x-api-key and api-key.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = DefaultAttemptTimeout
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultMaxRetries
	} else if o.MaxRetries < 0 {
		o.MaxRetries = 0
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.DefaultMaxTokens <= 0 {
		o.DefaultMaxTokens = DefaultMaxTokens
	}
	if o.Sleep == nil {
		o.Sleep = sleepCtx
	}
	if o.UserAgent == "" {
		o.UserAgent = defaultUserAgent
	}
	return o
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
