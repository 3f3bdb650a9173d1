package transport

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestDuplicateKey(t *testing.T) {
	cases := map[string]string{
		`{"a":1,"b":2}`:                 "",
		`{"a":1,"a":2}`:                 "a",
		`{"id":"x","result":{},"id":1}`: "id",
		`{"a":{"b":1},"c":{"b":2}}`:     "",
		`{"a":[{"k":1,"k":2}]}`:         "k",
		`{"a":"\"a\":1,\"a\":2"}`:       "",
		`{"\u0061":1,"a":2}`:            "a",
		`[{"x":1},{"x":1}]`:             "",
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k3":3}`: "k3",
	}
	for in, want := range cases {
		key, dup := duplicateKey([]byte(in))
		if dup != (want != "") || key != want {
			t.Errorf("duplicateKey(%s) = %q, %v; want %q", in, key, dup, want)
		}
	}
}

func TestEnvelopeID(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":7,"result":` + strings.Repeat("[", 20000)
	cases := map[string]string{
		`{"jsonrpc":"2.0","id":5,"result":{"d":"caf` + "\xe9" + `"}}`: "5",
		deep:                                "7",
		`{"id":"a","result":"cut sh`:        `"a"`,
		`{"result":{"x":[1,2]},"id":3}`:     "3",
		`{"level":"info","id":3,"msg":"x"}`: "", // a log line, not a response
		`Server started`:                    "",
		`{"jsonrpc":"2.0","method":"x"}`:    "",
	}
	for in, want := range cases {
		id, ok := envelopeID([]byte(in))
		if ok != (want != "") || string(id) != want {
			t.Errorf("envelopeID(%.60s) = %s, %v; want %s", in, id, ok, want)
		}
	}
}

// shServer runs a server written in sh, as the harness's own user.
func shServer(t *testing.T, script string, mod func(*StdioConfig)) *StdioTransport {
	t.Helper()
	cfg := StdioConfig{Argv: []string{"sh", "-c", script}, ShutdownGrace: 200 * time.Millisecond, TermGrace: 200 * time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	tr, err := StartStdio(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

// An answer that cannot be decoded but names its request fails that
// request at once: a hostile server must not make every request wait for
// its deadline.
func TestBrokenAnswerFailsItsRequestAtOnce(t *testing.T) {
	for name, answer := range map[string]string{
		"invalid UTF-8":  `{"jsonrpc":"2.0","id":1,"result":{"d":"caf\351"}}`,
		"duplicate keys": `{"jsonrpc":"2.0","id":1,"result":{},"result":{}}`,
		"no result":      `{"jsonrpc":"2.0","id":1}`,
	} {
		t.Run(name, func(t *testing.T) {
			tr := shServer(t, `read l; printf '%s\n' '`+answer+`'; sleep 30`, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			start := time.Now()
			_, err := tr.RoundTrip(ctx, req(1, "tools/list"))
			if KindOf(err) != KindMalformed || time.Since(start) > 5*time.Second {
				t.Fatalf("after %s: %v; want a malformed-message error at once", time.Since(start), err)
			}
		})
	}
}

// A line over the size limit, then a line with the same id: this used to
// block the reader on the request's channel with the lock held, hanging
// the harness for good (found by FuzzStdioLines).
func TestTooLongLineThenItsIDDoesNotHang(t *testing.T) {
	script := `read l; printf '{"jsonrpc":"2.0","id":1,"result":"'; head -c 5000 /dev/zero | tr '\0' a; printf '"}\n{"jsonrpc":"2.0","id":1,"result":{}}\n'; read l; printf '{"jsonrpc":"2.0","id":2,"result":{}}\n'; sleep 30`
	tr := shServer(t, script, func(c *StdioConfig) { c.MaxMessageBytes = 1024 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := tr.RoundTrip(ctx, req(1, "tools/list")); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("first request: %v, want too large", err)
	}
	ex, err := tr.RoundTrip(ctx, req(2, "tools/list"))
	if err != nil || string(ex.Response.ID) != "2" {
		t.Fatalf("the transport is stuck after a too-long line: %v", err)
	}
	done := make(chan struct{})
	go func() { tr.Anomalies(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the transport's lock is held for good")
	}
}

// A request that times out says what the server sent instead.
func TestTimeoutSaysWhatCameInstead(t *testing.T) {
	tr := shServer(t, `read l; echo 'Listening...'; echo '{"jsonrpc":"2.0","id":"stray","result":{}}'; sleep 30`, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := tr.RoundTrip(ctx, req(1, "tools/list"))
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if KindOf(err) != KindTimeout || !strings.Contains(msg, "meanwhile") || !strings.Contains(msg, "Listening...") || !strings.Contains(msg, "ids never sent") {
		t.Fatalf("got %v", err)
	}
	// An error with no id is said to be one, not an answer to an id
	// never sent.
	tr = shServer(t, `read l; echo '{"jsonrpc":"2.0","error":{"code":-32602,"message":"no"}}'; sleep 30`, nil)
	ctx, cancel = context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err = tr.RoundTrip(ctx, req(1, "tools/list"))
	if KindOf(err) != KindTimeout || !strings.Contains(fmt.Sprint(err), "1 response(s) without an id") || strings.Contains(fmt.Sprint(err), "ids never sent") {
		t.Fatalf("an error without an id: got %v", err)
	}
}
