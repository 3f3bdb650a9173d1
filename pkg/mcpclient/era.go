package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// Era is the protocol family a server speaks (basic/versioning.mdx §eras).
// The report records it, so the report owns the type.
type Era = report.Era

const (
	EraModern = report.EraModern
	EraLegacy = report.EraLegacy
)

// Info is what Connect learnt about the server, with the evidence.
type Info struct {
	Era Era `json:"era"`
	// ProtocolVersion is the revision the client uses from now on.
	ProtocolVersion   string          `json:"protocolVersion"`
	SupportedVersions []string        `json:"supportedVersions,omitempty"`
	ServerInfo        *Implementation `json:"serverInfo,omitempty"`
	Capabilities      json.RawMessage `json:"capabilities,omitempty"`
	Instructions      string          `json:"instructions,omitempty"`
	// Discover is the server/discover answer that decided the era (nil when
	// the transport failed); DiscoverResult its decoded result.
	Discover       *Response       `json:"-"`
	DiscoverResult *DiscoverResult `json:"-"`
	// Initialize is the legacy handshake's answer.
	Initialize       *Response         `json:"-"`
	InitializeResult *InitializeResult `json:"-"`
	// SessionID is a legacy Streamable HTTP session (Mcp-Session-Id).
	SessionID string `json:"sessionId,omitempty"`
	// Probe lists each step of era detection and what it concluded.
	Probe []ProbeStep `json:"probe"`
	// Notes are facts for the report, e.g. a discover without serverInfo.
	Notes []string `json:"notes,omitempty"`
}

// ProbeStep is one request of era detection, as the report records it.
type ProbeStep = report.ProbeStep

func (i Info) versionOrLatest() string {
	if i.ProtocolVersion != "" {
		return i.ProtocolVersion
	}
	return Latest
}

// ErrInitializeRejected means the legacy fallback's initialize got a
// JSON-RPC error: the server speaks JSON-RPC but neither era's handshake.
var ErrInitializeRejected = errors.New("rejected initialize")

// ErrAuthRequired means the server wants credentials before anything else.
var ErrAuthRequired = errors.New("the server requires authorization")

// Connect probes the server's era and returns a client ready to use. The
// probe follows the spec's backward-compatibility section (checklist §2):
// server/discover first; a modern answer or a recognised modern error means
// modern; anything else means legacy, reached through initialize.
func Connect(ctx context.Context, t transport.Transport, cfg Config) (*Client, error) {
	c := New(t, cfg)
	switch cfg.ForceEra {
	case EraLegacy:
		return c, c.initialize(ctx, "legacy era forced by configuration")
	case EraModern:
		c.setModern(Latest, nil)
		return c, nil
	}
	era, why, err := c.probe(ctx)
	if err != nil {
		return c, err
	}
	if era == "" && cfg.KeepModern {
		// What the probe's answer lacks (a resultType, say) is for the
		// checks to judge (RES-1, DISC-2), as on the run's own process.
		// Taken for a failed start, every check on a new process went
		// unjudged.
		c.keptModern(why)
		return c, nil
	}
	if era == "" {
		return c, c.initialize(ctx, why)
	}
	return c, nil
}

// keptModern makes c modern after a probe that answered, but not as a
// modern server does (why), keeping what the answer says of the server.
func (c *Client) keptModern(why string) {
	c.mu.Lock()
	resp := c.info.Discover
	c.info.Probe = append(c.info.Probe, ProbeStep{Method: "server/discover", Version: Latest, Outcome: "kept as a modern server, as the run checks it, after: " + why})
	c.mu.Unlock()
	var dr DiscoverResult
	if resp != nil && resp.Error == nil && json.Unmarshal(resp.Result, &dr) == nil {
		c.setModern(Latest, &dr)
		return
	}
	c.setModern(Latest, nil)
}

// New returns a client that has not talked to the server: no probe, no
// handshake. It speaks the era cfg.ForceEra names (modern when empty), so
// conformance checks can send a first message of their choosing.
func New(t transport.Transport, cfg Config) *Client {
	cfg.defaults()
	c := &Client{t: t, cfg: cfg, headerFor: map[string][]HeaderParam{}}
	c.info.Era = cfg.ForceEra
	if c.info.Era == "" {
		c.info.Era = EraModern
		c.info.ProtocolVersion = Latest
	}
	return c
}

// Twin is a modern client over t that speaks as c does, with c's
// server/discover answer, without asking it again: a second connection to
// a Streamable HTTP server, where discover answers for the server, not for
// the connection (the protocol keeps no per-connection state). Its probe
// and notes are empty; it learns tools' headers from its own tools/list.
func (c *Client) Twin(t transport.Transport) *Client {
	info := c.Info()
	tw := New(t, c.cfg)
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.info.Era, tw.info.ProtocolVersion = info.Era, info.ProtocolVersion
	tw.info.SupportedVersions, tw.info.ServerInfo = info.SupportedVersions, info.ServerInfo
	tw.info.Capabilities, tw.info.Instructions = info.Capabilities, info.Instructions
	tw.info.Discover, tw.info.DiscoverResult = info.Discover, info.DiscoverResult
	return tw
}

func (c *Client) addStep(s ProbeStep) {
	c.mu.Lock()
	c.info.Probe = append(c.info.Probe, s)
	c.mu.Unlock()
}

func (c *Client) note(format string, args ...any) {
	c.mu.Lock()
	c.info.Notes = append(c.info.Notes, fmt.Sprintf(format, args...))
	c.mu.Unlock()
}

// probe sends server/discover and classifies the outcome. It returns the
// era, or "" with a reason to try initialize, or an error when the server
// cannot be talked to at all.
func (c *Client) probe(ctx context.Context) (Era, string, error) {
	if c.t.Kind() == "http" {
		resp, err := c.Do(ctx, "server/discover", nil)
		return c.classify(ctx, resp, err)
	}
	return c.probeStdio(ctx)
}

// probeStdio is the stdio probe. A silent legacy server never answers
// server/discover, and its silence is the signal (stdio.mdx §Backward
// Compatibility). A server that is merely slow to start (npx fetching a
// package, go run compiling) must not be mistaken for one, so after
// ProbeTimeout the client sends initialize while it keeps waiting for the
// probe: a late DiscoverResult still means modern.
func (c *Client) probeStdio(ctx context.Context) (Era, string, error) {
	if c.cfg.KnownModern {
		// As long as the probe below waits for a late answer.
		resp, err := c.Do(ctx, "server/discover", nil, withTimeout(max(c.cfg.RequestTimeout, 2*c.cfg.ProbeTimeout)))
		return c.classify(ctx, resp, err)
	}
	type answer struct {
		resp *Response
		err  error
	}
	start := time.Now()
	discovered := make(chan answer, 1)
	go func() {
		// The probe may outlive a short request timeout: after
		// ProbeTimeout initialize is tried, and a late answer here still
		// counts, so it waits at least one more ProbeTimeout beyond.
		resp, err := c.Do(ctx, "server/discover", nil, withTimeout(max(c.cfg.RequestTimeout, 2*c.cfg.ProbeTimeout)))
		discovered <- answer{resp, err}
	}()
	select {
	case a := <-discovered:
		return c.classify(ctx, a.resp, a.err)
	case <-time.After(c.cfg.ProbeTimeout):
	}
	c.addStep(ProbeStep{Method: "server/discover", Version: Latest, Outcome: fmt.Sprintf("no answer within %s: trying initialize while still waiting", c.cfg.ProbeTimeout)})
	initialized := make(chan error, 1)
	go func() {
		initialized <- c.initialize(ctx, "server/discover got no answer within "+c.cfg.ProbeTimeout.String())
	}()
	var a answer
	var initErr error
	select {
	case a = <-discovered:
		initErr = <-initialized // initialize writes Info; let it finish first
	case initErr = <-initialized:
		// Requests may be answered out of order. A failed initialize leaves
		// the probe as the only hope, so wait for it in full; after a good
		// one, a modern server that is alive answers quickly or not at all.
		grace := c.cfg.ProbeTimeout
		if initErr != nil {
			grace = c.cfg.RequestTimeout
		}
		select {
		case a = <-discovered:
		case <-time.After(grace):
			return EraLegacy, "", initErr
		}
	}
	if a.err == nil && a.resp.Error == nil {
		var dr DiscoverResult
		if json.Unmarshal(a.resp.Result, &dr) == nil && dr.ResultType != "" && slices.Contains(dr.SupportedVersions, Latest) {
			c.mu.Lock()
			c.info.Discover, c.info.SessionID = a.resp, ""
			c.mu.Unlock()
			c.addStep(ProbeStep{Method: "server/discover", Version: Latest, Outcome: fmt.Sprintf("discover result after %s: modern (slow start)", time.Since(start).Round(time.Millisecond))})
			c.note("the server answered server/discover only after %s; a client with a shorter probe timeout would take it for a legacy server (raise --probe-timeout or start faster)", time.Since(start).Round(time.Millisecond))
			if initErr == nil {
				c.note("the same process also accepted initialize (dual-era)")
			}
			c.setModern(Latest, &dr)
			return EraModern, "", nil
		}
	}
	return EraLegacy, "", initErr
}

// classify reads the probe's outcome (checklist §2.1-2.3).
func (c *Client) classify(ctx context.Context, resp *Response, err error) (Era, string, error) {
	http := c.t.Kind() == "http"
	c.mu.Lock()
	c.info.Discover = resp
	c.mu.Unlock()
	step := ProbeStep{Method: "server/discover", Version: Latest}
	if resp != nil && resp.Exchange != nil && resp.Exchange.HTTP != nil {
		step.Status = resp.Exchange.HTTP.Status
	}
	if err != nil {
		kind := transport.KindOf(err)
		switch {
		case http && kind == transport.KindHTTPStatus && refusedAuth(resp, step.Status):
			return c.authRequired(resp, step)
		case http && kind == transport.KindHTTPStatus && step.Status >= 400 && step.Status < 500:
			step.Outcome = fmt.Sprintf("HTTP %d without a modern JSON-RPC error: legacy", step.Status)
			c.addStep(step)
			return "", step.Outcome, nil
		case http && kind == transport.KindMalformed && step.Status >= 200 && step.Status < 300:
			step.Outcome = "2xx whose body is not a modern result: legacy"
			c.addStep(step)
			return "", step.Outcome, nil
		}
		step.Outcome = "failed: " + kind.String()
		c.addStep(step)
		return "", "", fmt.Errorf("probing the server with server/discover: %w", err)
	}
	if resp.Error != nil {
		step.Code = resp.Error.Code
		if http && refusedAuth(resp, step.Status) {
			// A JSON-RPC error in the body (the TS SDK's bearer auth
			// sends -32001) does not make the refusal a legacy answer:
			// every later request would be refused too.
			return c.authRequired(resp, step)
		}
		switch resp.Error.Code {
		case jsonrpc.CodeUnsupportedProtocolVersion:
			return c.onUnsupported(resp, step)
		case jsonrpc.CodeHeaderMismatch, jsonrpc.CodeMissingRequiredClientCapability:
			step.Outcome = fmt.Sprintf("error %d (%s): modern server that rejected the probe", resp.Error.Code, jsonrpc.CodeName(resp.Error.Code))
			c.addStep(step)
			c.note("the server rejected server/discover with %d: %s", resp.Error.Code, jsonrpc.Clip(resp.Error.Message, 200))
			c.setModern(Latest, nil)
			return EraModern, "", nil
		case jsonrpc.CodeMethodNotFound:
			if http && step.Status == 404 {
				// streamable-http.mdx: the JSON-RPC body tells a modern 404
				// from a legacy endpoint's.
				step.Outcome = "404 with -32601: modern server without server/discover"
				c.addStep(step)
				c.note("server/discover is not implemented (a 2026-07-28 server MUST implement it, DISC-1)")
				c.setModern(Latest, nil)
				return EraModern, "", nil
			}
		}
		step.Outcome = fmt.Sprintf("error %d: not a modern answer, legacy", resp.Error.Code)
		c.addStep(step)
		return "", step.Outcome, nil
	}
	var dr DiscoverResult
	if err := json.Unmarshal(resp.Result, &dr); err != nil || dr.ResultType == "" || dr.SupportedVersions == nil {
		step.Outcome = "result without resultType or supportedVersions: legacy"
		c.addStep(step)
		return "", step.Outcome, nil
	}
	if !slices.Contains(dr.SupportedVersions, Latest) {
		step.Outcome = fmt.Sprintf(DiscoverWithoutLatest+"supportedVersions %q lacks %s", dr.SupportedVersions, Latest)
		c.addStep(step)
		if legacyCommon(dr.SupportedVersions) != "" {
			c.note("the server answers server/discover but does not list %s; falling back to initialize", Latest)
			return "", step.Outcome, nil
		}
		return "", "", fmt.Errorf("the server supports %q and none of them is a revision this harness speaks (%s)", dr.SupportedVersions, Latest)
	}
	step.Outcome = "discover result: modern"
	c.addStep(step)
	c.setModern(Latest, &dr)
	return EraModern, "", nil
}

// DiscoverWithoutLatest begins the probe step of a server that answered
// server/discover with a result whose supportedVersions lacks Latest.
const DiscoverWithoutLatest = "discover result, but "

// refusedAuth reports an HTTP answer that refuses the request's
// credentials (or their absence): a 401, or a 403 with WWW-Authenticate.
// A bare 403 may be the server's Origin or Host validation instead.
func refusedAuth(resp *Response, status int) bool {
	if resp == nil || resp.Exchange == nil || resp.Exchange.HTTP == nil {
		return false
	}
	return status == http.StatusUnauthorized || status == http.StatusForbidden && resp.Exchange.HTTP.Header.Get("WWW-Authenticate") != ""
}

// authRequired ends the probe: a server that refuses the credentials the
// run was given (or asks for some) cannot be tested; each check would
// fail on the same refusal.
func (c *Client) authRequired(resp *Response, step ProbeStep) (Era, string, error) {
	step.Outcome = "authorization required"
	c.addStep(step)
	what := fmt.Sprintf("HTTP %d", step.Status)
	if h := resp.Exchange.HTTP.Header.Get("WWW-Authenticate"); h != "" {
		what += fmt.Sprintf(" with WWW-Authenticate %q", jsonrpc.Clip(h, 200))
	}
	switch {
	case resp.Error != nil && resp.Error.Code != 0:
		what += fmt.Sprintf(", error %d: %s", resp.Error.Code, jsonrpc.Clip(resp.Error.Message, 200))
	case resp.Error != nil && resp.Error.Message != "":
		// A gateway's {"error": {"message": …}}: no JSON-RPC code to show.
		what += fmt.Sprintf(": %s", jsonrpc.Clip(resp.Error.Message, 200))
	}
	return "", "", fmt.Errorf("%w: server/discover got %s. Pass a token with --header \"Authorization: Bearer …\" (server.headers in mcp-eval.yaml); if one was passed, the server refused it: it may be wrong or expired", ErrAuthRequired, what)
}

func (c *Client) onUnsupported(resp *Response, step ProbeStep) (Era, string, error) {
	var data struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}
	_ = json.Unmarshal(resp.Error.Data, &data)
	step.Outcome = fmt.Sprintf("-32022: modern server; it supports %q", data.Supported)
	c.addStep(step)
	if slices.Contains(data.Supported, Latest) {
		return "", "", fmt.Errorf("the server rejected %s as unsupported while listing it as supported (%q)", Latest, data.Supported)
	}
	// AMB-13: what to do when the only common version is legacy is not
	// specified; initialize is the one way a legacy revision is spoken.
	if legacyCommon(data.Supported) != "" {
		c.note("modern server with no common modern version (it supports %q); falling back to initialize", data.Supported)
		return "", "modern server, no common modern version", nil
	}
	return "", "", fmt.Errorf("the server supports %q and none of them is a revision this harness speaks (%s)", data.Supported, Latest)
}

func legacyCommon(versions []string) string {
	for _, v := range LegacyVersions {
		if slices.Contains(versions, v) {
			return v
		}
	}
	return ""
}

func (c *Client) setModern(version string, dr *DiscoverResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.info.Era = EraModern
	c.info.ProtocolVersion = version
	if dr == nil {
		return
	}
	c.info.DiscoverResult = dr
	c.info.SupportedVersions = dr.SupportedVersions
	c.info.Capabilities = dr.Capabilities
	c.info.Instructions = dr.Instructions
	c.info.ServerInfo = dr.Meta.ServerInfo
	if c.info.ServerInfo == nil && dr.ServerInfo != nil {
		c.info.ServerInfo = dr.ServerInfo
		c.info.Notes = append(c.info.Notes, "serverInfo is at the top level of the discover result, a pre-final draft shape; 2026-07-28 puts it in _meta (DISC-5)")
	}
}

// initialize runs the legacy handshake (2025-11-25 lifecycle): initialize,
// then notifications/initialized, and keeps Mcp-Session-Id when issued.
func (c *Client) initialize(ctx context.Context, why string) error {
	c.mu.Lock()
	c.info.Era = EraLegacy
	c.info.ProtocolVersion = ""
	c.mu.Unlock()
	params := map[string]any{
		"protocolVersion": Legacy1125,
		"capabilities":    map[string]any{},
		"clientInfo":      c.cfg.ClientInfo,
	}
	resp, err := c.Do(ctx, "initialize", params)
	step := ProbeStep{Method: "initialize", Version: Legacy1125}
	if resp != nil && resp.Exchange != nil && resp.Exchange.HTTP != nil {
		step.Status = resp.Exchange.HTTP.Status
	}
	c.mu.Lock()
	c.info.Initialize = resp
	c.mu.Unlock()
	if err != nil {
		step.Outcome = "failed: " + transport.KindOf(err).String()
		c.addStep(step)
		return fmt.Errorf("the server is not a 2026-07-28 server (%s), and the legacy initialize handshake failed: %w", why, err)
	}
	if resp.Error != nil {
		step.Code = resp.Error.Code
		step.Outcome = "error"
		c.addStep(step)
		return fmt.Errorf("the server is not a 2026-07-28 server (%s), and it %w with error %d: %s", why, ErrInitializeRejected, resp.Error.Code, jsonrpc.Clip(resp.Error.Message, 200))
	}
	var ir InitializeResult
	if err := json.Unmarshal(resp.Result, &ir); err != nil || ir.ProtocolVersion == "" {
		step.Outcome = "result without protocolVersion"
		c.addStep(step)
		return fmt.Errorf("the server's initialize result has no protocolVersion: %s", jsonrpc.Clip(string(resp.Result), 200))
	}
	step.Outcome = "initialize result: legacy " + ir.ProtocolVersion
	c.addStep(step)
	c.mu.Lock()
	c.info.InitializeResult = &ir
	c.info.ProtocolVersion = ir.ProtocolVersion
	c.info.Capabilities = ir.Capabilities
	c.info.ServerInfo = ir.ServerInfo
	c.info.Instructions = ir.Instructions
	if resp.Exchange != nil && resp.Exchange.HTTP != nil {
		c.info.SessionID = resp.Exchange.HTTP.Header.Get(HeaderSessionID)
	}
	known := slices.Contains(LegacyVersions, ir.ProtocolVersion)
	c.mu.Unlock()
	if !known {
		c.note("initialize answered with protocol version %q, which this harness does not know; continuing as %s", ir.ProtocolVersion, Legacy1125)
	}
	if _, err := c.Notify(ctx, "notifications/initialized", nil); err != nil {
		c.note("notifications/initialized was not accepted: %v", err)
	}
	return nil
}
