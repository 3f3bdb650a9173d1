package conformance

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

// refRewritten serves the reference server over real HTTP with its JSON
// answers passed through rewrite, for behaviour the spec allows that the
// reference server does not have: a -32020 with data, a notification
// rejected for its headers or _meta.
func refRewritten(t *testing.T, rewrite func(req map[string]any, status int, resp map[string]any) (int, map[string]any)) Target {
	t.Helper()
	srv := refserver.New(refserver.Options{})
	h := srv.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var req, resp map[string]any
		_ = json.Unmarshal(body, &req)
		out := rec.Body.Bytes()
		status := rec.Code
		if json.Unmarshal(out, &resp) == nil || req != nil {
			if s, m := rewrite(req, status, resp); m != nil {
				status, out = s, must(json.Marshal(m))
				rec.Header().Set("Content-Type", "application/json")
			}
		}
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(status)
		_, _ = w.Write(out)
	}))
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return Target{URL: hs.URL + "/mcp"}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// HDR-6 is info: a -32020 that carries data (the schema's Error allows
// it) passes, and is not counted as a warning.
func TestHDR6PassesDataOnHeaderMismatch(t *testing.T) {
	withData := refRewritten(t, func(_ map[string]any, status int, resp map[string]any) (int, map[string]any) {
		if e, ok := resp["error"].(map[string]any); ok && e["code"] == float64(-32020) {
			e["data"] = map[string]any{"header": "Mcp-Method"}
			return status, resp
		}
		return status, nil
	})
	for name, tg := range map[string]Target{"plain": refTarget(t, "http"), "with data": withData} {
		_, res := runChecks(t, tg, 1, "HDR-6")
		r := res["HDR-6"]
		if r.Verdict != check.Passed {
			t.Errorf("HDR-6 on -32020 %s: %s %q, want pass", name, r.Verdict, r.Outcome.Message)
		}
		if name == "with data" && !strings.Contains(r.Outcome.Message, `"header"`) {
			t.Errorf("HDR-6 does not show the data it passed: %q", r.Outcome.Message)
		}
	}
}

// RPC-3 says what a rejected notification was rejected for: a server that
// rejects every notification for its headers (-32020) or its _meta
// (-32602) was not judging the invalid cancellation, and the warning must
// not say it failed to ignore one.
func TestRPC3SaysWhyANotificationWasRejected(t *testing.T) {
	for _, tc := range []struct {
		name string
		code int
		msg  string
		want string
	}{
		{"headers", -32020, "Header mismatch: missing required Mcp-Name header", "rejected the request's headers"},
		{"_meta", -32602, "Invalid params: _meta io.modelcontextprotocol/clientInfo is required", "rejected the notification's _meta"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := refRewritten(t, func(req map[string]any, _ int, _ map[string]any) (int, map[string]any) {
				if _, isRequest := req["id"]; req["method"] == nil || isRequest {
					return 0, nil
				}
				return http.StatusBadRequest, map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": tc.code, "message": tc.msg}}
			})
			_, res := runChecks(t, tg, 1, "RPC-3")
			r := res["RPC-3"]
			all := strings.Join(append([]string{r.Outcome.Message}, r.Outcome.Details...), "\n")
			if r.Verdict != check.Warned || !strings.Contains(all, tc.want) || strings.Contains(all, "SHOULD be ignored") {
				t.Fatalf("RPC-3 on a server rejecting notifications for %s: %s\n%s", tc.name, r.Verdict, all)
			}
		})
	}
}
