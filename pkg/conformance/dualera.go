package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// Dual-era servers (basic/versioning.mdx §Terminology, §Backward
// Compatibility) serve 2026-07-28 requests and run a legacy session for a
// client that opens with initialize. A few rules differ for them: the
// SHOULD to name the supported versions in an initialize error is for
// modern-only servers (REM-2), a GET or DELETE without MCP-Protocol-Version
// may take the legacy path (REM-4), and what such a server does with a
// request that is neither modern nor an initialize is not specified
// (META-1). Whether a server is dual-era is observed once per run, not
// assumed: the run already saw it serve 2026-07-28 requests, and this asks
// the legacy side.

// legacySide is what a legacy initialize, sent as the first message of a
// connection of its own, showed.
type legacySide struct {
	dualEra bool
	// version is the legacy revision initialize agreed on.
	version string
	// served is the legacy request served in that session (dual-era only).
	served string
	// init is initialize's answer (nil when the transport failed);
	// initErr is the handshake's error.
	init    *mcpclient.Response
	initErr error
	// ev is the exchange that decided: initialize, or the request after it.
	ev *check.Evidence
	// observed says what was seen, for messages and the report.
	observed string
	// openErr: no connection could be opened, nothing was observed.
	openErr error
}

type legacySideKey struct{}

// legacySideOf returns the run's observation of the legacy side, made by
// the first check that asks unless Run began it once its own process was
// up (stdio, when META-1 or REM-2 runs). An error means the harness could not open a
// connection to ask.
func legacySideOf(p *check.Pass) (*legacySide, error) {
	compute := func() any { return observeLegacySide(p.Ctx, p.Env) }
	var v any
	if p.Env.Memo != nil {
		v = p.Env.Memo.Do(legacySideKey{}, compute)
	} else {
		v = compute()
	}
	ls, _ := v.(*legacySide)
	if ls == nil {
		// The observation Run began panicked (beside): made again here,
		// where the check's run reports a panic as any check's.
		ls = observeLegacySide(p.Ctx, p.Env)
	}
	if ls.openErr != nil {
		return nil, fmt.Errorf("opening a connection for a legacy initialize: %w", ls.openErr)
	}
	return ls, nil
}

// reportedLegacySide is the observation for the report, when a check made
// it (nil when no check needed it).
func reportedLegacySide(env check.Env) *report.LegacySide {
	if env.Memo == nil {
		return nil
	}
	ls, _ := env.Memo.Do(legacySideKey{}, func() any { return (*legacySide)(nil) }).(*legacySide)
	if ls == nil || ls.openErr != nil {
		return nil
	}
	out := &report.LegacySide{DualEra: ls.dualEra, Observed: ls.observed}
	if ls.dualEra {
		out.LegacyVersion = ls.version
	}
	return out
}

// legacySmokeMethod is the legacy request that shows a session is served:
// a list the legacy capabilities declare, else ping (every 2025-11-25
// server answers it).
func legacySmokeMethod(caps json.RawMessage) string {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(caps, &m)
	for _, c := range []struct{ capability, method string }{{"tools", "tools/list"}, {"prompts", "prompts/list"}, {"resources", "resources/list"}} {
		if _, ok := m[c.capability]; ok {
			return c.method
		}
	}
	return "ping"
}

// observeLegacySide opens a connection whose first message is initialize:
// servers that fix their era per process (or per session) on the first
// message must see initialize first to show their legacy side.
func observeLegacySide(ctx context.Context, env check.Env) *legacySide {
	if env.FreshLegacy == nil {
		return &legacySide{openErr: errors.New("the driver cannot open connections")}
	}
	c, closeFn, err := env.FreshLegacy(ctx)
	if c == nil {
		if err == nil {
			err = errors.New("no connection")
		}
		return &legacySide{openErr: err}
	}
	defer closeFn()
	info := c.Info()
	if info.Initialize == nil && transport.GatewayRefused(err) {
		// A proxy answered in the server's stead: nothing observed.
		return &legacySide{openErr: err}
	}
	ls := &legacySide{init: info.Initialize, initErr: err, ev: check.FromResponse(info.Initialize)}
	if err != nil {
		if info.Initialize == nil {
			ls.observed = fmt.Sprintf("a legacy initialize on a connection of its own failed: %v", err)
		} else {
			ls.observed = "a legacy initialize on a connection of its own got " + remDescribe(info.Initialize)
		}
		return ls
	}
	ir := info.InitializeResult
	var caps map[string]json.RawMessage
	switch {
	case ir == nil || !slices.Contains(mcpclient.LegacyVersions, ir.ProtocolVersion):
		v := ""
		if ir != nil {
			v = ir.ProtocolVersion
		}
		ls.observed = fmt.Sprintf("initialize agreed on protocol version %q, not a legacy revision", v)
		return ls
	case json.Unmarshal(ir.Capabilities, &caps) != nil || !bytes.HasPrefix(bytes.TrimSpace(ir.Capabilities), []byte("{")):
		ls.observed = "the InitializeResult's capabilities are not an object"
		return ls
	case ir.ServerInfo == nil || ir.ServerInfo.Name == "":
		ls.observed = "the InitializeResult has no serverInfo.name"
		return ls
	}
	ls.version = ir.ProtocolVersion
	// An answer to initialize alone is not a session: one legacy request
	// must be served in it.
	method := legacySmokeMethod(ir.Capabilities)
	resp, err := c.Do(ctx, method, nil)
	switch {
	case resp == nil:
		ls.observed = fmt.Sprintf("initialize got a legacy InitializeResult for %s, then %s in that session failed: %v", ir.ProtocolVersion, method, err)
	case err != nil:
		ls.ev = check.FromResponse(resp)
		ls.observed = fmt.Sprintf("initialize got a legacy InitializeResult for %s, then %s in that session got no result: %v", ir.ProtocolVersion, method, err)
	case resp.Error != nil:
		ls.ev = check.FromResponse(resp)
		ls.observed = fmt.Sprintf("initialize got a legacy InitializeResult for %s, then %s in that session got error %d", ir.ProtocolVersion, method, resp.Error.Code)
	default:
		ls.dualEra, ls.served = true, method
		ls.observed = fmt.Sprintf("a legacy initialize on a connection of its own got an InitializeResult for %s, and %s was served in that session", ir.ProtocolVersion, method)
	}
	return ls
}
