package otelexport

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/telemetry"
)

// Span names and attribute keys. Model and tool spans follow the
// OpenTelemetry GenAI conventions ("chat {model}", "execute_tool {tool}",
// gen_ai.*), MCP request spans the MCP conventions ("{method} {target}",
// mcp.method.name); what is ours is under mcp_eval.*.
const (
	spanRun      = "mcp-eval run"
	spanRequests = "mcp requests" // MCP requests outside a case: a Layer 0 run

	attrCase        = attribute.Key("mcp_eval.case")
	attrRun         = attribute.Key("mcp_eval.run")
	attrOutcome     = attribute.Key("mcp_eval.outcome")
	attrJudge       = attribute.Key("mcp_eval.judge")
	attrStubbed     = attribute.Key("mcp_eval.stubbed")
	attrInjected    = attribute.Key("mcp_eval.injected")
	attrScenario    = attribute.Key("mcp_eval.scenario")
	attrRaw         = attribute.Key("mcp_eval.raw")
	attrCommit      = attribute.Key("mcp_eval.commit")
	attrServer      = attribute.Key("mcp_eval.server")
	attrVerdict     = attribute.Key("mcp_eval.verdict")
	attrOperation   = attribute.Key("gen_ai.operation.name")
	attrProvider    = attribute.Key("gen_ai.provider.name")
	attrReqModel    = attribute.Key("gen_ai.request.model")
	attrRespModel   = attribute.Key("gen_ai.response.model")
	attrInTokens    = attribute.Key("gen_ai.usage.input_tokens")
	attrOutTokens   = attribute.Key("gen_ai.usage.output_tokens")
	attrCacheRead   = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	attrCacheWrite  = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	attrReasoning   = attribute.Key("gen_ai.usage.reasoning.output_tokens")
	attrToolName    = attribute.Key("gen_ai.tool.name")
	attrMCPMethod   = attribute.Key("mcp.method.name")
	attrErrorType   = attribute.Key("error.type")
	maxAttrRunes    = 256 // an untrusted name on a span: enough to recognise it
	defaultMaxSpans = 100_000
)

// Options adjust Export. The zero value is the default.
type Options struct {
	// MaxSpans bounds the spans sent (default 100,000); past it MCP
	// request spans are dropped first, and Export says how many.
	MaxSpans int
	// Parent is the trace the run was started in (TRACEPARENT): when set,
	// every span is in its trace and the run span is a child of its span;
	// otherwise each case run is the root of its own trace.
	Parent *mcpclient.Parent
}

// Export builds the run's spans from ev and sends them through exp, then
// flushes. The caller owns exp and shuts it down. rep supplies the run's
// times and names (its telemetry is not needed).
func Export(ctx context.Context, exp sdktrace.SpanExporter, rep *report.Report, ev telemetry.Events, opts ...Options) error {
	o := Options{MaxSpans: defaultMaxSpans}
	if len(opts) > 0 {
		o.Parent = opts[0].Parent
		if opts[0].MaxSpans > 0 {
			o.MaxSpans = opts[0].MaxSpans
		}
	}
	res := resource.NewSchemaless(attribute.String("service.name", "mcp-eval"), attribute.String("service.version", clip(rep.Run.HarnessVersion)))
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithIDGenerator(chosenIDs{}),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithSpanProcessor(sdktrace.NewBatchSpanProcessor(keepOpen{exp}, sdktrace.WithMaxExportBatchSize(512))),
	)
	dropped := build(ctx, tp.Tracer("github.com/mcp-eval/mcp-eval-action/pkg/otelexport"), rep, ev, o)
	// Shutdown flushes every span and stops the batcher; keepOpen leaves
	// the caller's exporter open.
	if err := tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("otelexport: %w", err)
	}
	if dropped > 0 {
		return fmt.Errorf("otelexport: %d MCP request spans over the limit of %d were not sent", dropped, o.MaxSpans)
	}
	return nil
}

// keepOpen passes spans on and leaves Shutdown to the exporter's owner.
type keepOpen struct{ sdktrace.SpanExporter }

func (keepOpen) Shutdown(context.Context) error { return nil }

// chosenIDs lets a span take the trace and span id the harness already
// used on the wire (a case's trace id, a request's traceparent span id);
// any span without one gets random ids.
type chosenIDs struct{}

type idsKey struct{}

type ids struct {
	trace trace.TraceID
	span  trace.SpanID
}

func withIDs(ctx context.Context, t trace.TraceID, s trace.SpanID) context.Context {
	return context.WithValue(ctx, idsKey{}, ids{t, s})
}

func (chosenIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	want, _ := ctx.Value(idsKey{}).(ids)
	t, s := want.trace, want.span
	if !t.IsValid() {
		_, _ = rand.Read(t[:])
	}
	if !s.IsValid() {
		_, _ = rand.Read(s[:])
	}
	return t, s
}

func (chosenIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	want, _ := ctx.Value(idsKey{}).(ids)
	s := want.span
	if !s.IsValid() {
		_, _ = rand.Read(s[:])
	}
	return s
}

// group is one trace: a case run (or the MCP requests of one client trace
// outside any case) and what happened in it.
type group struct {
	traceID    trace.TraceID
	runSpan    trace.SpanID // the case run's span id (TraceContext.RunSpanID)
	caseRun    *telemetry.CaseRun
	kase       string
	scenario   string
	models     []telemetry.ModelCall
	tools      []telemetry.ToolCall
	mcp        []mcpclient.Call
	start, end time.Time
}

func (g *group) cover(start time.Time, d time.Duration) {
	if g.start.IsZero() || start.Before(g.start) {
		g.start = start
	}
	if e := start.Add(d); e.After(g.end) {
		g.end = e
	}
}

// groups sorts the events into case runs (and sessions): by the trace and
// run span the runner gave (the trace sent to the server), else by case,
// model and run.
func groups(ev telemetry.Events) []*group {
	byKey := map[string]*group{}
	var order []string
	get := func(traceHex, runSpanHex, kase, scenario, model string, run int) *group {
		key := "trace:" + traceHex + "/" + runSpanHex
		if traceHex == "" {
			key = fmt.Sprintf("case:%q %q %q %d", kase, scenario, model, run)
		}
		g := byKey[key]
		if g == nil {
			g = &group{kase: kase, scenario: scenario}
			g.traceID, _ = trace.TraceIDFromHex(traceHex)
			g.runSpan, _ = trace.SpanIDFromHex(runSpanHex)
			byKey[key] = g
			order = append(order, key)
		}
		if g.kase == "" {
			g.kase, g.scenario = kase, scenario
		}
		return g
	}
	for i := range ev.Cases {
		c := &ev.Cases[i]
		g := get(c.TraceID, c.RunSpanID, c.Case, c.Scenario, c.Model, c.Run)
		g.caseRun = c
		g.cover(c.Start, c.Duration)
	}
	for _, c := range ev.Models {
		if c.Case == "" && c.TraceID == "" {
			continue // a call outside any case (a preview): no trace to join
		}
		g := get(c.TraceID, c.RunSpanID, c.Case, c.Scenario, c.Model, c.Run)
		g.models = append(g.models, c)
		g.cover(c.Start, c.Latency)
	}
	for _, c := range ev.Tools {
		if c.Case == "" && c.TraceID == "" {
			continue
		}
		g := get(c.TraceID, c.RunSpanID, c.Case, c.Scenario, c.Model, c.Run)
		g.tools = append(g.tools, c)
		g.cover(c.Start, c.Latency)
	}
	for _, c := range ev.MCP {
		if c.TraceID == "" {
			continue // sent without trace context: nothing ties it to a trace
		}
		g := get(c.TraceID, c.RunSpanID, "", "", "", 0)
		g.mcp = append(g.mcp, c)
		g.cover(c.Start, c.Elapsed)
	}
	out := make([]*group, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	return out
}

// build starts and ends every span with its recorded times; it returns
// how many MCP request spans were left out over maxSpans.
func build(ctx context.Context, tr trace.Tracer, rep *report.Report, ev telemetry.Events, o Options) int {
	maxSpans := o.MaxSpans
	gs := groups(ev)
	start, end := rep.Run.StartedAt, rep.Run.FinishedAt
	for _, g := range gs {
		if start.IsZero() || g.start.Before(start) {
			start = g.start
		}
		if g.end.After(end) {
			end = g.end
		}
	}
	parentCtx, inherited := ctx, false
	if p := o.Parent; p != nil {
		// The run joins the trace it was started in, as a child of the
		// span that started it (a remote parent: nothing of it is sent).
		tid, _ := trace.TraceIDFromHex(p.TraceID)
		sid, _ := trace.SpanIDFromHex(p.SpanID)
		ts, _ := trace.ParseTraceState(p.TraceState)
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true})
		parentCtx, inherited = trace.ContextWithRemoteSpanContext(ctx, sc), sc.IsValid()
	}
	runCtx, run := tr.Start(parentCtx, spanRun, trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		attrCommit.String(clip(rep.Run.Commit)), attrServer.String(clip(serverName(rep)))))
	if rep.Gate != nil {
		run.SetAttributes(attrVerdict.String(rep.Gate.Verdict))
	}
	runLink := trace.Link{SpanContext: trace.SpanContextFromContext(runCtx)}
	budget := maxSpans - 1
	for _, g := range gs {
		budget -= 1 + len(g.models) + len(g.tools)
	}
	dropped := 0
	for _, g := range gs {
		name, attrs := spanRequests, []attribute.KeyValue{}
		if g.kase != "" {
			name = "case " + clip(g.kase)
			attrs = append(attrs, attrCase.String(clip(g.kase)))
		}
		if g.scenario != "" {
			attrs = append(attrs, attrScenario.String(clip(g.scenario)))
		}
		if c := g.caseRun; c != nil {
			attrs = append(attrs, attrReqModel.String(clip(c.Model)), attrRun.Int(c.Run), attrOutcome.String(c.Outcome))
		}
		var caseCtx context.Context
		var cs trace.Span
		if inherited {
			// Under an inherited trace every case run is a child of the
			// run span, in the trace its MCP requests carried.
			caseCtx, cs = tr.Start(withIDs(runCtx, g.traceID, g.runSpan), name, trace.WithTimestamp(g.start), trace.WithAttributes(attrs...))
		} else {
			// A case run is the root of its own trace (the one its MCP
			// requests carried), linked to the run.
			caseCtx, cs = tr.Start(withIDs(ctx, g.traceID, g.runSpan), name, trace.WithNewRoot(), trace.WithTimestamp(g.start),
				trace.WithLinks(runLink), trace.WithAttributes(attrs...))
		}
		if g.caseRun != nil && g.caseRun.Outcome == report.RunError {
			cs.SetStatus(codes.Error, "the run could not complete")
		}
		toolSpans := make([]toolSpan, 0, len(g.tools))
		for _, c := range g.models {
			modelSpan(caseCtx, tr, c)
		}
		for _, c := range g.tools {
			toolSpans = append(toolSpans, startTool(caseCtx, tr, c))
		}
		for _, c := range g.mcp {
			if budget <= 0 {
				dropped++
				continue
			}
			budget--
			requestSpan(caseCtx, tr, c, toolSpans)
		}
		for _, t := range toolSpans {
			t.span.End(trace.WithTimestamp(t.end))
		}
		cs.End(trace.WithTimestamp(g.end))
	}
	run.End(trace.WithTimestamp(end))
	return dropped
}

func serverName(rep *report.Report) string {
	if n := strings.TrimSpace(rep.Server.Name + " " + rep.Server.Version); n != "" {
		return n
	}
	return rep.Server.Target
}

func modelSpan(ctx context.Context, tr trace.Tracer, c telemetry.ModelCall) {
	provider, model, _ := strings.Cut(c.Model, ":")
	u := c.Usage
	_, s := tr.Start(ctx, "chat "+clip(model), trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(c.Start), trace.WithAttributes(
		attrOperation.String("chat"), attrProvider.String(clip(provider)), attrReqModel.String(clip(model)),
		attrInTokens.Int(u.InputTokens+u.CachedInputTokens+u.CacheWriteTokens), attrOutTokens.Int(u.OutputTokens),
		attrCacheRead.Int(u.CachedInputTokens), attrCacheWrite.Int(u.CacheWriteTokens), attrReasoning.Int(u.ReasoningTokens),
		attrJudge.Bool(c.Judge)))
	if c.Served != "" {
		s.SetAttributes(attrRespModel.String(clip(c.Served)))
	}
	if c.Failed {
		s.SetStatus(codes.Error, "the model call failed")
		s.SetAttributes(attrErrorType.String("model_call_failed"))
	}
	s.End(trace.WithTimestamp(c.Start.Add(c.Latency)))
}

// toolSpan is an open tool-call span: MCP requests made during it become
// its children, so it ends after them.
type toolSpan struct {
	ctx        context.Context
	span       trace.Span
	tool       string
	start, end time.Time
}

func startTool(ctx context.Context, tr trace.Tracer, c telemetry.ToolCall) toolSpan {
	cctx, s := tr.Start(ctx, "execute_tool "+clip(c.Tool), trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(c.Start), trace.WithAttributes(
		attrOperation.String("execute_tool"), attrToolName.String(clip(c.Tool)), attrReqModel.String(clip(c.Model)), attrStubbed.Bool(c.Stubbed),
		attrOutcome.String(c.Outcome)))
	if c.Injected {
		// The harness answered in the server's place (Layer 2): its
		// duration is no timing of the tool, as in telemetry.tools.
		s.SetAttributes(attrInjected.Bool(true))
	}
	if c.IsError {
		s.SetStatus(codes.Error, "the tool call ended in an error")
		s.SetAttributes(attrErrorType.String(cmp.Or(c.Outcome, telemetry.ToolError)))
	}
	return toolSpan{ctx: cctx, span: s, tool: c.Tool, start: c.Start, end: c.Start.Add(c.Latency)}
}

// requestSpan is one MCP request, with the span id it carried on the wire,
// under the tools/call span of the same tool that encloses it in time, or
// else under the case.
func requestSpan(caseCtx context.Context, tr trace.Tracer, c mcpclient.Call, tools []toolSpan) {
	parent := caseCtx
	end := c.Start.Add(c.Elapsed)
	for _, t := range tools {
		if c.Method == "tools/call" && c.Name == t.tool && !c.Start.Before(t.start) && !end.After(t.end) {
			parent = t.ctx
			break
		}
	}
	spanID, _ := trace.SpanIDFromHex(c.SpanID)
	name := c.Method
	if c.Name != "" {
		name += " " + clip(c.Name)
	}
	attrs := []attribute.KeyValue{attrMCPMethod.String(clip(c.Method))}
	if c.Method == "tools/call" && c.Name != "" {
		attrs = append(attrs, attrToolName.String(clip(c.Name)))
	}
	if c.Raw {
		// Built by the client, sent by the conformance layer: the span
		// marks the request so the server's spans have their parent; its
		// round trip was not timed here.
		attrs = append(attrs, attrRaw.Bool(true))
	}
	traceID := trace.SpanContextFromContext(parent).TraceID()
	_, s := tr.Start(withIDs(parent, traceID, spanID), name, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(c.Start), trace.WithAttributes(attrs...))
	if c.ErrKind != "" {
		s.SetStatus(codes.Error, c.ErrKind)
		s.SetAttributes(attrErrorType.String(c.ErrKind))
	}
	s.End(trace.WithTimestamp(end))
}

// clip bounds an untrusted string on a span.
func clip(s string) string {
	if len(s) <= maxAttrRunes {
		return s
	}
	r := []rune(s)
	if len(r) <= maxAttrRunes {
		return s
	}
	return string(r[:maxAttrRunes]) + "…"
}
