package conformance

import (
	"context"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/internal/interop"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// knownDeviations are the MUST checks each third-party server fails, each
// one read against the spec and written down with its evidence in
// docs/real-servers.md. A change in either direction fails the test: an
// SDK fixed upstream, or a check of ours that moved.
var knownDeviations = map[string][]string{
	"ts-v2-stdio":           {"META-1", "STATE-1", "VER-1", "VER-2", "VER-3"},
	"ts-v2-http":            {},
	"go-sdk-stdio":          {"META-1", "RPC-5", "STATE-1", "SUB-7", "VER-1", "VER-2", "VER-3"},
	"go-sdk-http-stateless": {"HDR-4", "HTTP-2", "RPC-5", "VER-1", "VER-2"},
	"mcp-go-stdio":          {"CALL-3", "META-1", "STATE-1", "SUB-7", "VER-1", "VER-2", "VER-3"},
	"mcp-go-http":           {"CALL-3", "HTTP-2", "RPC-5", "VER-1", "VER-2"},
}

func TestRealServerDeviations(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole suite against six real servers")
	}
	if raceEnabled {
		// Six real servers (Node ones start in ~200 ms each, many times)
		// under the race detector next to other packages' tests turn
		// deadlines into noise; scripts/test.sh runs this test on its own,
		// without -race.
		t.Skip("run without -race: go test -run TestRealServerDeviations ./pkg/conformance")
	}
	for _, name := range slices.Sorted(maps.Keys(knownDeviations)) {
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
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			rep, _, err := Run(ctx, target, Options{Options: check.Options{Runs: 2}, RequestTimeout: 10 * time.Second, ProbeTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			validateReport(t, rep)
			var failing []string
			for _, r := range rep.Checks {
				if r.Level == check.Must && (r.Verdict == check.Failed || r.Verdict == check.Errored) {
					failing = append(failing, r.ID)
				}
			}
			slices.Sort(failing)
			if want := knownDeviations[name]; !slices.Equal(failing, want) {
				var detail []string
				for _, r := range rep.Checks {
					if slices.Contains(failing, r.ID) != slices.Contains(want, r.ID) {
						detail = append(detail, r.ID+": "+string(r.Verdict)+": "+r.Outcome.Message)
					}
				}
				t.Fatalf("failing MUST checks %v, documented %v (docs/real-servers.md):\n%s", failing, want, strings.Join(detail, "\n"))
			}
		})
	}
}
