package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// Era is the protocol family a server speaks (basic/versioning.mdx §eras).
type Era string

const (
	EraModern Era = "modern" // 2026-07-28: server/discover, per-request _meta
	EraLegacy Era = "legacy" // 2025-11-25 and earlier: initialize handshake
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

// ProbeStep is one request of era detection.
type ProbeStep struct {
	Method  string `json:"method"`
	Version string `json:"version,omitempty"`
	Status  int    `json:"httpStatus,omitempty"`
	Code    int64  `json:"errorCode,omitempty"`
	Outcome string `json:"outcome"`
}

func (i Info) versionOrLatest() string {
	if i.ProtocolVersion != "" {
		return i.ProtocolVersion
	}
	return Latest
}

// ErrAuthRequired means the server wants credentials before anything else.
var ErrAuthRequired = errors.New("the server requires authorization")

// Connect probes the server's era and returns a client ready to use. The
// probe follows the spec's backward-compatibility section (checklist §2):
// server/discover first; a modern answer or a recognised modern error means
// modern; anything else means legacy, reached through initialize.
func Connect(ctx context.Context, t transport.Transport, cfg Config) (*Client, error) {
	cfg.defaults()
	c := &Client{t: t, cfg: cfg, headerFor: map[string][]HeaderParam{}}
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
	if era != EraModern {
		return c, c.initialize(ctx, why)
	}
	return c, nil
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
	http := c.t.Kind() == "http"
	pctx := ctx
	if !http {
		// A silent legacy stdio server never answers the probe; its silence
		// is the signal (stdio.mdx §Backward Compatibility).
		var cancel context.CancelFunc
		pctx, cancel = context.WithTimeout(ctx, c.cfg.ProbeTimeout)
		defer cancel()
	}
	resp, err := c.Do(pctx, "server/discover", nil)
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
		case !http && kind == transport.KindTimeout && ctx.Err() == nil:
			step.Outcome = fmt.Sprintf("no answer within %s: legacy", c.cfg.ProbeTimeout)
			c.addStep(step)
			return EraLegacy, "server/discover got no answer", nil
		case http && kind == transport.KindHTTPStatus && (step.Status == 401 || step.Status == 403) && resp.Exchange.HTTP.Header.Get("WWW-Authenticate") != "":
			step.Outcome = "authorization required"
			c.addStep(step)
			return "", "", fmt.Errorf("%w (HTTP %d with WWW-Authenticate %q): pass a token with --header \"Authorization: Bearer …\"", ErrAuthRequired, step.Status, jsonrpc.Clip(resp.Exchange.HTTP.Header.Get("WWW-Authenticate"), 200))
		case http && kind == transport.KindHTTPStatus && step.Status >= 400 && step.Status < 500:
			step.Outcome = fmt.Sprintf("HTTP %d without a modern JSON-RPC error: legacy", step.Status)
			c.addStep(step)
			return EraLegacy, step.Outcome, nil
		case http && kind == transport.KindMalformed && step.Status >= 200 && step.Status < 300:
			step.Outcome = "2xx whose body is not a modern result: legacy"
			c.addStep(step)
			return EraLegacy, step.Outcome, nil
		}
		step.Outcome = "failed: " + kind.String()
		c.addStep(step)
		return "", "", fmt.Errorf("probing the server with server/discover: %w", err)
	}
	if resp.Error != nil {
		step.Code = resp.Error.Code
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
		return EraLegacy, step.Outcome, nil
	}
	var dr DiscoverResult
	if err := json.Unmarshal(resp.Result, &dr); err != nil || dr.ResultType == "" || dr.SupportedVersions == nil {
		step.Outcome = "result without resultType or supportedVersions: legacy"
		c.addStep(step)
		return EraLegacy, step.Outcome, nil
	}
	if !slices.Contains(dr.SupportedVersions, Latest) {
		step.Outcome = fmt.Sprintf("discover result, but supportedVersions %q lacks %s", dr.SupportedVersions, Latest)
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
		return fmt.Errorf("the server is not a 2026-07-28 server (%s), and it rejected initialize with error %d: %s", why, resp.Error.Code, jsonrpc.Clip(resp.Error.Message, 200))
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
