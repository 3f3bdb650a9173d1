package conformance

import (
	"encoding/json"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

func TestVERMutants(t *testing.T) {
	for _, c := range verFamily.checks {
		if c.Level != check.Must {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

// VER-4 (info) passes on the reference server, whose data.supported and
// supportedVersions come from one list.
func TestVER4(t *testing.T) {
	for _, kind := range []string{"http", "stdio"} {
		if r := stateRun(t, refTarget(t, kind), 1, nil, "VER-4")["VER-4"]; r.Verdict != check.Passed {
			t.Errorf("%s: %s: %s", kind, r.Verdict, r.Outcome.Message)
		}
	}
}

func TestErrShape32022(t *testing.T) {
	for raw, n := range map[string]int{
		`{"supported":["2026-07-28"],"requested":"1900-01-01"}`: 0,
		`{"supported":["2026-07-28"],"requested":"2026-07-28"}`: 1,
		`{"supported":"2026-07-28","requested":"1900-01-01"}`:   1,
		`{"supported":["2026-07-28"]}`:                          1,
		`{"requested":"1900-01-01"}`:                            1,
		`null`:                                                  1,
	} {
		if got := errShape32022(json.RawMessage(raw), verUnsupported); len(got) != n {
			t.Errorf("errShape32022(%s) = %q, want %d problems", raw, msgs(got), n)
		}
	}
}
