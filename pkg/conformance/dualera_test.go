package conformance

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/internal/interop"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/poison"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// dualRefTarget starts the reference server in dual-era mode (it also
// answers a legacy initialize and serves legacy requests), with the given
// rules broken.
func dualRefTarget(t testing.TB, kind string, breaks ...string) Target {
	t.Helper()
	if kind == "http" {
		br := map[string]bool{}
		for _, b := range breaks {
			br[b] = true
		}
		srv := refserver.New(refserver.Options{DualEra: true, Break: br})
		hs := httptest.NewServer(srv.Handler())
		t.Cleanup(func() { hs.Close(); srv.Close() })
		return Target{URL: hs.URL + "/mcp"}
	}
	argv := []string{exampleServer, "--dual-era"}
	if len(breaks) > 0 {
		argv = append(argv, "--break", strings.Join(breaks, ","))
	}
	return Target{Argv: argv}
}

// detailsOf is a result's headline and details, for matching.
func detailsOf(r check.Result) string {
	return r.Outcome.Message + "\n" + strings.Join(r.Outcome.Details, "\n")
}

// The run decides "dual-era" from what it saw and records it: the
// modern-only reference server is not, its dual-era mode is.
func TestDualEraObserved(t *testing.T) {
	for _, kind := range []string{"http", "stdio"} {
		t.Run(kind, func(t *testing.T) {
			rep, _ := runChecks(t, refTarget(t, kind), 1, "REM-2")
			if ls := rep.LegacySide; ls == nil || ls.DualEra || ls.Observed == "" {
				t.Fatalf("modern-only server: legacySide %+v, want dualEra false with what was observed", ls)
			}
			rep, _ = runChecks(t, dualRefTarget(t, kind), 1, "REM-2")
			ls := rep.LegacySide
			if ls == nil || !ls.DualEra || ls.LegacyVersion != "2025-11-25" {
				t.Fatalf("dual-era server: legacySide %+v, want dualEra with 2025-11-25", ls)
			}
			if !strings.Contains(ls.Observed, "tools/list was served") {
				t.Errorf("observed %q does not say the legacy session served a request", ls.Observed)
			}
		})
	}
}

// REM-2: the SHOULD to name the supported versions is for modern-only
// servers. A dual-era server passes without a warning; a modern-only one
// still has to reject initialize.
func TestREM2DualEra(t *testing.T) {
	for _, kind := range []string{"http", "stdio"} {
		t.Run(kind, func(t *testing.T) {
			_, res := runChecks(t, dualRefTarget(t, kind), 2, "REM-2")
			if r := res["REM-2"]; r.Verdict != check.Passed || !strings.Contains(detailsOf(r), "dual-era") {
				t.Fatalf("REM-2 on the dual-era server: %s: %s", r.Verdict, detailsOf(r))
			}
		})
	}
}

// REM-4 probes the modern side with the modern header: a dual-era server
// may serve the legacy GET stream without it (pass), not with it (warn);
// a modern-only server is also asked without it.
func TestREM4DualEra(t *testing.T) {
	_, res := runChecks(t, dualRefTarget(t, "http"), 1, "REM-4")
	if r := res["REM-4"]; r.Verdict != check.Passed {
		t.Fatalf("REM-4 on the dual-era server: %s: %s", r.Verdict, detailsOf(r))
	}
	_, res = runChecks(t, dualRefTarget(t, "http", "REM-4"), 1, "REM-4")
	r := res["REM-4"]
	if r.Verdict != check.Warned || !strings.Contains(r.Outcome.Message, "GET with MCP-Protocol-Version: 2026-07-28") || !strings.Contains(r.Outcome.Message, "HTTP 200") {
		t.Fatalf("REM-4 on the dual-era server that serves the legacy stream to a modern GET: %s: %s", r.Verdict, detailsOf(r))
	}
	if strings.Contains(detailsOf(r), "without MCP-Protocol-Version") {
		t.Errorf("REM-4 judged the headerless GET of a dual-era server: %s", detailsOf(r))
	}
	_, res = runChecks(t, refTarget(t, "http"), 1, "REM-4")
	if r := res["REM-4"]; r.Verdict != check.Passed {
		t.Fatalf("REM-4 on the modern-only server: %s: %s", r.Verdict, detailsOf(r))
	}
}

// META-1 on stdio: a dual-era server that serves a request without _meta
// as legacy gets a warning with the reason; the partial-_meta variants stay
// MUST, and a modern-only server still fails for the same answer.
func TestMETA1DualEra(t *testing.T) {
	_, res := runChecks(t, dualRefTarget(t, "stdio"), 2, "META-1")
	r := res["META-1"]
	if r.Verdict != check.Warned || !strings.Contains(r.Outcome.Message, "without params._meta") || !strings.Contains(r.Outcome.Message, "Spec ambiguities") {
		t.Fatalf("META-1 on the dual-era server: %s: %s", r.Verdict, detailsOf(r))
	}
	if strings.Contains(detailsOf(r), "without _meta io.modelcontextprotocol/protocolVersion got") {
		t.Errorf("the dual-era server took a partial _meta for legacy: %s", detailsOf(r))
	}
	// Partial _meta is a malformed modern request, dual-era or not.
	_, res = runChecks(t, dualRefTarget(t, "stdio", "META-1"), 2, "META-1")
	if r := res["META-1"]; r.Verdict != check.Failed || !strings.Contains(r.Outcome.Message, "clientCapabilities") {
		t.Fatalf("META-1 on the dual-era server that accepts a request without clientCapabilities: %s: %s", r.Verdict, detailsOf(r))
	}
	// Over HTTP the modern header makes the request modern: still MUST.
	_, res = runChecks(t, dualRefTarget(t, "http"), 2, "META-1")
	if r := res["META-1"]; r.Verdict != check.Passed {
		t.Fatalf("META-1 on the dual-era server over HTTP: %s: %s", r.Verdict, detailsOf(r))
	}
}

// The real dual-era servers (TS SDK v2, go-sdk stateless, mcp-go) are
// recognised as dual-era and judged so: REM-2 passes without the
// modern-only SHOULD, REM-4 probes with the modern header (mcp-go serves a
// legacy GET stream without it), and META-1's no-_meta variant on stdio is
// a warning while the partial variants they serve as legacy still fail.
func TestDualEraRealServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts six real servers")
	}
	if raceEnabled {
		t.Skip("run without -race: go test -run TestDualEraRealServers ./pkg/conformance")
	}
	for _, name := range []string{"ts-v2-http", "go-sdk-http-stateless", "mcp-go-http", "ts-v2-stdio", "go-sdk-stdio", "mcp-go-stdio"} {
		tg, ok := interop.Lookup(name)
		if !ok {
			t.Fatalf("no interop target %s", name)
		}
		t.Run(name, func(t *testing.T) {
			tg.Require(t)
			var target Target
			if tg.Transport == interop.HTTP {
				target = Target{URL: tg.StartHTTP(t)}
			} else {
				argv, dir, err := tg.Command()
				if err != nil {
					t.Fatal(err)
				}
				env, _ := transport.ServerEnv(nil, nil, os.LookupEnv)
				target = Target{Argv: argv, Dir: dir, Env: env}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			rep, _, err := Run(ctx, target, Options{Options: check.Options{Runs: 1, Only: []string{"REM-2", "REM-4", "META-1"}}, RequestTimeout: 10 * time.Second, ProbeTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			validateReport(t, rep)
			if ls := rep.LegacySide; ls == nil || !ls.DualEra {
				t.Fatalf("legacySide %+v, want dual-era", ls)
			}
			res := map[string]check.Result{}
			for _, r := range rep.Checks {
				res[r.ID] = r
			}
			if r := res["REM-2"]; r.Verdict != check.Passed {
				t.Errorf("REM-2: %s: %s", r.Verdict, detailsOf(r))
			}
			meta := res["META-1"]
			if tg.Transport == interop.HTTP {
				if r := res["REM-4"]; r.Verdict != check.Passed {
					t.Errorf("REM-4: %s: %s", r.Verdict, detailsOf(r))
				}
				if meta.Verdict != check.Passed {
					t.Errorf("META-1: %s: %s", meta.Verdict, detailsOf(meta))
				}
				return
			}
			d := detailsOf(meta)
			if meta.Verdict != check.Failed || !strings.Contains(d, "without params._meta got error -32601 (Method not found), want error -32602 (Invalid params); the server is dual-era") {
				t.Errorf("META-1: %s: %s", meta.Verdict, d)
			}
			if !strings.Contains(d, "without _meta io.modelcontextprotocol/protocolVersion got") {
				t.Errorf("META-1 no longer fails the partial variant these SDKs serve as legacy (docs/real-servers.md): %s", d)
			}
		})
	}
}

// On stdio the legacy side is observed as soon as the run's own process is
// up, in both modes of the reference server: its process is spawned after
// the run's own has answered its probe (that start stays alone: two cold
// `npx -y` starts at once share a cache) and before any other, here
// STATE-1's, whose process META-1 takes over and which asked for the legacy
// side only then. Each process notes when it was spawned; the run's own
// (the first) gets every line 50 ms late, so gathering the facts takes a
// few hundred ms; the process whose first message is a legacy initialize
// (no _meta) is the legacy side's.
func TestLegacySideObservedOnceTheRunsOwnProcessIsUp(t *testing.T) {
	for name, mode := range map[string][]string{"modern-only": nil, "dual-era": {"--dual-era"}} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			const lag = 50 * time.Millisecond
			script := `d=$1; shift; date +%s%N > "$d/$$.t"
if mkdir "$d/own" 2>/dev/null; then
  tee "$d/$$.in" | while IFS= read -r l; do sleep 0.05; printf '%s\n' "$l"; done | "$0" "$@"
else
  tee "$d/$$.in" | "$0" "$@"
fi`
			target := Target{Argv: append([]string{"sh", "-c", script, exampleServer, dir}, mode...)}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			rep, _, err := Run(ctx, target, Options{Options: check.Options{Runs: 1, Only: []string{"STATE-1", "META-1"}}, ProbeTimeout: 5 * time.Second, RequestTimeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Checks {
				// A warning is META-1's verdict on the dual-era mode
				// (TestMETA1DualEra).
				if r.Verdict != check.Passed && r.Verdict != check.Warned {
					t.Errorf("%s = %s (%s), want pass", r.ID, r.Verdict, r.Outcome.Message)
				}
			}
			type proc struct {
				pid   string
				at    time.Time
				first []byte
			}
			var procs []proc
			ins, _ := filepath.Glob(filepath.Join(dir, "*.in"))
			for _, f := range ins {
				pid := strings.TrimSuffix(filepath.Base(f), ".in")
				b, err := os.ReadFile(filepath.Join(dir, pid+".t"))
				if err != nil {
					t.Fatal(err)
				}
				ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
				if err != nil {
					t.Fatalf("spawn time of %s: %v", pid, err)
				}
				in, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				first, _, _ := bytes.Cut(in, []byte("\n"))
				procs = append(procs, proc{pid, time.Unix(0, ns), first})
			}
			slices.SortFunc(procs, func(a, b proc) int { return a.at.Compare(b.at) })
			isLegacy := func(p proc) bool {
				return bytes.Contains(p.first, []byte(`"method":"initialize"`)) && !bytes.Contains(p.first, []byte(`"_meta"`))
			}
			if len(procs) < 3 || !bytes.Contains(procs[0].first, []byte(`"method":"server/discover"`)) || !isLegacy(procs[1]) {
				var order []string
				for _, p := range procs {
					order = append(order, string(p.first[:min(len(p.first), 60)]))
				}
				t.Fatalf("processes by spawn time, first lines: %q; want the run's own (server/discover), then the legacy side (a legacy initialize), then STATE-1's", order)
			}
			for _, p := range procs[2:] {
				if isLegacy(p) {
					t.Errorf("a second legacy initialize (process %s): the legacy side is observed once", p.pid)
				}
			}
			if gap := procs[1].at.Sub(procs[0].at); gap < lag {
				t.Errorf("the legacy side's process was spawned %s after the run's own, before that one could answer its probe (%s late)", gap, lag)
			}
		})
	}
}

// Work Run begins beside the checks (beside) cannot take the run down: a
// panic leaves the entry nil, and the check that asks makes the work again
// in its own run. Here the legacy side is observed again, and a work that
// does not panic is there for the check when stop returns.
func TestBesideSurvivesAPanicAndTheCheckAsksAgain(t *testing.T) {
	memo := &check.Memo{}
	beside(context.Background(), memo, legacySideKey{}, func(context.Context) any { panic("a bug in the observation") })()
	opened := 0
	env := check.Env{Memo: memo, FreshLegacy: func(context.Context) (*mcpclient.Client, func(), error) {
		opened++
		return nil, nil, errors.New("no server here")
	}}
	_, err := legacySideOf(check.NewPass(context.Background(), META1, env))
	if opened != 1 || err == nil || !strings.Contains(err.Error(), "no server here") {
		t.Fatalf("after a panic beside the checks: %d opens, error %v; want the observation made again", opened, err)
	}
	beside(context.Background(), memo, poisonFirstKey{}, func(context.Context) any { return poison.ScanListing(nil) })()
	if poisonFirst(memo, &check.Facts{}) == nil {
		t.Fatal("the scan begun beside the checks is not in the Memo once stop returned")
	}
}
