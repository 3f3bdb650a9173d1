package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// provider is one model at one endpoint, in one dialect. It is safe for
// concurrent use: its only mutable state is what it learned about the
// endpoint (no structured output), which it keeps in an atomic.
type provider struct {
	id    string
	model string
	wire  *wire
	d     dialect
	opts  Options
	// noStructured is set once the endpoint rejected structured output;
	// later judge calls go straight to JSON-in-text.
	noStructured atomic.Bool
	// unreachable is set once a call spent every retry failing to
	// connect, and cleared by the next exchange that gets through: until
	// then each call tries once. A run of hundreds of calls against an
	// endpoint that refuses connections (a wrong base URL, a local model
	// server that is not up) would otherwise wait out every call's
	// backoff, about 7 s each, to say the same thing.
	unreachable atomic.Bool
	// failing is the same for an endpoint that answers only 5xx: set once
	// a call spent every retry on them, cleared by the next answer that
	// is not one (28 runs of a model behind a failing gateway took 47 s).
	failing atomic.Bool
	// refused is the answer to a call of the model the endpoint refused
	// for good (401: the key; 404: the model name or the URL) before any
	// call of it got through: later calls are not sent, and say why. A
	// misspelled model made 80 requests that each got the same 404. Once
	// a call has got through, a 404 is the request's own (an item a
	// Responses conversation no longer holds, a deployment still
	// starting), not the model's.
	refused  atomic.Pointer[APIError]
	answered atomic.Bool
}

// dialect is one wire format.
type dialect interface {
	// build encodes a turn as the request body.
	build(p *provider, t *turn) ([]byte, error)
	// parse decodes a successful reply; Message.Calls carry MCP names.
	parse(p *provider, t *turn, body []byte) (*Response, error)
}

func newProvider(sp Spec, w *wire, opts Options) *provider {
	p := &provider{id: sp.String(), model: sp.Model, wire: w, opts: opts}
	switch w.dialect {
	case DialectOpenAIResponses:
		p.d = responsesDialect{}
	case DialectAnthropic:
		p.d = anthropicDialect{}
	default:
		p.d = chatDialect{}
	}
	return p
}

func (p *provider) ID() string { return p.id }

// Output modes of Response.OutputMode.
const (
	OutputJSONSchema = "json_schema"
	OutputTextJSON   = "text-json"
)

// turn is one Complete call prepared for the wire.
type turn struct {
	req      *Request
	system   string
	messages []Message
	tools    toolPlan
	capab    capability
	sent     Sampling
	dropped  []string
	output   string // "", OutputJSONSchema or OutputTextJSON
}

// Complete sends one turn, retrying 429 and 5xx within Options.Timeout and
// ctx, and for Request.Output makes sure the answer is JSON for the schema
// (falling back to JSON in text, with one repair turn).
func (p *provider) Complete(ctx context.Context, req *Request) (*Response, error) {
	start := time.Now()
	if req == nil {
		return nil, errors.New("llm: nil request")
	}
	switch req.ToolChoice {
	case "", "auto", "none", "required":
	default:
		return nil, fmt.Errorf("llm: tool choice %q is not one of auto, none, required", req.ToolChoice)
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()

	t := p.prepare(req)
	resp, err := p.roundTrip(ctx, t)
	if err != nil {
		return nil, err
	}
	var outErr error
	if req.Output != nil {
		var out json.RawMessage
		out, outErr = extractOutput(resp.Message.Text, req.Output)
		if outErr != nil {
			// One repair turn: show the model its answer and what is wrong.
			first := resp
			t.messages = append(append(t.messages[:len(t.messages):len(t.messages)], first.Message),
				Message{Role: User, Text: "Your reply was not usable: " + bound(outErr.Error(), 300) + ". Answer again with only the JSON object, valid against the schema, and nothing else."})
			second, err := p.roundTrip(ctx, t)
			if err != nil {
				return nil, err
			}
			second.Usage = addUsage(first.Usage, second.Usage)
			second.Attempts += first.Attempts
			resp = second
			out, outErr = extractOutput(resp.Message.Text, req.Output)
		}
		resp.Output = out
		resp.OutputMode = t.output
	}
	resp.Sent = t.sent
	resp.Dropped = t.dropped
	resp.SchemaNotes = t.tools.notes
	resp.Renamed = t.tools.names.renamed()
	resp.APIVersion = p.wire.apiVersion
	resp.Latency = time.Since(start)
	if outErr != nil {
		return resp, fmt.Errorf("%s: %w: %s", p.id, ErrInvalidOutput, bound(outErr.Error(), 300))
	}
	return resp, nil
}

func (p *provider) prepare(req *Request) *turn {
	t := &turn{req: req, system: req.System, messages: req.Messages}
	t.tools = planTools(p.wire.dialect, req.Tools)
	t.capab = capabilityOf(p.wire.dialect, p.model, p.wire.apiVersion)
	t.sent, t.dropped = filterSampling(t.capab, req.Sampling, p.opts.DefaultMaxTokens, p.wire.dialect)
	if req.Output != nil {
		t.output = OutputJSONSchema
		if p.noStructured.Load() {
			p.toTextJSON(t)
		}
	}
	return t
}

// toTextJSON asks for the JSON in the system prompt instead.
func (p *provider) toTextJSON(t *turn) {
	t.output = OutputTextJSON
	instr := "Answer with only one JSON object — no prose, no code fences — that is valid against this JSON Schema:\n" + string(t.req.Output)
	if strings.TrimSpace(t.system) == "" {
		t.system = instr
	} else {
		t.system = t.req.System + "\n\n" + instr
	}
}

// roundTrip builds, posts and parses one turn. An endpoint that rejects
// structured output is asked again with the schema in the prompt, and
// remembered.
func (p *provider) roundTrip(ctx context.Context, t *turn) (*Response, error) {
	body, err := p.d.build(p, t)
	if err != nil {
		return nil, fmt.Errorf("%s: building the request: %w", p.id, err)
	}
	ex, err := p.post(ctx, body)
	attempts := 0
	if err != nil && t.output == OutputJSONSchema && formatRejected(err) {
		attempts = apiAttempts(err)
		p.noStructured.Store(true)
		p.toTextJSON(t)
		if body, err = p.d.build(p, t); err != nil {
			return nil, fmt.Errorf("%s: building the request: %w", p.id, err)
		}
		ex, err = p.post(ctx, body)
	}
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) {
			return nil, fmt.Errorf("%s: %w", p.id, err)
		}
		return nil, err
	}
	resp, err := p.d.parse(p, t, ex.body)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the reply: %w", p.id, err)
	}
	resp.Attempts = ex.attempts + attempts
	resp.RequestID = ex.requestID
	resp.Message.Role = Assistant
	resp.Message.Dialect = p.wire.dialect
	return resp, nil
}

func apiAttempts(err error) int {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Attempts
	}
	return 1
}

// formatRejected: a 400/422 that names the structured-output parameter,
// as compatible servers without json_schema support answer.
func formatRejected(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) || (ae.Status != 400 && ae.Status != 422) {
		return false
	}
	m := strings.ToLower(ae.Type + " " + ae.Message)
	for _, k := range []string{"response_format", "json_schema", "text.format", "output_config", "structured output"} {
		if strings.Contains(m, k) {
			return true
		}
	}
	return false
}

// toolPlan is the tool list as one provider sees it.
type toolPlan struct {
	names   nameMap
	tools   []wireTool
	wrapped map[string]bool // provider names whose schema was wrapped
	notes   []string
}

type wireTool struct {
	name, description string
	schema            json.RawMessage
}

func planTools(dialect string, tools []Tool) toolPlan {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	plan := toolPlan{names: newNameMap(names, nameLimit(dialect)), wrapped: map[string]bool{}}
	seen := map[string]bool{}
	for _, t := range tools {
		if seen[t.Name] {
			plan.notes = append(plan.notes, fmt.Sprintf("tool %q is listed twice; only the first definition was sent", t.Name))
			continue
		}
		seen[t.Name] = true
		c := convertSchema(t.InputSchema)
		pn := plan.names.provider(t.Name)
		for _, n := range c.notes {
			plan.notes = append(plan.notes, fmt.Sprintf("tool %q: %s", t.Name, n))
		}
		if c.wrapped {
			plan.wrapped[pn] = true
		}
		plan.tools = append(plan.tools, wireTool{name: pn, description: t.Description, schema: c.schema})
	}
	return plan
}

// call turns a provider's tool call into a neutral one: the MCP name, the
// arguments parsed (or the parse error recorded, never fatal: malformed
// arguments are a finding about the model, not a harness failure).
func (t *turn) call(id, providerName, args string) ToolCall {
	c := ToolCall{ID: id, Name: t.tools.names.mcp(providerName), ArgumentsRaw: args}
	trimmed := bytes.TrimSpace([]byte(args))
	if len(trimmed) == 0 {
		c.Arguments = json.RawMessage(`{}`) // a tool without parameters
		return c
	}
	var v any
	if err := json.Unmarshal(trimmed, &v); err != nil {
		c.ParseError = "arguments are not valid JSON: " + bound(err.Error(), 200)
		return c
	}
	obj, ok := v.(map[string]any)
	if !ok {
		c.ParseError = "arguments are " + jsonType(v) + ", not a JSON object"
		return c
	}
	c.Arguments = json.RawMessage(trimmed)
	if t.tools.wrapped[providerName] {
		if inner, ok := obj["input"]; ok {
			b, _ := json.Marshal(inner)
			c.Arguments = b
		}
	}
	return c
}

// providerArgs are the arguments to echo for a neutral call built by
// another dialect (re-wrapping a wrapped tool's arguments).
func (t *turn) providerArgs(c ToolCall) string {
	args := c.ArgumentsRaw
	if c.Arguments != nil {
		args = string(c.Arguments)
		if t.tools.wrapped[t.tools.names.provider(c.Name)] {
			b, _ := json.Marshal(map[string]json.RawMessage{"input": c.Arguments})
			args = string(b)
		}
	}
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	return args
}

func addUsage(a, b Usage) Usage {
	return Usage{
		InputTokens:       a.InputTokens + b.InputTokens,
		CachedInputTokens: a.CachedInputTokens + b.CachedInputTokens,
		CacheWriteTokens:  a.CacheWriteTokens + b.CacheWriteTokens,
		OutputTokens:      a.OutputTokens + b.OutputTokens,
		ReasoningTokens:   a.ReasoningTokens + b.ReasoningTokens,
	}
}

// nonNeg clamps provider counts: a negative token count is a provider bug
// that must not reduce a budget.
func nonNeg(n int) int { return max(n, 0) }
