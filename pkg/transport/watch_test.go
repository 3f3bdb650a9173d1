package transport

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// seenLog collects what a watcher is told.
type seenLog struct {
	mu   sync.Mutex
	seen []Seen
}

func (l *seenLog) add(s Seen) { l.mu.Lock(); l.seen = append(l.seen, s); l.mu.Unlock() }

func (l *seenLog) all() []Seen {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Seen(nil), l.seen...)
}

// On stdio a response under an id nobody sent is told to the watchers when
// it arrives; the one request in flight then fails with a wrong id after a
// short grace instead of waiting out its deadline.
func TestStdioStrayIsSeenAndPinnedOnTheSoleRequest(t *testing.T) {
	tr := shServer(t, `read l; echo '{"jsonrpc":"2.0","id":99,"result":{}}'; sleep 30`, nil)
	var log seenLog
	tr.Watch(log.add)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	ex, err := tr.RoundTrip(ctx, req(1, "tools/list"))
	if KindOf(err) != KindBadID || ex == nil || ex.Response == nil || string(ex.Response.ID) != "99" {
		t.Fatalf("got %v, %+v; want a wrong-id error carrying the response under id 99", err, ex)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("took %s: the request waited for its deadline", took)
	}
	seen := log.all()
	if len(seen) != 2 || !seen[0].Stray() || seen[1].Stray() || KindOf(seen[1].Err) != KindBadID {
		t.Fatalf("watcher saw %+v, want the stray, then the failed round trip", seen)
	}
	pinned := false
	for _, a := range seen[1].Exchange.Anomalies {
		pinned = pinned || a.Kind == StrayPinned
	}
	if !pinned {
		t.Fatalf("the failed round trip does not say it was pinned on a stray: %+v", seen[1].Exchange.Anomalies)
	}
}

// A stray followed by the request's own answer within the grace is a
// finding for the watchers, and the request still gets its answer.
func TestStdioStrayThenTheRightAnswer(t *testing.T) {
	tr := shServer(t, `read l; echo '{"jsonrpc":"2.0","id":"never-sent","result":{}}'; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; sleep 30`, nil)
	var log seenLog
	tr.Watch(log.add)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ex, err := tr.RoundTrip(ctx, req(1, "tools/list"))
	if err != nil || string(ex.Response.ID) != "1" {
		t.Fatalf("got %v", err)
	}
	time.Sleep(strayGrace + 200*time.Millisecond) // the grace must not fail anything after the fact
	seen := log.all()
	if len(seen) != 2 || !seen[0].Stray() || seen[1].Err != nil {
		t.Fatalf("watcher saw %+v, want the stray, then the answered round trip", seen)
	}
}

// A line the raw layer wrote is answered under its own id: no stray.
func TestStdioRawLineAnswerIsNoStray(t *testing.T) {
	tr := shServer(t, `read l; echo '{"jsonrpc":"2.0","id":"raw-1","result":{}}'; sleep 30`, nil)
	var log seenLog
	tr.Watch(log.add)
	tap, stop := tr.Tap(4)
	defer stop()
	if err := tr.WriteLine(context.Background(), []byte(`{"jsonrpc":"2.0","id":"raw-1","method":"tools/list"}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-tap:
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
	if seen := log.all(); len(seen) != 0 {
		t.Fatalf("watcher saw %+v for the raw layer's own exchange", seen)
	}
}

// Over HTTP every round trip is told to the watchers, a wrong id included.
func TestHTTPRoundTripsAreWatched(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":5,"result":{}}`))
	}))
	t.Cleanup(hs.Close)
	tr, err := NewHTTP(HTTPConfig{URL: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	var log seenLog
	tr.Watch(log.add)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := tr.RoundTrip(ctx, req(5, "tools/list")); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.RoundTrip(ctx, req(6, "tools/list")); KindOf(err) != KindBadID {
		t.Fatalf("id 6 answered as 5: %v", err)
	}
	seen := log.all()
	if len(seen) != 2 || seen[0].Err != nil || KindOf(seen[1].Err) != KindBadID || seen[1].Exchange.Response == nil || seen[1].Transport != "http" {
		t.Fatalf("watcher saw %+v", seen)
	}
}

// A line that breaks the framing rules is told to the watchers as it
// comes, whatever request is in flight: not JSON, not a message, a request
// from the server. The answer around them still reaches its request.
func TestStdioBadLinesAreTold(t *testing.T) {
	tr := shServer(t, `read l; echo 'plain log line'; echo '{"jsonrpc":"2.0"}'; echo '{"jsonrpc":"2.0","id":"s1","method":"ping"}'; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; sleep 30`, nil)
	var log seenLog
	tr.Watch(log.add)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := tr.RoundTrip(ctx, req(1, "tools/list")); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, s := range log.all() {
		if s.Line != nil {
			if s.Stray() || s.Out != nil || s.Exchange != nil {
				t.Fatalf("a line is neither a stray nor an exchange: %+v", s)
			}
			kinds = append(kinds, s.Line.Kind)
		}
	}
	if strings.Join(kinds, ",") != "non-json-line,invalid-message,server-request" {
		t.Fatalf("lines told: %v", kinds)
	}
}
