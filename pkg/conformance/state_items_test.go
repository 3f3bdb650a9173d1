package conformance

import (
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

// META-3, META-4, STATE-2 and CACHE-2 judge every item that asks for input,
// as the MRTR checks do: a fault on a later item fails (or warns) the check
// naming that item, never the correct first one; the same server without
// the fault passes, having judged every item.
func TestStateChecksJudgeEveryItem(t *testing.T) {
	cases := []struct {
		id, items, faulty string
		want              check.Verdict
	}{
		// ask_b asks for elicitation without it being declared.
		{"META-4", "tool:ask_a,tool:ask_b:MRTR-4,prompt:ask_c", `tools/call "ask_b"`, check.Failed},
		{"CACHE-2", "tool:ask_a,prompt:ask_b,prompt:ask_c:CACHE-2", `prompts/get "ask_c"`, check.Warned},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			for _, kind := range []string{"http", "stdio"} {
				_, bad := featRun(t, mrtrItemsTarget(t, kind, c.items), 2, nil, c.id)
				r := bad[c.id]
				if r.Verdict != c.want || !strings.Contains(r.Outcome.Message, c.faulty) {
					t.Errorf("%s over %s, items %s: %s %q, want %s naming %s", c.id, kind, c.items, r.Verdict, r.Outcome.Message, c.want, c.faulty)
				}
				if strings.Contains(detailsOf(r), `"ask_a"`) {
					t.Errorf("%s over %s: the correct item ask_a is blamed: %s", c.id, kind, detailsOf(r))
				}
				for _, ev := range r.Outcome.Evidence {
					if ev.Pointer == "" {
						t.Errorf("%s over %s: unlocated evidence %+v", c.id, kind, ev)
					}
				}
			}
		})
	}
	for _, kind := range []string{"http", "stdio"} {
		_, good := featRun(t, mrtrItemsTarget(t, kind, "tool:ask_a,tool:ask_b,prompt:ask_c"), 2, nil, "META-3", "META-4", "STATE-2", "CACHE-2")
		for _, id := range []string{"META-3", "META-4", "STATE-2", "CACHE-2"} {
			r := good[id]
			if r.Verdict != check.Passed || !strings.HasPrefix(r.Outcome.Message, "3 items judged") {
				t.Errorf("%s over %s on the correct items: %s %q, want a pass with 3 items judged", id, kind, r.Verdict, r.Outcome.Message)
			}
		}
	}
}
