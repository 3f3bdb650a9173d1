package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// LegacyReport is what a 2025-11-25 (or older) server must change to serve
// 2026-07-28: a migration list instead of a wall of unrelated failures.
type LegacyReport = report.LegacyReport

// LegacyBlocker is one thing in the way, with what replaces it.
type LegacyBlocker = report.LegacyBlocker

// legacyReport lists what blocks 2026-07-28 on a legacy server, from what
// the probe saw and a few legacy requests (spec-checklist.md §2, changelog).
func legacyReport(ctx context.Context, c *mcpclient.Client, target Target, cfg mcpclient.Config) *LegacyReport {
	info := c.Info()
	rep := &LegacyReport{Speaks: info.ProtocolVersion, Blockers: []LegacyBlocker{}}
	add := func(id, found, instead, ev string) {
		rep.Blockers = append(rep.Blockers, LegacyBlocker{ID: id, Found: found, Instead: instead, Evidence: jsonrpc.Clip(ev, 300)})
	}
	probe := "no answer"
	if len(info.Probe) > 0 {
		probe = info.Probe[0].Outcome
	}
	if strings.HasPrefix(probe, mcpclient.DiscoverWithoutLatest) {
		// The server has server/discover; what it lacks is the version.
		add("no-2026-07-28", "server/discover is served, but "+strings.TrimPrefix(probe, mcpclient.DiscoverWithoutLatest),
			"serve 2026-07-28 and list it in supportedVersions", "")
	} else {
		add("no-discover", "server/discover is not served ("+probe+")", "implement server/discover returning supportedVersions, capabilities, serverInfo in _meta, ttlMs and cacheScope", "")
	}
	add("initialize", "the server needs the initialize / notifications/initialized handshake", "serve every request statelessly with _meta protocolVersion, clientCapabilities and clientInfo; initialize is removed", "")
	if info.SessionID != "" {
		add("session-id", "the server issues Mcp-Session-Id", "drop sessions; state that spans requests travels in explicit ids (requestState, subscriptions/listen)", "Mcp-Session-Id: (issued)")
	}
	if resp, err := c.Do(ctx, "tools/list", nil); err == nil && resp.Error == nil {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(resp.Result, &m)
		if _, ok := m["resultType"]; !ok {
			add("no-resultType", "results have no resultType (read as \"complete\")", "add resultType \"complete\" (or \"input_required\") to every result", jsonrpc.Clip(string(resp.Result), 200))
		}
		if len(cacheHints(m)) > 0 {
			add("no-cache-hints", "list results have no ttlMs / cacheScope", "add ttlMs (integer >= 0) and cacheScope (public|private) to discover, list and resources/read results", "")
		}
	}
	// A resource that cannot exist: legacy servers answer -32002, 2026-07-28
	// requires -32602 (RSRC-3, ERR-2).
	if resp, err := c.Do(ctx, "resources/read", map[string]any{"uri": "mcp-eval://does-not-exist/0"}); err == nil && resp.Error != nil {
		switch resp.Error.Code {
		case -32002:
			add("code-32002", "a missing resource gets -32002", "return -32602 with data.uri", fmt.Sprintf("error %d: %s", resp.Error.Code, resp.Error.Message))
		}
		preGA(resp.Error.Code, add)
	}
	// An unsupported version in initialize: legacy servers answer -32602;
	// 2026-07-28 has -32022 with data.supported and data.requested.
	if fc, done := freshLegacy(ctx, target, cfg); fc != nil {
		resp, err := fc.Do(ctx, "initialize", map[string]any{"protocolVersion": "1900-01-01", "capabilities": map[string]any{}, "clientInfo": cfg.ClientInfo})
		if err == nil && resp.Error != nil && resp.Error.Code == jsonrpc.CodeInvalidParams {
			add("version-32602", "an unsupported version gets -32602", "return -32022 (HTTP 400) with data.supported and data.requested", fmt.Sprintf("error %d: %s", resp.Error.Code, resp.Error.Message))
		}
		done()
	}
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(info.Capabilities, &caps)
	if _, ok := caps["logging"]; ok {
		add("logging-setLevel", "logging is configured with logging/setLevel (info)", "honour _meta io.modelcontextprotocol/logLevel per request; logging/setLevel is removed", "")
	}
	if res, ok := caps["resources"]; ok && json.Valid(res) {
		var r struct {
			Subscribe bool `json:"subscribe"`
		}
		if json.Unmarshal(res, &r) == nil && r.Subscribe {
			add("resources-subscribe", "resources/subscribe is used for updates", "serve subscriptions/listen with resourceSubscriptions", "")
		}
	}
	return rep
}

// preGA flags the pre-release draft numbers of the new codes (ERR-3, AMB-19).
func preGA(code int64, add func(id, found, instead, ev string)) {
	switch code {
	case -32001, -32003, -32004:
		add("pre-ga-code", fmt.Sprintf("error code %d, a pre-release draft number", code), "use -32020 HeaderMismatch, -32021 MissingRequiredClientCapability, -32022 UnsupportedProtocolVersion", "")
	}
}

// freshLegacy opens a new connection in the legacy era, with no handshake
// yet: some servers fix their era per process on the first message.
func freshLegacy(ctx context.Context, target Target, cfg mcpclient.Config) (*mcpclient.Client, func()) {
	t, err := target.Open(ctx, true)
	if err != nil {
		return nil, nil
	}
	cfg.ForceEra = mcpclient.EraLegacy
	c := mcpclient.New(t, cfg)
	return c, func() { c.Close() }
}
