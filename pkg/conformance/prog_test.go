package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

func TestPROGMutants(t *testing.T) {
	for _, c := range progFamily.checks {
		if c.Level != "MUST" {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

func TestPROGArgs(t *testing.T) {
	schema := json.RawMessage(`{
		"type": "object",
		"$defs": {"id": {"type": "string", "minLength": 3, "maxLength": 5}},
		"properties": {
			"n": {"type": "integer", "minimum": 2, "maximum": 20},
			"f": {"type": "number", "exclusiveMinimum": 0},
			"unit": {"type": "string", "enum": ["c", "f"]},
			"mode": {"type": "string", "default": "fast"},
			"to": {"type": "string", "format": "email"},
			"id": {"$ref": "#/$defs/id"},
			"tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
			"opt": {"type": ["null", "boolean"]},
			"nested": {"type": "object", "properties": {"x": {"const": 7}}, "required": ["x"]},
			"notRequired": {"type": "string"}
		},
		"required": ["n", "f", "unit", "mode", "to", "id", "tags", "opt", "nested"]
	}`)
	want := map[string]any{"n": int64(2), "f": 1.0, "unit": "c", "mode": "fast", "to": "user@example.com", "id": "examp", "tags": []any{"example"}, "opt": false, "nested": map[string]any{"x": 7.0}}
	if got := progArgs(schema, false); !reflect.DeepEqual(got, want) {
		t.Errorf("small:\n got %#v\nwant %#v", got, want)
	}
	if got := progArgs(schema, true)["n"]; got != int64(20) {
		t.Errorf("large n = %v, want 20", got)
	}
	if got := progArgs(json.RawMessage(`null`), false); len(got) != 0 {
		t.Errorf("no schema: %v", got)
	}
}

// A stdio search that could not start a process of its own ran on the
// run's busy process, where a log message reaches no request: finding
// none there says nothing, so the LOG checks report why instead of
// skipping as if no tool logged. Logs it did see still count.
func TestLogsUnseenWhenTheSearchRanOnTheSharedProcess(t *testing.T) {
	startErr := errors.New("server process exited with code 1")
	if err := (&progEmitters{shared: startErr}).logsUnseen(); err == nil || !errors.Is(err, startErr) || !strings.Contains(err.Error(), "cannot be told apart") {
		t.Fatalf("logsUnseen = %v, want the start's error and why", err)
	}
	if err := (&progEmitters{shared: startErr, logs: &progEmitter{}}).logsUnseen(); err != nil {
		t.Fatalf("logs seen on the shared process: logsUnseen = %v, want nil", err)
	}
	if err := (&progEmitters{}).logsUnseen(); err != nil {
		t.Fatalf("a search on a process of its own: logsUnseen = %v, want nil", err)
	}

	// The search records why it fell back to the shared client.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connectHTTP(ctx, t, refTarget(t, "http"))
	env := check.Env{Client: c, Transport: "stdio", Facts: check.GatherFacts(ctx, c), CallTools: map[string]bool{},
		Fresh: func(context.Context) (*mcpclient.Client, func(), error) { return nil, nil, startErr }}
	es := &progEmitters{done: make(chan struct{})}
	es.run(ctx, env, nil)
	if !errors.Is(es.shared, startErr) || len(es.tried) == 0 {
		t.Fatalf("search with no new process: shared %v after trying %q, want the start's error", es.shared, es.tried)
	}
}
