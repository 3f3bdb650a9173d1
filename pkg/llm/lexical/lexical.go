// Package lexical is the built-in deterministic selector: a llm.Provider
// that needs no model and no key, labelled "baseline, no LLM" everywhere
// it appears. It lets Layer 1 run offline — the README's main command runs
// the whole pipeline, matrix included, on the bundled example — and it
// shows whether a server's tool descriptions are even lexically
// distinguishable: if BM25 over the descriptions cannot tell two tools
// apart for a prompt, a model reading them has little to go on either.
//
// It is a baseline, not a model. For each case it:
//
//  1. ranks the tools by BM25 (Rank) of the prompt against each tool's
//     name, description, and parameter names, descriptions and enum
//     values;
//  2. answers without a tool when the best score is below the threshold
//     (how it passes negative cases) — or always, with tool_choice
//     "none";
//  3. otherwise calls the best tool once, with the arguments it can
//     extract plainly from the prompt (ExtractArgs: enum words, e-mail
//     addresses, pattern- or example-shaped ids, quoted strings, numbers,
//     place names);
//  4. once it has seen a tool result, ends the turn with a text that
//     quotes it.
//
// So it never chains calls (sequence cases fail), never paraphrases
// (a prompt sharing no word with the right tool's text gets no tool), and
// cannot grade a rubric (a request for structured output is an error: use
// a real judge model). The same request always gives the same response.
package lexical

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
)

const (
	// ID names the baseline wherever a model id goes.
	ID = "baseline:lexical"
	// Label is how reports and the CLI describe it.
	Label = "baseline, no LLM"
	// DefaultThreshold is the BM25 score the best tool needs to be
	// called. On the bundled example's 27 cases the positive prompts that
	// share a distinctive word with their tool score 2.02 and up, the
	// negative ones 1.51 and below — except the near miss "the difference
	// between an open invoice and an overdue one" (4.79), which no
	// lexical method can tell from a request; TestExampleSet pins them.
	DefaultThreshold = 1.8
	// Revision changes whenever what the baseline answers for the same
	// request changes, so that a result cache does not replay the
	// answers of an older mcp-eval (llm.Revision). 2: parameters read
	// through nullable wrappers and every local $ref (package toolschema).
	Revision = "lexical/2"
)

// ErrCannotJudge is returned for a request asking for structured output
// (a judge's verdict): the baseline has no judgement.
var ErrCannotJudge = errors.New("baseline:lexical cannot grade a rubric or compare arguments: configure a judge model (eval.judge)")

// Provider is the lexical baseline. The zero value is ready to use.
// It holds no state between calls and is safe for concurrent use.
type Provider struct {
	// Threshold is the BM25 score below which it calls no tool; zero
	// means DefaultThreshold.
	Threshold float64
}

// New returns the baseline with the default threshold.
func New() *Provider { return &Provider{} }

var _ llm.Provider = (*Provider)(nil)

// ID is "baseline:lexical".
func (p *Provider) ID() string { return ID }

// Revision is Revision, the constant.
func (p *Provider) Revision() string { return Revision }

// Complete answers one turn deterministically. It honours ctx only to
// refuse work after cancellation; it does no I/O.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil {
		return nil, errors.New("baseline:lexical: nil request")
	}
	if len(req.Output) > 0 {
		return nil, ErrCannotJudge
	}
	prompt, seenResult, lastResult := readTranscript(req.Messages)
	if prompt == "" {
		return nil, errors.New("baseline:lexical: the request has no user message to select a tool for")
	}
	resp := &llm.Response{ServedModel: ID, Attempts: 1, StopReason: "end_turn", Dropped: dropped(req.Sampling)}
	resp.Message = llm.Message{Role: llm.Assistant, Dialect: "lexical"}
	defer func() { resp.Latency = time.Since(start) }()

	switch {
	case seenResult:
		resp.Message.Text = Label + ": the tool answered: " + clip(lastResult, 500)
		return resp, nil
	case req.ToolChoice == "none" || len(req.Tools) == 0:
		resp.Message.Text = Label + ": no tool offered"
		return resp, nil
	}
	ranked := Rank(prompt, req.Tools)
	best := ranked[0]
	threshold := p.Threshold
	if threshold == 0 {
		threshold = DefaultThreshold
	}
	if best.Score < threshold && req.ToolChoice != "required" {
		resp.Message.Text = fmt.Sprintf("%s: no tool matches the request lexically (best %s, BM25 %.2f < %.2f)", Label, best.Tool, best.Score, threshold)
		return resp, nil
	}
	var tool llm.Tool
	for _, t := range req.Tools {
		if t.Name == best.Tool {
			tool = t
			break
		}
	}
	args, err := json.Marshal(ExtractArgs(prompt, tool))
	if err != nil { // only maps of strings and numbers: cannot fail
		return nil, fmt.Errorf("baseline:lexical: arguments: %w", err)
	}
	resp.StopReason = "tool_use"
	resp.Message.Text = fmt.Sprintf("%s: chose %s (BM25 %.2f on %s%s)", Label, best.Tool, best.Score, strings.Join(best.Terms, ", "), runnerUp(ranked))
	resp.Message.Calls = []llm.ToolCall{{ID: "lexical-1", Name: best.Tool, Arguments: args, ArgumentsRaw: string(args)}}
	return resp, nil
}

// readTranscript finds the case's prompt (the first user message) and
// whether a tool result has come back since.
func readTranscript(msgs []llm.Message) (prompt string, seenResult bool, lastResult string) {
	for _, m := range msgs {
		switch m.Role {
		case llm.User:
			if prompt == "" {
				prompt = m.Text
			}
		case llm.ToolRole:
			for _, r := range m.Results {
				seenResult, lastResult = true, r.Content
			}
		}
	}
	return prompt, seenResult, lastResult
}

// dropped says which requested sampling knobs had no effect: the
// baseline samples nothing, it is deterministic by construction.
func dropped(s llm.Sampling) []string {
	var out []string
	if s.Temperature != nil {
		out = append(out, "temperature: "+ID+" samples nothing (deterministic)")
	}
	if s.Seed != nil {
		out = append(out, "seed: "+ID+" samples nothing (deterministic)")
	}
	return out
}

func runnerUp(ranked []Ranked) string {
	if len(ranked) < 2 || ranked[1].Score == 0 {
		return ""
	}
	return fmt.Sprintf("; next %s %.2f", ranked[1].Tool, ranked[1].Score)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
