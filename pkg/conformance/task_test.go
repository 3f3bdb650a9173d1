package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

// The reference server does not carry the tasks extension, so TASK checks
// are proven on a fixture: the reference server behind a handler that
// advertises the extension, answers tools/call with a task when the request
// declares it, and serves tasks/get, tasks/update and tasks/cancel. broken
// names the rule it breaks ("" for none).
func taskFixture(t *testing.T, broken string) Target {
	t.Helper()
	ref := refserver.New(refserver.Options{})
	inner := ref.Handler()
	var mu sync.Mutex
	tasks := map[string]bool{}
	n := 0
	reply := func(w http.ResponseWriter, id json.RawMessage, result any, rpcErr any) {
		msg := map[string]any{"jsonrpc": "2.0", "id": id}
		if rpcErr != nil {
			msg["error"] = rpcErr
		} else {
			msg["result"] = result
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(msg)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				TaskID string `json:"taskId"`
				Meta   struct {
					Caps struct {
						Extensions map[string]json.RawMessage `json:"extensions"`
					} `json:"io.modelcontextprotocol/clientCapabilities"`
				} `json:"_meta"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &req)
		_, declared := req.Params.Meta.Caps.Extensions[taskExtension]
		switch req.Method {
		case "server/discover":
			rec := httptest.NewRecorder()
			inner.ServeHTTP(rec, r)
			var resp map[string]any
			_ = json.Unmarshal(rec.Body.Bytes(), &resp)
			if res, ok := resp["result"].(map[string]any); ok {
				caps := res["capabilities"].(map[string]any)
				ext, _ := caps["extensions"].(map[string]any)
				if ext == nil {
					ext = map[string]any{}
				}
				ext[taskExtension] = map[string]any{}
				caps["extensions"] = ext
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rec.Code)
			_ = json.NewEncoder(w).Encode(resp)
			return
		case "tools/call":
			if declared || broken == "TASK-1" {
				mu.Lock()
				n++
				id := fmt.Sprintf("task-%d", n)
				if broken != "TASK-2" {
					tasks[id] = true // durable before it is returned
				}
				mu.Unlock()
				reply(w, req.ID, map[string]any{"resultType": "task", "taskId": id, "status": "working", "createdAt": "2026-07-28T00:00:00Z", "lastUpdatedAt": "2026-07-28T00:00:00Z", "ttlSeconds": 60}, nil)
				return
			}
		case "tasks/get":
			mu.Lock()
			ok := tasks[req.Params.TaskID]
			mu.Unlock()
			if !ok {
				reply(w, req.ID, nil, map[string]any{"code": -32602, "message": "Unknown task"})
				return
			}
			reply(w, req.ID, map[string]any{"resultType": "complete", "taskId": req.Params.TaskID, "status": "completed", "createdAt": "2026-07-28T00:00:00Z", "lastUpdatedAt": "2026-07-28T00:00:00Z", "ttlSeconds": 60, "result": map[string]any{"content": []any{}}}, nil)
			return
		case "tasks/update", "tasks/cancel":
			reply(w, req.ID, map[string]any{"resultType": "complete"}, nil)
			return
		case "resources/list":
			if broken == "TASK-1" && declared {
				reply(w, req.ID, map[string]any{"resultType": "task", "taskId": "task-list", "status": "working", "createdAt": "2026-07-28T00:00:00Z", "lastUpdatedAt": "2026-07-28T00:00:00Z", "ttlSeconds": 60}, nil)
				return
			}
		}
		inner.ServeHTTP(w, r)
	})
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); ref.Close() })
	return Target{URL: hs.URL + "/mcp"}
}

// assertFixture runs a check on a correct fixture (pass or warn) and on the
// one that breaks its rule (want, fail for MUST checks).
func assertFixture(t *testing.T, c *check.Check, fixture func(t *testing.T, broken string) Target, want check.Verdict) {
	t.Helper()
	_, good := runChecks(t, fixture(t, ""), 2, c.ID)
	if v := good[c.ID].Verdict; v != check.Passed && v != check.Warned {
		t.Fatalf("%s on the correct fixture: %s: %s %v", c.ID, v, good[c.ID].Outcome.Message, good[c.ID].Outcome.Details)
	}
	_, bad := runChecks(t, fixture(t, c.ID), 2, c.ID)
	if v := bad[c.ID].Verdict; v != want || bad[c.ID].Outcome.Message == "" {
		t.Fatalf("%s on the fixture that breaks it: %s (%s), want %s", c.ID, v, bad[c.ID].Outcome.Message, want)
	}
}

func TestTASKFixture(t *testing.T) {
	for _, c := range taskFamily.checks {
		t.Run(c.ID, func(t *testing.T) { assertFixture(t, c, taskFixture, check.Failed) })
	}
}

// Without the extension the TASK checks do not apply.
func TestTASKSkipsWithoutTheExtension(t *testing.T) {
	_, res := runChecks(t, refTarget(t, "http"), 1, "TASK")
	for _, c := range taskFamily.checks {
		if v := res[c.ID].Verdict; v != check.Skipped {
			t.Errorf("%s on a server without the tasks extension: %s, want skip", c.ID, v)
		}
	}
}
