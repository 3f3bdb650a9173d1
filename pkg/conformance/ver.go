package conformance

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// VER: protocol version negotiation (basic/versioning.mdx, checklist §1.2).

var verFamily = family{name: "VER", title: "versioning", checks: []*check.Check{VER1, VER2, VER3, VER4}}

// verUnsupported is a version no server supports. It goes in both the
// header and _meta, so the request is not also a header mismatch (AMB-11).
const verUnsupported = "1900-01-01"

// verSend sends method with version in _meta and MCP-Protocol-Version.
func verSend(p *check.Pass, c *mcpclient.Client, method, version string) (*reply, error) {
	w, err := newWire(c, method, nil)
	if err != nil {
		return nil, err
	}
	w.setVersion(version)
	return sendWire(p.Ctx, c.Transport(), w)
}

// verRejectedKey is the Memo key of one repetition's request of method
// naming verUnsupported on the shared client.
type verRejectedKey struct {
	run    int
	method string
}

type verReply struct {
	r   *reply
	err error
}

// verRejected is verSend(method, verUnsupported) on the shared client, sent
// once per repetition: VER-1, VER-2, VER-4 and HTTP-7 judge the same
// answer, each its own rule (the code and data, every method, the list in
// data.supported, the HTTP status). The reply is shared: read it only.
func verRejected(p *check.Pass, method string) (*reply, error) {
	if p.Env.Memo == nil {
		return verSend(p, p.Env.Client, method, verUnsupported)
	}
	v, ok := p.Env.Memo.Do(verRejectedKey{p.Run, method}, func() any {
		r, err := verSend(p, p.Env.Client, method, verUnsupported)
		return verReply{r, err}
	}).(verReply)
	if !ok {
		return nil, fmt.Errorf("%s with protocol version %q: the shared request failed (a harness bug: see the check that sent it)", method, verUnsupported)
	}
	return v.r, v.err
}

// ver32022 lists what is wrong with the answer to a request that named
// verUnsupported: the code, data.supported, data.requested and (HTTP) 400.
func ver32022(r *reply) []problem {
	e, ok := r.rpcError()
	if !ok || e.Code != jsonrpc.CodeUnsupportedProtocolVersion {
		at := ""
		if ok {
			at = "/error/code"
		}
		return []problem{{at: at, msg: fmt.Sprintf("got %s, want error -32022 (UnsupportedProtocolVersion)", r.describe())}}
	}
	out := errShape32022(e.Data, verUnsupported)
	if r.transport == "http" && r.status != 400 {
		out = append(out, problem{at: atStatus, msg: fmt.Sprintf("-32022 came with HTTP %d, want 400", r.status)})
	}
	return out
}

var VER1 = &check.Check{
	ID: "VER-1", Level: check.Must, Transports: check.Both, Seed: 6,
	Spec: "basic/versioning.mdx §Protocol Version Negotiation; schema.ts UnsupportedProtocolVersionError",
	Doc:  "an unsupported version gets -32022 with data.supported (string[]) and data.requested (the version sent), HTTP 400",
	Fix:  "answer unknown versions with -32022 and data {supported: [...], requested: <the version sent>} (HTTP 400)",
	Run: func(p *check.Pass) error {
		var ok passTally
		methods := metaMethods(p.Env.Facts)
		err := p.Cases("", len(methods), func(i int) error {
			r, err := verRejected(p, methods[i])
			if err != nil {
				return err
			}
			problems := ver32022(r)
			for _, pb := range problems {
				p.Failf(r.evidenceFor(pb), "%s with protocol version %q: %s", methods[i], verUnsupported, pb.msg)
			}
			if len(problems) == 0 {
				ok.add(r.evidence())
			}
			return nil
		})
		if err != nil {
			return err
		}
		ok.report(p, "%d requests naming %q got -32022 with data.supported and data.requested", ok.n, verUnsupported)
		return nil
	},
}

var VER2 = &check.Check{
	ID: "VER-2", Level: check.Must, Transports: check.Both,
	Spec: "basic/versioning.mdx §Protocol Version Negotiation; basic/transports/stdio.mdx §Backward Compatibility",
	Doc:  "the version check applies to every method, server/discover included",
	Fix:  "validate the protocol version before dispatching any method, server/discover too",
	Run: func(p *check.Pass) error {
		methods := []string{"server/discover"}
		for _, l := range pageLists(p.Env.Facts) {
			methods = append(methods, l.method)
		}
		var ok passTally
		err := p.Cases("", len(methods), func(i int) error {
			r, err := verRejected(p, methods[i])
			if err != nil {
				return err
			}
			if r.code() != jsonrpc.CodeUnsupportedProtocolVersion {
				p.Failf(r.evidenceAt(replyAt(r)), "%s with protocol version %q got %s, want error -32022", methods[i], verUnsupported, r.describe())
				return nil
			}
			ok.add(r.evidence())
			return nil
		})
		if err != nil {
			return err
		}
		ok.report(p, "%d methods, server/discover included, reject an unsupported version with -32022", ok.n)
		return nil
	},
}

var VER3 = &check.Check{
	ID: "VER-3", Level: check.Must, Transports: check.Both,
	Spec: "basic/versioning.mdx §Overview; basic/index.mdx §Statelessness",
	Doc:  "each request is accepted or rejected on its own: supported, unsupported, then supported again on one connection",
	Fix:  "keep no version state between requests; judge each request's own protocolVersion",
	// Alone, on the run's own connection (HTTP) or process (stdio), once
	// every other check has returned: a server that keeps version state
	// is then judged on what the whole run left behind, the same in every
	// run, rather than on what a concurrent check's requests left, and on
	// stdio no process is started for it (five a run; a Node server's
	// start is 0.5-0.7 s of CPU). The sequence begins with a supported
	// request, so what came before it on the process sets no baseline.
	Exclusive: check.Both,
	Run: func(p *check.Pass) error {
		c := p.Env.Client
		closeFresh := func() {}
		defer func() { closeFresh() }()
		// A run's process that has exited or stopped answering (a
		// check before this one silenced it, and was reported), or that
		// no longer answers the supported baseline with a result, is no
		// place to judge version state: a new one is, as before VER-3
		// ran on the run's process.
		fresh := func() error {
			fc, closeFn, err := p.Env.Fresh(p.Ctx)
			if err != nil {
				return fmt.Errorf("starting a server process for VER-3, the run's own being unfit: %w", err)
			}
			c, closeFresh = fc, closeFn
			return nil
		}
		onRunProcess := func() bool { return p.Env.Transport == "stdio" && c == p.Env.Client }
		if st, ok := c.Transport().(*transport.StdioTransport); ok && stdioGone(st) {
			if err := fresh(); err != nil {
				return err
			}
		}
		version := c.Info().ProtocolVersion
		methods := metaMethods(p.Env.Facts)
		err := p.Cases("", len(methods), func(k int) error {
			method := methods[k]
			steps := []string{version, verUnsupported, version}
			for i, v := range steps {
				r, err := verSend(p, c, method, v)
				if i == 0 && onRunProcess() && (err != nil || r == nil || r.result() == nil) {
					ferr := fresh()
					switch {
					case ferr == nil:
						r, err = verSend(p, c, method, v)
					case err != nil || r == nil || r.raw == nil:
						return ferr
					}
					// A new process that cannot start (its probe
					// fails too) leaves the run's answer to judge.
				}
				if err != nil {
					return err
				}
				ev := r.evidenceAt(replyAt(r))
				switch {
				case i == 0 && r.result() == nil:
					if e, ok := r.rpcError(); ok && e.Code == jsonrpc.CodeUnsupportedProtocolVersion && p.Env.Facts.Discover != nil && slices.Contains(p.Env.Facts.Discover.SupportedVersions, version) {
						p.Failf(ev, "%s with %s, a version server/discover lists, got -32022: the version was judged by an earlier request", method, version)
						return errCasesOver
					}
					p.Skipf("%s with %s got %s, so there is no baseline", method, version, r.describe())
					return errCasesOver
				case i == 1 && r.result() != nil:
					p.Failf(ev, "%s with protocol version %q got a result right after a request with %s: the version was taken from an earlier request", method, verUnsupported, version)
				case i == 2 && r.result() == nil:
					p.Failf(ev, "%s with %s got %s right after a request with %q: the rejection carried over to the next request", method, version, r.describe(), verUnsupported)
				}
			}
			return nil
		})
		return casesOver(err)
	},
}

var VER4 = &check.Check{
	ID: "VER-4", Level: check.Info, Transports: check.Both,
	Spec: "basic/versioning.mdx §Protocol Version Negotiation (no rule; consistency)",
	Doc:  "-32022 data.supported matches server/discover supportedVersions",
	Fix:  "build data.supported and supportedVersions from the same list",
	Run: func(p *check.Pass) error {
		d := p.Env.Facts.Discover
		if d == nil {
			p.Skipf("no discover result to compare with")
			return nil
		}
		r, err := verRejected(p, "server/discover")
		if err != nil {
			return err
		}
		e, ok := r.rpcError()
		if !ok || e.Code != jsonrpc.CodeUnsupportedProtocolVersion {
			p.Skipf("server/discover with %q got %s (VER-1 reports it)", verUnsupported, r.describe())
			return nil
		}
		var data struct {
			Supported []string `json:"supported"`
		}
		if json.Unmarshal(e.Data, &data) != nil {
			p.Skipf("-32022 data.supported is not a string array (VER-1 reports it)")
			return nil
		}
		a, b := slices.Sorted(slices.Values(data.Supported)), slices.Sorted(slices.Values(d.SupportedVersions))
		if !slices.Equal(slices.Compact(a), slices.Compact(b)) {
			p.Failf(r.evidenceAt("/error/data/supported"), "-32022 data.supported is %q but server/discover lists %q", data.Supported, d.SupportedVersions)
		}
		return nil
	},
}
