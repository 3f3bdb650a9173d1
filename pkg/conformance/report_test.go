package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcp-eval/mcp-eval-action/internal/interop"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// validateReport checks a report's JSON against report.schema.json, the
// documented shape of `mcp-eval check --json`.
func validateReport(t testing.TB, rep *Report) {
	t.Helper()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	sch, err := reportSchema()
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("report does not match report.schema.json: %#v", err)
	}
}

// reportSchema compiles report.schema.json once per test binary.
var reportSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(ReportSchema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("report.schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("report.schema.json")
})

// The reference server passes every MUST check over both transports, and
// the report matches its schema.
func TestReferenceServerConforms(t *testing.T) {
	for _, kind := range []string{"http", "stdio"} {
		t.Run(kind, func(t *testing.T) {
			rep, res := runChecks(t, refTarget(t, kind), 3)
			validateReport(t, rep)
			// The checks beyond the checklist run in a full run too, and the
			// reference server gives them nothing to report.
			for _, id := range []string{"POISON-1", "POISON-7", "RESIL-1"} {
				if r, ok := res[id]; (ok || kind == "http") && r.Verdict != check.Passed {
					t.Errorf("%s over %s: %s %s", id, kind, r.Verdict, r.Outcome.Message)
				}
			}
			if rep.Verdict != VerdictPass {
				for _, r := range rep.Checks {
					if r.Level == check.Must && r.Verdict != check.Passed && r.Verdict != check.Skipped && r.Verdict != check.Warned {
						t.Errorf("%s %s: %s %v", r.ID, r.Verdict, r.Outcome.Message, r.Outcome.Details)
					}
				}
				t.Fatalf("verdict %s on the reference server", rep.Verdict)
			}
			if len(rep.Checks) == 0 {
				t.Fatal("no checks ran")
			}
		})
	}
}

// A legacy-only server gets verdict legacy and a migration list, not a wall
// of failures.
func TestLegacyServerGetsMigrationReport(t *testing.T) {
	tg, ok := interop.Lookup("everything-stdio")
	if !ok {
		t.Fatal("no everything-stdio target")
	}
	tg.Require(t)
	argv, dir, err := tg.Command()
	if err != nil {
		t.Fatal(err)
	}
	env, _ := transport.ServerEnv(nil, nil, os.LookupEnv)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, _, err := Run(ctx, Target{Argv: argv, Dir: dir, Env: env}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	validateReport(t, rep)
	if rep.Verdict != VerdictLegacy || rep.Legacy == nil || rep.Legacy.Speaks != "2025-11-25" || len(rep.Checks) != 0 {
		t.Fatalf("verdict %s legacy %+v checks %d", rep.Verdict, rep.Legacy, len(rep.Checks))
	}
	var ids []string
	for _, b := range rep.Legacy.Blockers {
		ids = append(ids, b.ID)
	}
	for _, want := range []string{"no-discover", "initialize", "no-resultType", "no-cache-hints"} {
		if !strings.Contains(strings.Join(ids, ","), want) {
			t.Errorf("blockers %v lack %s", ids, want)
		}
	}
}

// The go-sdk's stateful HTTP handler answers server/discover, listing
// only legacy versions: the blocker says so and asks for the version,
// not for a server/discover it already has.
func TestLegacyBlockerOfADiscoverWithoutTheVersion(t *testing.T) {
	tg, ok := interop.Lookup("go-sdk-http")
	if !ok {
		t.Fatal("no go-sdk-http interop target")
	}
	tg.Require(t)
	url := tg.StartHTTP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, _, err := Run(ctx, Target{URL: url}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != VerdictLegacy || rep.Legacy == nil || len(rep.Legacy.Blockers) == 0 {
		t.Fatalf("verdict %s legacy %+v", rep.Verdict, rep.Legacy)
	}
	b := rep.Legacy.Blockers[0]
	if b.ID != "no-2026-07-28" || !strings.Contains(b.Found, "server/discover is served, but supportedVersions") || !strings.Contains(b.Found, "lacks 2026-07-28") || b.Instead != "serve 2026-07-28 and list it in supportedVersions" {
		t.Fatalf("first blocker %+v, want the version missing from a served server/discover", b)
	}
}

// Listed hands the caller the tools the run listed, once, as Run returns
// them, so that the pipeline can count their tokens beside the checks.
func TestListedOnceWithTheToolsRunReturns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var calls [][]mcpclient.Tool
	opts := Options{Options: check.Options{Runs: 1, Only: []string{"DISC-1", "POISON"}}, ProbeTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second,
		Listed: func(tools []mcpclient.Tool) { calls = append(calls, tools) }}
	rep, tools, err := Run(ctx, refTarget(t, "http"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || len(tools) == 0 || !reflect.DeepEqual(calls[0], tools) {
		t.Fatalf("Listed was called %d times (%v); Run returned %d tools", len(calls), calls, len(tools))
	}
	for _, r := range rep.Checks {
		if r.Verdict != check.Passed {
			t.Errorf("%s: %s %s", r.ID, r.Verdict, r.Outcome.Message)
		}
	}
}
