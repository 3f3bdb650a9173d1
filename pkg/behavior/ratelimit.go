package behavior

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
)

// RateLimit bounds one provider: calls in flight and calls per minute
// (0: no limit of that kind). Providers are keyed by the part of a model
// id before the first colon (openai, anthropic, an endpoints: name).
type RateLimit struct {
	Concurrency int
	PerMinute   int
}

// ProviderKey is the rate-limit key of a model id.
func ProviderKey(modelID string) string {
	k, _, _ := strings.Cut(modelID, ":")
	return k
}

// limiter enforces one RateLimit. Calls per minute are spaced evenly
// (one every minute/PerMinute), which never bursts past the provider's
// limit the way a bucket refilled once a minute can.
type limiter struct {
	sem      chan struct{} // nil: no concurrency limit
	interval time.Duration

	mu   sync.Mutex
	next time.Time
}

func newLimiter(l RateLimit) *limiter {
	lim := &limiter{}
	if l.Concurrency > 0 {
		lim.sem = make(chan struct{}, l.Concurrency)
	}
	if l.PerMinute > 0 {
		lim.interval = time.Minute / time.Duration(l.PerMinute)
	}
	return lim
}

// acquire waits for a slot; release must be called after the call.
func (l *limiter) acquire(ctx context.Context) (release func(), err error) {
	if l.sem != nil {
		select {
		case l.sem <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	release = func() {
		if l.sem != nil {
			<-l.sem
		}
	}
	if l.interval > 0 {
		l.mu.Lock()
		now := time.Now()
		at := l.next
		if at.Before(now) {
			at = now
		}
		l.next = at.Add(l.interval)
		l.mu.Unlock()
		if wait := time.Until(at); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				release()
				return nil, ctx.Err()
			}
		}
	}
	return release, nil
}

// limitedProvider is a Provider whose calls pass through a limiter shared
// by every model of the same provider.
type limitedProvider struct {
	llm.Provider
	lim *limiter
}

func (p limitedProvider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	release, err := p.lim.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return p.Provider.Complete(ctx, req)
}

// limiters hands out one limiter per provider key.
type limiters struct {
	conf map[string]RateLimit
	mu   sync.Mutex
	by   map[string]*limiter
}

func (ls *limiters) wrap(p llm.Provider) llm.Provider {
	key := ProviderKey(p.ID())
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.by == nil {
		ls.by = map[string]*limiter{}
	}
	l, ok := ls.by[key]
	if !ok {
		conf, set := ls.conf[key]
		if !set {
			return p
		}
		l = newLimiter(conf)
		ls.by[key] = l
	}
	return limitedProvider{Provider: p, lim: l}
}
