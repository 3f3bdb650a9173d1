package mcpclient_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

var exampleServer string // path of the built example-server, set by TestMain

func TestMain(m *testing.M) {
	if os.Getenv("MCPCLIENT_HELPER") == "silent-legacy" {
		silentLegacyServer()
		return
	}
	dir, err := os.MkdirTemp("", "mcpclient-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	exampleServer = filepath.Join(dir, "example-server")
	out, err := exec.Command("go", "build", "-o", exampleServer, "github.com/mcp-eval/mcp-eval-action/golden-examples/cmd/example-server").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the example server: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// silentLegacyServer is a stdio server of the kind the spec warns about: it
// ignores anything before initialize, then speaks 2025-11-25.
func silentLegacyServer() {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(sc.Bytes(), &m)
		switch m.Method {
		case "initialize":
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"silent","version":"1"}}}`+"\n", m.ID)
		case "tools/list":
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}`+"\n", m.ID)
		}
	}
}

// bothTransports runs f against the reference server over Streamable HTTP
// (in-process handler, real HTTP) and over stdio (the built binary).
func bothTransports(t *testing.T, cfg mcpclient.Config, f func(t *testing.T, c *mcpclient.Client)) {
	t.Run("http", func(t *testing.T) {
		srv := refserver.New(refserver.Options{})
		hs := httptest.NewServer(srv.Handler())
		t.Cleanup(func() { hs.Close(); srv.Close() })
		tr, err := transport.NewHTTP(transport.HTTPConfig{URL: hs.URL + "/mcp"})
		if err != nil {
			t.Fatal(err)
		}
		c, err := mcpclient.Connect(context.Background(), tr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		f(t, c)
	})
	t.Run("stdio", func(t *testing.T) {
		tr, err := transport.StartStdio(context.Background(), transport.StdioConfig{Argv: []string{exampleServer}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := mcpclient.Connect(context.Background(), tr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		f(t, c)
	})
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestMRTRConfirmationRoundTrip(t *testing.T) {
	bothTransports(t, mcpclient.Config{}, func(t *testing.T, c *mcpclient.Client) {
		args := map[string]any{"to": "ana@example.com", "subject": "Hi", "body": "Hello"}
		res, err := c.CallTool(ctx(t), "send_email", args)
		if err != nil {
			t.Fatal(err)
		}
		if res.InputRequired == nil || res.InputRequired.InputRequests["confirm"] == nil || res.InputRequired.RequestState == nil {
			t.Fatalf("want an input_required result with a confirm request and requestState, got %s", res.Response.Result)
		}
		firstID := res.Response.ID
		done, err := c.Continue(ctx(t), res, map[string]json.RawMessage{"confirm": json.RawMessage(`{"action":"accept","content":{"confirm":true}}`)})
		if err != nil {
			t.Fatal(err)
		}
		if jsonrpc.SameID(firstID, done.Response.ID) {
			t.Fatal("the retry must use a new request id (MRTR-5)")
		}
		var sent map[string]json.RawMessage
		_ = json.Unmarshal(done.Response.Sent, &sent)
		if !strings.Contains(string(sent["params"]), string(res.InputRequired.RequestState)) {
			t.Fatalf("retry does not echo requestState exactly: %s", sent["params"])
		}
		tr, err := done.Tool()
		if err != nil || done.Rounds != 2 || tr.IsError || !strings.Contains(tr.TextContent(), "ana@example.com") {
			t.Fatalf("after confirmation: rounds %d, %+v, %v", done.Rounds, tr, err)
		}
		// Resolve runs the same loop with a handler; a decline completes too.
		res2, _ := c.CallTool(ctx(t), "send_email", args)
		final, err := c.Resolve(ctx(t), res2, func(_ context.Context, reqs map[string]mcpclient.InputRequest) (map[string]json.RawMessage, error) {
			if reqs["confirm"].Method != "elicitation/create" {
				return nil, fmt.Errorf("unexpected input request %+v", reqs)
			}
			return map[string]json.RawMessage{"confirm": json.RawMessage(`{"action":"decline"}`)}, nil
		})
		if err != nil || final.InputRequired != nil {
			t.Fatalf("Resolve: %v %+v", err, final)
		}
	})
}

func TestMRTRWithoutCapabilityGetsMissingCapability(t *testing.T) {
	bothTransports(t, mcpclient.Config{Capabilities: json.RawMessage(`{}`)}, func(t *testing.T, c *mcpclient.Client) {
		_, err := c.CallTool(ctx(t), "send_email", map[string]any{"to": "a@example.com", "subject": "s", "body": "b"})
		var re *mcpclient.RPCError
		if !errors.As(err, &re) || re.Code() != jsonrpc.CodeMissingRequiredClientCapability {
			t.Fatalf("err = %v, want -32021", err)
		}
	})
}

func TestProgressNotificationsReachTheExchange(t *testing.T) {
	bothTransports(t, mcpclient.Config{}, func(t *testing.T, c *mcpclient.Client) {
		res, err := c.CallTool(ctx(t), "slow_count", map[string]any{"n": 3}, mcpclient.WithProgressToken("tok-1"), mcpclient.WithLogLevel("info"))
		if err != nil {
			t.Fatal(err)
		}
		var progress, logs int
		for _, n := range res.Response.Exchange.Notifications {
			switch n.Method {
			case "notifications/progress":
				progress++
				if !strings.Contains(string(n.Params), `"tok-1"`) {
					t.Errorf("progress without our token: %s", n.Params)
				}
			case "notifications/message":
				logs++
			}
		}
		if progress != 3 || logs == 0 {
			t.Fatalf("got %d progress and %d log notifications, want 3 and some", progress, logs)
		}
	})
}

// The hook is told of every notification the exchange keeps, progress
// first, on either transport.
func TestNotificationHookSeesEveryNotification(t *testing.T) {
	bothTransports(t, mcpclient.Config{}, func(t *testing.T, c *mcpclient.Client) {
		var mu sync.Mutex
		var seen []string
		res, err := c.CallTool(ctx(t), "slow_count", map[string]any{"n": 3}, mcpclient.WithProgressToken("tok-h"),
			mcpclient.WithNotificationHook(func(m *jsonrpc.Message) {
				mu.Lock()
				seen = append(seen, m.Method)
				mu.Unlock()
			}))
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(seen) != len(res.Response.Exchange.Notifications) || len(seen) < 3 || seen[0] != "notifications/progress" {
			t.Fatalf("hook saw %v; the exchange holds %d notifications", seen, len(res.Response.Exchange.Notifications))
		}
	})
}

func TestParamHeadersAndHeaderMismatchRetry(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	hs := httptest.NewServer(srv.Handler())
	defer func() { hs.Close(); srv.Close() }()
	tr, _ := transport.NewHTTP(transport.HTTPConfig{URL: hs.URL + "/mcp"})
	c, err := mcpclient.Connect(ctx(t), tr, mcpclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	// The client has not listed tools yet, so it does not know that
	// lookup_region declares x-mcp-header: the server answers -32020 and
	// the client re-lists and retries once (HDR-5).
	res, err := c.CallTool(ctx(t), "lookup_region", map[string]any{"region": "Zürich", "query": "open"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.HeaderRetry {
		t.Fatal("want a retry after -32020")
	}
	if got := res.Response.SentHeader.Get("Mcp-Param-Region"); got != mcpclient.EncodeHeaderValue("Zürich") || !strings.HasPrefix(got, "=?base64?") {
		t.Fatalf("Mcp-Param-Region = %q", got)
	}
	if tr, err := res.Tool(); err != nil || tr.IsError {
		t.Fatalf("lookup_region: %+v %v", tr, err)
	}
	// A resource URI outside the header-safe set goes as base64 in Mcp-Name;
	// the server then judges the URI itself, not the header.
	_, err = c.ReadResource(ctx(t), "example://invoices/Cä")
	var re *mcpclient.RPCError
	if !errors.As(err, &re) || re.Code() != jsonrpc.CodeInvalidParams {
		t.Fatalf("reading a missing resource: %v, want -32602 (not -32020)", err)
	}
}

func connectStdio(t *testing.T, argv []string, env []string, cfg mcpclient.Config) (*mcpclient.Client, error) {
	t.Helper()
	tr, err := transport.StartStdio(context.Background(), transport.StdioConfig{Argv: argv, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	c, err := mcpclient.Connect(ctx(t), tr, cfg)
	t.Cleanup(func() { tr.Close() })
	return c, err
}

func TestStdioProbeSilentLegacyServer(t *testing.T) {
	self, _ := os.Executable()
	env, _ := transport.ServerEnv(nil, []string{"MCPCLIENT_HELPER=silent-legacy"}, os.LookupEnv)
	c, err := connectStdio(t, []string{self}, env, mcpclient.Config{ProbeTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	info := c.Info()
	if info.Era != mcpclient.EraLegacy || info.ProtocolVersion != mcpclient.Legacy1125 || info.ServerInfo.Name != "silent" {
		t.Fatalf("info = %+v", info)
	}
	if _, err := c.ListTools(ctx(t)); err != nil {
		t.Fatalf("legacy tools/list: %v", err)
	}
}

func TestStdioProbeSlowStartingModernServerIsNotLegacy(t *testing.T) {
	// The server needs longer to start than the probe timeout; its late
	// DiscoverResult must still win over the legacy fallback.
	c, err := connectStdio(t, []string{"sh", "-c", "sleep 1; exec " + exampleServer}, nil, mcpclient.Config{ProbeTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	info := c.Info()
	if info.Era != mcpclient.EraModern || info.ServerInfo == nil || !strings.Contains(strings.Join(info.Notes, " "), "only after") {
		t.Fatalf("era %s notes %q probe %+v", info.Era, info.Notes, info.Probe)
	}
	if _, err := c.ListTools(ctx(t)); err != nil {
		t.Fatal(err)
	}
}

func TestStdioServerThatNeverAnswersFailsClearly(t *testing.T) {
	start := time.Now()
	_, err := connectStdio(t, []string{"sleep", "60"}, nil, mcpclient.Config{ProbeTimeout: 100 * time.Millisecond, RequestTimeout: 500 * time.Millisecond})
	if !errors.Is(err, transport.ErrTimeout) || !strings.Contains(err.Error(), "initialize") {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("took %s", time.Since(start))
	}
}

// A new process of a server the run already found modern gets the probe
// as its first message, but silence is no sign of a legacy server there:
// Connect fails on the probe instead of trying initialize, and a merely
// slow start is still waited for.
func TestStdioProbeKnownModernDoesNotFallBackToInitialize(t *testing.T) {
	self, _ := os.Executable()
	env, _ := transport.ServerEnv(nil, []string{"MCPCLIENT_HELPER=silent-legacy"}, os.LookupEnv)
	c, err := connectStdio(t, []string{self}, env, mcpclient.Config{KnownModern: true, ProbeTimeout: 100 * time.Millisecond, RequestTimeout: 700 * time.Millisecond})
	if !errors.Is(err, transport.ErrTimeout) || !strings.Contains(err.Error(), "server/discover") || strings.Contains(err.Error(), "initialize") {
		t.Fatalf("err = %v, want the probe's timeout and no initialize", err)
	}
	if info := c.Info(); info.Initialize != nil || info.Era == mcpclient.EraLegacy {
		t.Fatalf("era %s, initialize answer %v: the client fell back to the legacy handshake", info.Era, info.Initialize)
	}

	c, err = connectStdio(t, []string{"sh", "-c", "sleep 1; exec " + exampleServer}, nil, mcpclient.Config{KnownModern: true, ProbeTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("a slow start of a modern server: %v", err)
	}
	if info := c.Info(); info.Era != mcpclient.EraModern || info.DiscoverResult == nil {
		t.Fatalf("era %s, discover %v", info.Era, info.DiscoverResult)
	}
}

// A new process whose probe is answered, but not as a modern server
// answers it (no resultType), is a failed start where the run's own
// process answered as a modern server (KnownModern alone), and is kept
// modern, with what the answer says, where the run's own process was
// checked as modern after answering that way too (KeepModern).
func TestStdioProbeKeepModernOnlyWhenTheRunFellBack(t *testing.T) {
	argv := []string{exampleServer, "--break", "RES-1"}
	if _, err := connectStdio(t, argv, nil, mcpclient.Config{KnownModern: true, ProbeTimeout: 200 * time.Millisecond}); err == nil {
		t.Fatal("a probe answered without resultType was taken for a modern start where the run's own process answered as a modern server")
	}
	c, err := connectStdio(t, argv, nil, mcpclient.Config{KnownModern: true, KeepModern: true, ProbeTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("KeepModern: %v", err)
	}
	info := c.Info()
	if info.Era != mcpclient.EraModern || info.Initialize != nil || info.DiscoverResult == nil || info.Capabilities == nil {
		t.Fatalf("era %s, initialize %v, discover %+v: want modern with the answer's capabilities and no initialize", info.Era, info.Initialize, info.DiscoverResult)
	}
	if last := info.Probe[len(info.Probe)-1]; !strings.HasPrefix(last.Outcome, "kept as a modern server") {
		t.Fatalf("the probe's steps do not say it was kept modern: %+v", info.Probe)
	}
}
