package conformance

import (
	"encoding/json"
	"fmt"
	"math"
)

// cacheHints lists what is wrong with a cacheable result's ttlMs and
// cacheScope (CACHE-1; schema: ttlMs integer >= 0, cacheScope public|private).
func cacheHints(m map[string]json.RawMessage) []string {
	var out []string
	for _, h := range cacheHintFaults(m) {
		out = append(out, h.problem)
	}
	return out
}

// cacheHint is one problem with a caching hint: the result member it is
// about (the pointer of the finding) and what is wrong.
type cacheHint struct{ member, problem string }

func cacheHintFaults(m map[string]json.RawMessage) []cacheHint {
	var out []cacheHint
	raw, ok := m["ttlMs"]
	if !ok {
		out = append(out, cacheHint{"ttlMs", "ttlMs is missing"})
	} else {
		// JSON Schema's integer is mathematical: 5 and 5.0 both qualify.
		var f float64
		if json.Unmarshal(raw, &f) != nil || f < 0 || f != math.Trunc(f) {
			out = append(out, cacheHint{"ttlMs", fmt.Sprintf("ttlMs is %s, want an integer >= 0", shown(raw))})
		}
	}
	var scope string
	if raw, ok := m["cacheScope"]; !ok {
		out = append(out, cacheHint{"cacheScope", "cacheScope is missing"})
	} else if json.Unmarshal(raw, &scope) != nil || (scope != "public" && scope != "private") {
		out = append(out, cacheHint{"cacheScope", fmt.Sprintf("cacheScope is %s, want \"public\" or \"private\"", shown(raw))})
	}
	return out
}
