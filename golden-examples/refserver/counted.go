package refserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
)

// Counted wraps h and counts the JSON-RPC requests it serves by method
// ("" for a body that is not one): the tests that prove the harness asks
// each question once count at the server, as the benchmark's proxy does.
// The func returns a copy of the counts so far.
func Counted(h http.Handler) (http.Handler, func() map[string]int) {
	var mu sync.Mutex
	counts := map[string]int{}
	wrapped := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The method is near the start: read a bounded prefix, and hand
		// the server the whole body, so its own size limit still applies.
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
		var m struct{ Method string }
		_ = json.Unmarshal(b, &m)
		mu.Lock()
		counts[m.Method]++
		mu.Unlock()
		h.ServeHTTP(w, r)
	})
	return wrapped, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := make(map[string]int, len(counts))
		for k, v := range counts {
			out[k] = v
		}
		return out
	}
}
