package check

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// Observations are the plain requests of one repetition, asked once and
// judged by every check of that repetition: run i of every MUST check (and
// the one run of the others, with run 0) reads the same server/discover,
// the same walk of each list, the same read of a resource. A rule that
// holds on a response is judged where the response is, not by sending it
// again per check; a MUST rule still sees one independent observation per
// run, so a server that answers differently between runs is still flaky.
//
// Only requests sent on the shared client exactly as the client builds
// them belong here; a check that varies headers, _meta, ids or bodies
// sends its own.
type Observations struct {
	// ctx bounds every observation: the run's, not the first asking
	// check's, whose end must not cut the answer the others wait for.
	ctx     context.Context
	mu      sync.Mutex
	entries map[observeKey]*memoEntry
	sent    int
}

type observeKey struct {
	run    int
	method string
	params string
	list   string // the item key when the request is a walk of a list
	caps   string // the client capabilities declared, when not the client's own
}

type observed struct {
	resp  *mcpclient.Response
	list  *mcpclient.ListResult
	tools *mcpclient.Tools
	err   error
}

// NewObservations is for drivers: ctx is the whole run's.
func NewObservations(ctx context.Context) *Observations {
	return &Observations{ctx: ctx, entries: map[observeKey]*memoEntry{}}
}

// Sent is how many observations were made (each one request, or one walk
// of a list), for tests and benchmarks.
func (o *Observations) Sent() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.sent
}

func (o *Observations) get(k observeKey, fetch func(ctx context.Context) observed) observed {
	o.mu.Lock()
	e := o.entries[k]
	if e == nil {
		e = &memoEntry{}
		o.entries[k] = e
		o.sent++
	}
	o.mu.Unlock()
	e.once.Do(func() { e.v = fetch(o.ctx) })
	v, _ := e.v.(observed)
	return v
}

// Do is Env.Client.Do(method, params) as observed in this pass's
// repetition: the first check of the repetition that asks sends it, the
// others judge the same response. The response is shared: read it, never
// change it.
func (p *Pass) Do(method string, params any) (*mcpclient.Response, error) {
	return p.do(nil, method, params)
}

// DoWithCapabilities is Do with these client capabilities declared instead
// of the client's own (mcpclient.WithCapabilities): the checks that ask
// with every capability declared (RPC-4, MRTR-1, RES-3) share one answer
// per repetition. Only a request without effects belongs here.
func (p *Pass) DoWithCapabilities(caps json.RawMessage, method string, params any) (*mcpclient.Response, error) {
	return p.do(caps, method, params)
}

func (p *Pass) do(caps json.RawMessage, method string, params any) (*mcpclient.Response, error) {
	var opts []mcpclient.CallOption
	if caps != nil {
		opts = append(opts, mcpclient.WithCapabilities(caps))
	}
	o := p.observations()
	if o == nil {
		return p.Env.Client.Do(p.Ctx, method, params, opts...)
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	if key, ok := listKeys[method]; ok && caps == nil && string(b) == "null" {
		// The first page of the repetition's walk of that list is this
		// very request (no cursor, the client's own _meta).
		if lr, _ := p.List(method, key); lr != nil && len(lr.Pages) > 0 && lr.Pages[0].Response != nil {
			return lr.Pages[0].Response, nil
		}
	}
	v := o.get(observeKey{run: p.Run, method: method, params: string(b), caps: string(caps)}, func(ctx context.Context) observed {
		resp, err := p.Env.Client.Do(ctx, method, params, opts...)
		return observed{resp: resp, err: err}
	})
	return v.resp, v.err
}

// List is Env.Client.List(method, key) as observed in this pass's
// repetition (every page, walked once). The walk of tools/list is the one
// ListTools made: checks that judge the raw list and those that read the
// typed tools see the same pages.
func (p *Pass) List(method, key string) (*mcpclient.ListResult, error) {
	o := p.observations()
	if o == nil {
		return p.Env.Client.List(p.Ctx, method, key)
	}
	if method == "tools/list" && key == "tools" {
		// ListTools is this walk (Client.ListTools lists with these
		// arguments): one walk of the tools serves both.
		t, err := p.ListTools()
		if t == nil {
			return nil, err
		}
		return t.List, err
	}
	v := o.get(observeKey{run: p.Run, method: method, list: key}, func(ctx context.Context) observed {
		c, err := p.listClient()
		if err != nil {
			return observed{err: err}
		}
		lr, err := c.List(ctx, method, key)
		return observed{list: lr, err: err}
	})
	return v.list, v.err
}

// listClient is the connection this repetition walks its lists on.
func (p *Pass) listClient() (*mcpclient.Client, error) {
	if p.Env.Lists == nil {
		return p.Env.Client, nil
	}
	c, err := p.Env.Lists(p.Run)
	if err != nil {
		return nil, fmt.Errorf("opening the connection repetition %d walks its lists on: %w", p.Run+1, err)
	}
	return c, nil
}

// ListTools is Env.Client.ListTools as observed in this pass's repetition.
func (p *Pass) ListTools() (*mcpclient.Tools, error) {
	o := p.observations()
	if o == nil {
		return p.Env.Client.ListTools(p.Ctx)
	}
	v := o.get(observeKey{run: p.Run, method: "tools/list", list: toolsTyped}, func(ctx context.Context) observed {
		c, err := p.listClient()
		if err != nil {
			return observed{err: err}
		}
		t, err := c.ListTools(ctx)
		return observed{tools: t, err: err}
	})
	return v.tools, v.err
}

// listKeys are the paginated lists by method, with the key of their
// entries.
var listKeys = map[string]string{
	"tools/list": "tools", "prompts/list": "prompts",
	"resources/list": "resources", "resources/templates/list": "resourceTemplates",
}

// toolsTyped is the list key of ListTools's observation.
const toolsTyped = "tools (typed)"

// seed makes the requests GatherFacts made on the shared client (the
// probe's server/discover, every list's walk) repetition 0's observations:
// they are the requests Pass.Do, List and ListTools send, on the same
// client, so run 0 judges them instead of asking again; runs 1..N-1 still
// ask for themselves. They do not count as sent.
//
// With lists on connections of their own (Env.Lists), only the
// server/discover is seeded: repetition 0 walks its lists on its own
// connection like the others.
func (o *Observations) seed(f *Facts, ownLists bool) {
	if f == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range f.seen {
		k := s.key
		k.run = 0
		if ownLists && k.list != "" {
			continue
		}
		if o.entries[k] != nil {
			continue
		}
		e := &memoEntry{}
		v := s.v
		e.once.Do(func() { e.v = v })
		o.entries[k] = e
	}
}

func (p *Pass) observations() *Observations {
	if p.Env.Observed == nil || p.Env.Client == nil {
		return nil
	}
	return p.Env.Observed
}
