package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/atomicfile"
	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/conformance"
	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/otelexport"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/telemetry"
	"github.com/mcp-eval/mcp-eval-action/pkg/tokens"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// HarnessVersion is recorded in every report.
const HarnessVersion = "0.1.0"

// ErrPreviewOnly ends a run after the Layer 1 spend preview
// (BehaviorPlan.PreviewOnly): nothing was called, nothing is written.
var ErrPreviewOnly = errors.New("preview only")

// Run runs the plan's layers against its server, gates the report against
// the baseline, takes the run's secrets out of it and writes the outputs.
// The error is a harness error (the server could not be tested, an output
// could not be written); a regression is the report's gate verdict, never
// an error. The report is returned with an output error, so the caller can
// still show it.
func Run(ctx context.Context, p *Plan) (*report.Report, error) {
	started := time.Now().UTC()
	// The server-user note is not printed here: it is one of the
	// report's notes, which every command that runs a plan prints with
	// the verdict, and a reader saw it twice.
	if len(p.Build) > 0 {
		if err := p.buildServer(ctx); err != nil {
			if ctx.Err() != nil {
				return p.cancelled(ctx, report.New(), started)
			}
			return p.untested(err, started)
		}
	}
	// stopped is the caller's context: SIGINT or SIGTERM (a cancelled CI
	// job) end it. The run's own deadline below is a timeout, not a
	// cancellation: what it cuts short is judged as usual.
	stopped := ctx
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	// Every trace of the run joins the one the harness was started in,
	// when there is one: each layer makes its traces with NewTraceFor.
	parent := p.traceParent()
	ctx = mcpclient.WithParent(ctx, parent)
	// One price table for the whole run: the budget, the preview and
	// telemetry price every call alike.
	rec := telemetry.NewRecorder(telemetry.Options{Prices: p.Prices})
	if p.Outputs.Report != "" {
		go report.CompileSchema()
	}
	rep := report.New()
	rep.Server = report.Server{Target: p.TargetDesc, Transport: p.Target.Kind()}
	// Every layer's stdio processes are stopped beside the work done with
	// them (transport.CloseAside); the run returns once they are gone.
	stops := &transport.Stops{}
	defer stops.Wait()
	if p.Has(Conformance) {
		opts := p.Conformance
		opts.Stops = stops
		opts.Observer = rec.ObserveMCP
		var count *toolCount
		opts.Listed = func(tools []mcpclient.Tool) { count = p.startToolCount(llmTools(tools)) }
		l0, tools, err := conformance.Run(ctx, p.Target, opts)
		// A cancelled or failed run does not wait for a count under way:
		// it ends on its own (toolCount).
		if stopped.Err() != nil {
			return p.cancelled(stopped, rep, started)
		}
		if se := (*conformance.SelectionError)(nil); errors.As(err, &se) {
			return nil, err
		}
		if err != nil {
			return p.untested(fmt.Errorf("could not test %s: %w", p.targetNamed(), err), started)
		}
		if count == nil {
			count = p.startToolCount(llmTools(tools))
		}
		rep = report.FromConformance(l0, p.Env.Workspace)
		rep.ToolSurfaceHash = report.ToolSurfaceHash(mcpclient.ToolSurfaces(tools))
		rep.Tools = toolNames(tools)
		lt := llmTools(tools)
		tt, err := count.wait()
		if err != nil {
			return nil, err
		}
		rep.ToolTokens = tt
		if p.ExactToolTokens && rep.ToolTokens != nil {
			p.exactToolTokens(ctx, rep.ToolTokens, lt)
		}
	}
	var notes []string
	if p.Has(Behavior) || p.Has(Resilience) {
		n, err := p.runModels(ctx, rec, rep, stops)
		if stopped.Err() != nil {
			return p.cancelled(stopped, rep, started)
		}
		if ue := (*unreachableError)(nil); errors.As(err, &ue) && !p.Has(Conformance) {
			// Nothing was tested: `eval` then writes its report and
			// comment as `check` does for a server it cannot reach. (After
			// Layer 0 the error stays the run's: its report holds results.)
			return p.untested(err, started)
		}
		if err != nil {
			return nil, err
		}
		notes = append(notes, n...)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// Said once, where each check or case it cut short only says
		// "context deadline exceeded".
		notes = append(notes, fmt.Sprintf("the run's deadline (%s, --timeout) passed before it finished: what it cut short errored and is not judged; raise --timeout if the server or the models are just slow", p.Timeout))
	}
	if p.Shard != nil && rep.Shard == nil {
		// Nothing of Layers 1 and 2 ran here, but a merge must still
		// see which shard this is.
		rep.Shard = &report.Shard{Index: p.Shard.Index, Count: p.Shard.Count, Units: []report.ShardUnit{}, Balance: report.BalanceCount}
	}
	if p.Shard != nil {
		notes = append(notes, fmt.Sprintf("shard %s: this verdict covers this shard's %d of %d case × model units only; `mcp-eval report merge` of every shard gives the run's", p.Shard, len(rep.Shard.Units), rep.Shard.Total))
	}
	rep.Run = p.runInfo(started)
	if p.Has(Telemetry) {
		t := rec.Summarize()
		reportModelNames(&t)
		rep.Telemetry = &t
	}
	rep.Gate = gate.Evaluate(gate.Input{New: rep, Baseline: p.Baseline, BaselineRef: p.BaselineRef, BaselineNote: p.BaselineNote, History: p.History, Now: time.Now()}, p.Policy)
	rep.Gate.Notes = append(rep.Gate.Notes, notes...)
	rep.Gate.Notes = append(rep.Gate.Notes, p.Notes...)
	if p.ServerUserNote != "" {
		rep.Gate.Notes = append(rep.Gate.Notes, p.ServerUserNote)
	}
	if rep.Telemetry != nil {
		// The trend runs over the green reports the gate walked.
		telemetry.Compare(rep, p.Baseline, walked(p.History, rep.Gate.History))
	}
	p.exportTraces(ctx, rep, rec, parent)
	// Every output (and the action's summary, comment and annotations,
	// made from the returned report) is made from the redacted report:
	// the server may have echoed a secret it was given.
	if err := p.Env.Redact.JSON(rep); err != nil {
		return nil, fmt.Errorf("redacting the report: %w", err)
	}
	return rep, p.Outputs.Write(rep)
}

// reportModelNames names the models in telemetry as Layers 1 and 2 name
// them in the report (behavior.ReportModelID: the lexical baseline with
// its label), so that one model is one row everywhere. The recorder
// keeps the provider's own id, which prices the calls.
func reportModelNames(t *report.Telemetry) {
	for i := range t.Latency {
		if t.Latency[i].Model != "" {
			t.Latency[i].Model = behavior.ReportModelID(t.Latency[i].Model)
		}
	}
	for i := range t.Usage {
		t.Usage[i].Model = behavior.ReportModelID(t.Usage[i].Model)
	}
	for i := range t.Cases {
		t.Cases[i].Model = behavior.ReportModelID(t.Cases[i].Model)
	}
	for i := range t.Tools {
		t.Tools[i].Model = behavior.ReportModelID(t.Tools[i].Model)
	}
}

// modelsUsed are the models Layers 1 and 2 will call (none when neither
// runs).
func (p *Plan) modelsUsed() []string {
	if p.Has(Behavior) || p.Has(Resilience) {
		return p.Behavior.Models
	}
	return nil
}

// llmTools are the listed tools as a model is offered them.
func llmTools(tools []mcpclient.Tool) []llm.Tool {
	lt := make([]llm.Tool, len(tools))
	for i, t := range tools {
		lt[i] = llm.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
	}
	return lt
}

// toolCount is the count of what the listed tools cost in every model
// request, in the encodings of the run's models, made beside Layer 0's
// checks: the tools are known once the run has listed them, and on a server
// of 1,000 tools the count (the tokenizer built on first use, never before,
// and at most once, by the run's own meter) took a tenth of a second after
// the last check.
type toolCount struct {
	done chan struct{}
	tt   *report.ToolTokens
	err  error
}

// startToolCount begins counting tools for the run's models; nothing is
// counted for no tools.
func (p *Plan) startToolCount(tools []llm.Tool) *toolCount {
	c := &toolCount{done: make(chan struct{})}
	if len(tools) == 0 {
		close(c.done)
		return c
	}
	models := p.modelsUsed()
	count := p.countTools
	if count == nil {
		count = tokens.NewMeter().ToolSurface
	}
	go func() {
		defer close(c.done)
		// Off the run's goroutine a panic would end the process with no
		// report; it is the run's error instead.
		defer func() {
			if v := recover(); v != nil {
				c.tt, c.err = nil, fmt.Errorf("counting the tokens of the tool surface: panic: %v", v)
			}
		}()
		c.tt, c.err = count(tools, models)
		if c.err != nil {
			c.err = fmt.Errorf("counting the tokens of the tool surface: %w", c.err)
		}
	}()
	return c
}

// wait returns the count once it is made (nil for no tools).
func (c *toolCount) wait() (*report.ToolTokens, error) {
	<-c.done
	return c.tt, c.err
}

// cancelled ends a run its caller stopped: a report with the run's
// metadata and no layer results (every check and case still running ended
// on the cancellation, not on the server), gated "cancelled", and written
// like any other so the step's outputs say what happened.
func (p *Plan) cancelled(stopped context.Context, partial *report.Report, started time.Time) (*report.Report, error) {
	rep := report.New()
	rep.Server = partial.Server
	rep.Run = p.runInfo(started)
	rep.Run.Cancelled = "cancelled"
	if cause := context.Cause(stopped); cause != nil {
		rep.Run.Cancelled = cause.Error()
	}
	rep.Gate = gate.Evaluate(gate.Input{New: rep, Now: time.Now()}, p.Policy)
	if p.Env.Stderr != nil {
		fmt.Fprintf(p.Env.Stderr, "mcp-eval: the run was cancelled (%s): nothing is judged\n", rep.Run.Cancelled)
	}
	if err := p.Env.Redact.JSON(rep); err != nil {
		return nil, fmt.Errorf("redacting the report: %w", err)
	}
	return rep, p.Outputs.Write(rep)
}

// untested writes the outputs of a run that could test nothing (err says
// why: the server could not be built, started or reached) and returns
// that report with err. Without them a CI step that uploads report.json
// or posts the comment found no file, and the PR's comment kept the last
// run's verdict.
func (p *Plan) untested(err error, started time.Time) (*report.Report, error) {
	rep := report.New()
	rep.Server = report.Server{Target: p.TargetDesc, Transport: p.Target.Kind()}
	rep.Run = p.runInfo(started)
	rep.Run.Untested = err.Error()
	// Redacted before it is clipped: a secret cut at the clip would
	// otherwise keep its first part.
	if rerr := p.Env.Redact.JSON(rep); rerr != nil {
		return nil, errors.Join(err, fmt.Errorf("redacting the report: %w", rerr))
	}
	rep.Run.Untested = jsonrpc.Clip(rep.Run.Untested, untestedMax)
	if p.Shard != nil {
		// A merge names this shard and why it tested nothing, instead of
		// taking its report for one of an unsharded run.
		rep.Shard = &report.Shard{Index: p.Shard.Index, Count: p.Shard.Count, Units: []report.ShardUnit{}, Balance: report.BalanceCount}
	}
	rep.Gate = gate.Evaluate(gate.Input{New: rep, Now: time.Now()}, p.Policy)
	if werr := p.Outputs.Write(rep); werr != nil {
		return nil, errors.Join(err, werr)
	}
	return rep, err
}

// untestedMax bounds Run.Untested in bytes (report.schema.json allows
// 4,000 characters): a server's stderr tail in the error is clipped, not
// the report refused.
const untestedMax = 3990

// Write writes every output the plan names, each atomically.
func (o Outputs) Write(rep *report.Report) error {
	if o.Report != "" {
		data, err := report.Marshal(rep)
		if err != nil {
			return fmt.Errorf("%s: %w", o.Report, err)
		}
		if err := atomicfile.WriteBytes(o.Report, data); err != nil {
			return err
		}
	}
	for _, out := range []struct {
		path   string
		render func(io.Writer) error
	}{
		{o.JUnit, func(w io.Writer) error { return render.ReportJUnit(w, rep) }},
		{o.Markdown, func(w io.Writer) error { return render.Markdown(w, rep, render.MarkdownOptions{RunURL: o.RunURL}) }},
		{o.HTML, func(w io.Writer) error { return render.HTML(w, rep, render.HTMLOptions{}) }},
	} {
		if out.path == "" {
			continue
		}
		if err := atomicfile.Write(out.path, out.render); err != nil {
			return err
		}
	}
	return nil
}

// buildTimeout bounds server.build: a build that hangs must not hang CI.
const buildTimeout = 10 * time.Minute

// buildServer runs server.build in the server's directory with the
// server's environment, and shows the end of its output when it fails.
func (p *Plan) buildServer(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Build[0], p.Build[1:]...)
	cmd.Dir, cmd.Env = p.Target.Dir, p.Target.Env
	var out tailWriter
	cmd.Stdout, cmd.Stderr = &out, &out
	if p.Env.Stderr != nil {
		fmt.Fprintf(p.Env.Stderr, "mcp-eval: building the server: %s\n", strings.Join(p.Build, " "))
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("server.build %q failed: %v\n%s", strings.Join(p.Build, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// tailWriter keeps the last 16 KiB written.
type tailWriter struct{ b []byte }

func (t *tailWriter) Write(b []byte) (int, error) {
	t.b = append(t.b, b...)
	if len(t.b) > 16<<10 {
		t.b = t.b[len(t.b)-16<<10:]
	}
	return len(b), nil
}

func (t *tailWriter) String() string { return string(t.b) }

// runInfo fills the run metadata from the Actions environment, when there.
func (p *Plan) runInfo(started time.Time) report.Run {
	get := func(k string) string { v, _ := p.Env.lookup(k); return v }
	r := report.Run{Commit: get("GITHUB_SHA"), Ref: get("GITHUB_REF"), Event: get("GITHUB_EVENT_NAME"), Repository: get("GITHUB_REPOSITORY"),
		HarnessVersion: HarnessVersion, StartedAt: started, FinishedAt: time.Now().UTC()}
	if !commitRE.MatchString(r.Commit) {
		r.Commit = "" // not a commit id: never let the environment break the report
	}
	r.WorkflowRunID, _ = strconv.ParseInt(get("GITHUB_RUN_ID"), 10, 64)
	r.RunAttempt, _ = strconv.Atoi(get("GITHUB_RUN_ATTEMPT"))
	return r
}

var commitRE = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// W3C Trace Context variables a CI system or a parent process sets to
// make the run part of its trace.
const (
	envTraceparent = "TRACEPARENT"
	envTracestate  = "TRACESTATE"
	envBaggage     = "BAGGAGE"
)

// traceParent is the trace context the run was started in (nil: none);
// what is invalid in it is left out with a warning.
func (p *Plan) traceParent() *mcpclient.Parent {
	get := func(k string) string { v, _ := p.Env.lookup(k); return v }
	parent, warnings := mcpclient.ParseParent(get(envTraceparent), get(envTracestate), get(envBaggage))
	for _, w := range warnings {
		p.Env.warnf("%s", w)
	}
	return parent
}

// exportTraces sends the run's spans over OTLP/HTTP when the standard
// OTEL_EXPORTER_OTLP_* variables name an endpoint, under parent when the
// run inherited one. Export is best effort: a collector that is down is a
// warning, never a failed run.
func (p *Plan) exportTraces(ctx context.Context, rep *report.Report, rec *telemetry.Recorder, parent *mcpclient.Parent) {
	cfg, ok, err := otelexport.FromEnv(p.Env.lookup)
	if err != nil {
		p.Env.warnf("OTLP export: %s", err)
		return
	}
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	exp, err := otelexport.New(ctx, cfg)
	if err == nil {
		err = otelexport.Export(ctx, exp, rep, rec.Events(), otelexport.Options{Parent: parent})
		_ = exp.Shutdown(ctx)
	}
	if err != nil {
		p.Env.warnf("OTLP export: %s", err)
	}
}
