package cassette

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/lexical"
	"github.com/mcp-eval/mcp-eval-action/pkg/redact"
	"github.com/mcp-eval/mcp-eval-action/pkg/telemetry"
)

// echo is a model that answers every request with one text.
type echo struct{ text string }

func (e echo) ID() string { return "fake:echo" }
func (e echo) Complete(_ context.Context, req *llm.Request) (*llm.Response, error) {
	return &llm.Response{Message: llm.Message{Role: llm.Assistant, Text: e.text}, StopReason: "end_turn", ServedModel: "echo-1"}, nil
}

func turn2(result, callID string) *llm.Request {
	return &llm.Request{System: "s", Tools: []llm.Tool{{Name: "get_weather", Description: "weather", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		Messages: []llm.Message{{Role: llm.User, Text: "weather?"},
			{Role: llm.Assistant, Calls: []llm.ToolCall{{ID: callID, Name: "get_weather", Arguments: json.RawMessage(`{"location":"Seattle"}`)}}},
			{Role: llm.ToolRole, Results: []llm.ToolResult{{CallID: callID, Content: result}}}}}
}

func TestReplayIgnoresIDsRedactsSecretsAndNamesTheStaleTurn(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	r := &redact.Redactor{}
	r.Add(secret)
	dir := t.TempDir()
	ctx := telemetry.WithPlace(context.Background(), telemetry.Place{Case: "weather", Run: 1})
	rec := NewRecorder(r)
	p := rec.Wrap(echo{text: "It is sunny."}, false)
	if _, err := p.Complete(ctx, turn2("sunny; token "+secret, "call_1")); err != nil {
		t.Fatal(err)
	}
	info, err := rec.Save(dir)
	if err != nil || info.Exchanges != 1 {
		t.Fatalf("save: %+v, %v", info, err)
	}
	b, _ := os.ReadFile(info.Path)
	if strings.Contains(string(b), secret) {
		t.Fatalf("the cassette holds the secret:\n%s", b)
	}

	pl, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	pl.Redact(r)
	if pl.Info().Hash != info.Hash {
		t.Errorf("hash on open %s, on save %s", pl.Info().Hash, info.Hash)
	}
	m := pl.Provider("fake:echo", false)
	// Another call id (ids are listed in IgnoredFields), the same secret
	// (redacted on both sides): answered as recorded.
	resp, err := m.Complete(ctx, turn2("sunny; token "+secret, "toolu_9"))
	if err != nil || resp.Message.Text != "It is sunny." || resp.ServedModel != "echo-1" {
		t.Fatalf("replay: %+v, %v", resp, err)
	}
	// A changed result: stale at turn 2, never an answer.
	resp, err = m.Complete(ctx, turn2("rainy; token "+secret, "call_1"))
	var se *StaleError
	if resp != nil || !errors.As(err, &se) || !errors.Is(err, llm.ErrNoAnswer) {
		t.Fatalf("changed request: %+v, %v", resp, err)
	}
	if !strings.HasPrefix(err.Error(), "cassette stale at case weather, run 1, turn 2 of fake:echo: Messages[2].Results[0].Content: recorded \"sunny") {
		t.Errorf("error %q", err)
	}
	// Another place has nothing recorded.
	other := telemetry.WithPlace(context.Background(), telemetry.Place{Case: "weather", Run: 2})
	if _, err := m.Complete(other, turn2("sunny; token "+secret, "call_1")); err == nil || !strings.Contains(err.Error(), "nothing was recorded there") {
		t.Errorf("unrecorded run: %v", err)
	}
	if st := pl.Stale(); len(st) != 2 || st[0].Run != 1 || st[0].Turn != 2 || pl.Served() != 1 {
		t.Errorf("stale %+v, served %d", st, pl.Served())
	}
}

func TestOpenRefusesWhatIsNotACassette(t *testing.T) {
	for name, body := range map[string]string{
		"version":    `{"version": 2, "exchanges": []}`,
		"incomplete": `{"version": 1, "exchanges": [{"model": "m", "case": "c", "run": 1, "turn": 1, "request": {}}]}`,
		"not json":   `exchanges`,
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, FileName), []byte(body), 0o644)
		if _, err := Open(dir); err == nil {
			t.Errorf("%s: opened", name)
		}
	}
	if _, err := Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "--record") {
		t.Errorf("missing cassette: %v", err)
	}
}

func TestDiffIsShort(t *testing.T) {
	long := strings.Repeat("a", 500)
	d := Diff(json.RawMessage(`{"A":"`+long+`x","B":[1,2],"C":1,"D":1,"E":1}`), json.RawMessage(`{"A":"`+long+`y","B":[1],"C":2,"D":2,"E":2}`))
	if len(d) > 400 || !strings.Contains(d, `A: recorded "…`) || !strings.Contains(d, "B[1]: recorded 2, now nothing") || !strings.Contains(d, "and 2 more") {
		t.Errorf("diff %q", d)
	}
}

// Recording a run keeps the lexical baseline's revision in the result
// cache's keys.
func TestRecordingForwardsTheRevision(t *testing.T) {
	if got := llm.Revision(NewRecorder(nil).Wrap(lexical.New(), false)); got != lexical.Revision {
		t.Errorf("revision through the cassette recorder %q, want %q", got, lexical.Revision)
	}
}
