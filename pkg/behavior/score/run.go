package score

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior/match"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// NoTool is the confusion-matrix class of "no tool was called", as the
// report names it.
const NoTool = report.NoTool

// Call is one tool call a model made, in the order it made them (across
// all turns of the run; parallel calls in their listed order).
type Call struct {
	// Name is the MCP tool name (already mapped back from a provider's).
	Name string `json:"name"`
	// Arguments is the JSON object the model sent; nil when its JSON did
	// not parse (ParseError says why).
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	ParseError string          `json:"parseError,omitempty"`
	// IsError is true when the server (or a stub) answered the call with
	// an error result. A call to the same tool right after it is a retry:
	// the two count as one step of a sequence, and the first attempt's
	// arguments are the ones scored.
	IsError bool `json:"isError,omitempty"`
}

// TaskVerdict is the judge's verdict on a run against the case's rubric.
type TaskVerdict string

const (
	NotJudged        TaskVerdict = ""             // no rubric, or no judge configured
	TaskPass         TaskVerdict = "pass"         // the judge says the task was done
	TaskFail         TaskVerdict = "fail"         // the judge says it was not
	TaskInconclusive TaskVerdict = "inconclusive" // the judge did not answer usably: not a fail
)

// ArgRef names one expected argument: the step (0 for an expect_tool
// case) and the argument's name.
type ArgRef struct {
	Step int
	Arg  string
}

// RunOutcome is what one run of one case against one model produced: the
// input of Evaluate. The caller (the agent loop) fills it from the run's
// trajectory.
type RunOutcome struct {
	Case *golden.Case
	// Calls are every tool call of the run, in order.
	Calls []Call
	// Err is set when the harness or provider could not complete the run
	// (a 5xx after every retry, a server that died): the run is an Error,
	// counted in the pass rate's N and not in its K, and in no other score.
	Err string
	// Task is the judge's verdict; NotJudged leaves task completion out.
	Task TaskVerdict
	// Judged are a judge's verdicts on arguments the lexical matcher left
	// Uncertain (match.Match or match.NoMatch). Entries for arguments that
	// were not Uncertain are ignored: a judge never overrides a
	// deterministic verdict.
	Judged map[ArgRef]match.Verdict
}

// Status is a run's overall outcome.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	// Uncertain: nothing failed, but an argument is still Uncertain (no
	// judge, or the judge was not asked). Not passed: in N, not in K.
	Uncertain Status = "uncertain"
	// Inconclusive: nothing failed, but the judge did not answer. Left
	// out of N: a judge outage is not the server's fault.
	Inconclusive Status = "inconclusive"
	// Error: the harness or provider could not complete the run. In N,
	// not in K.
	Error Status = "error"
)

// StepOutcome is how one expected step of a case went.
type StepOutcome struct {
	// Tool is the tool the step expects; Called is the tool called at the
	// step's position (NoTool when the model stopped short).
	Tool   string `json:"tool"`
	Called string `json:"called"`
	// Selected is Tool == Called.
	Selected bool `json:"selected"`
	// Checked is true when the step's arguments were compared: the step
	// was selected and the case expects arguments for it. Only checked
	// steps count towards argument correctness.
	Checked bool             `json:"checked"`
	Args    match.ArgsResult `json:"args"`
}

// Cell is one count of the confusion matrix: expected class × chosen
// class (a tool name or NoTool).
type Cell struct {
	Expected string `json:"expected"`
	Chosen   string `json:"chosen"`
	Count    int    `json:"count"`
}

// Run is one evaluated run: what each score sees of it.
type Run struct {
	Case     string `json:"case"`
	Kind     string `json:"kind"`
	Negative bool   `json:"negative"`
	Chain    bool   `json:"chain"`
	Status   Status `json:"status"`
	// Expected is the first expected tool (NoTool for a negative case);
	// Chosen is the first tool the model called (NoTool for none).
	Expected string `json:"expected"`
	Chosen   string `json:"chosen"`
	// Selected: a positive case's first call was its (first) expected
	// tool. OverTriggered: a negative case called any tool. SequenceOK: a
	// chain's calls were exactly its steps, in order (retries after an
	// error result folded in).
	Selected      bool          `json:"selected"`
	OverTriggered bool          `json:"overTriggered"`
	SequenceOK    bool          `json:"sequenceOK"`
	Steps         []StepOutcome `json:"steps"`
	Task          TaskVerdict   `json:"task,omitempty"`
	// Cells are this run's contributions to the confusion matrix: one per
	// expected step (one for a negative case); none for an Error run.
	Cells []Cell `json:"cells"`
	// Reasons say why the run did not pass, for the report's notes. They
	// quote model output, clipped: untrusted text.
	Reasons []string `json:"reasons"`
	Err     string   `json:"error,omitempty"`
}

// Evaluate scores one run against its case. It is a pure function: the
// same outcome always gives the same Run. It asks no judge; to resolve
// Uncertain arguments, collect them with Run.UncertainArgs, ask a judge,
// and Evaluate again with RunOutcome.Judged filled.
func Evaluate(o RunOutcome) Run {
	c := o.Case
	switch {
	case c == nil:
		return Run{Status: Error, Err: "no case", Expected: NoTool, Chosen: NoTool, Steps: []StepOutcome{}, Cells: []Cell{}, Reasons: []string{"error: no case"}}
	case !c.Negative && len(c.Steps()) == 0:
		// Only a hand-built Case gets here: the loader refuses a case
		// that expects nothing.
		msg := fmt.Sprintf("case %q expects no tool and is not negative", c.ID)
		return Run{Case: c.ID, Kind: c.Kind, Status: Error, Err: msg, Expected: NoTool, Chosen: NoTool, Steps: []StepOutcome{}, Cells: []Cell{}, Reasons: []string{"error: " + msg}}
	}
	r := Run{Case: c.ID, Kind: c.Kind, Negative: c.Negative, Chain: c.Chain(),
		Task: o.Task, Steps: []StepOutcome{}, Cells: []Cell{}, Reasons: []string{}}
	if r.Kind == "" {
		r.Kind = golden.Hard
	}
	groups := groupCalls(o.Calls)
	r.Chosen = NoTool
	if len(groups) > 0 {
		r.Chosen = className(groups[0].Name)
	}
	if o.Err != "" {
		r.Status, r.Err = Error, o.Err
		r.Expected = expectedFirst(c)
		r.Reasons = append(r.Reasons, "error: "+clip(o.Err))
		return r
	}
	if c.Negative {
		r.Expected = NoTool
		r.OverTriggered = len(o.Calls) > 0
		r.Cells = append(r.Cells, Cell{Expected: NoTool, Chosen: r.Chosen, Count: 1})
		if r.OverTriggered {
			r.Reasons = append(r.Reasons, fmt.Sprintf("expected no tool call, called %s", names(groups)))
		}
	} else {
		r.evaluateSteps(c, groups, o.Judged)
	}
	switch o.Task {
	case TaskFail:
		r.Reasons = append(r.Reasons, "the judge found the task not done")
	case TaskInconclusive:
		r.Reasons = append(r.Reasons, "the judge did not give a usable verdict")
	}
	r.Status = r.status()
	return r
}

func (r *Run) evaluateSteps(c *golden.Case, groups []Call, judged map[ArgRef]match.Verdict) {
	steps := c.Steps()
	r.Expected = steps[0].Tool
	r.Selected = r.Chosen == r.Expected
	if !r.Selected {
		chose := "called " + r.Chosen
		if r.Chosen == NoTool {
			chose = "called no tool"
		}
		r.Reasons = append(r.Reasons, fmt.Sprintf("expected %s first, %s", r.Expected, chose))
	}
	for i, step := range steps {
		so := StepOutcome{Tool: step.Tool, Called: NoTool, Args: match.ArgsResult{Verdict: match.Match, Results: []match.Result{}}}
		if i < len(groups) {
			so.Called = className(groups[i].Name)
		}
		so.Selected = so.Called == step.Tool
		if so.Selected && len(step.Args) > 0 {
			so.Checked = true
			so.Args = resolve(match.Args(step, groups[i].Arguments), i, judged)
			for _, reason := range so.Args.Reasons() {
				r.Reasons = append(r.Reasons, stepLabel(c, i, step.Tool)+reason)
			}
		}
		r.Steps = append(r.Steps, so)
		r.Cells = append(r.Cells, Cell{Expected: step.Tool, Chosen: so.Called, Count: 1})
		if !c.Chain() {
			break
		}
	}
	if c.Chain() {
		r.SequenceOK = len(groups) == len(steps)
		for i := range steps {
			r.SequenceOK = r.SequenceOK && r.Steps[i].Selected
		}
		if !r.SequenceOK {
			r.Reasons = append(r.Reasons, fmt.Sprintf("expected the sequence %s, got %s", strings.Join(c.ExpectSequence, " → "), names(groups)))
		}
	}
}

// resolve applies a judge's verdicts to the Uncertain arguments only.
func resolve(a match.ArgsResult, step int, judged map[ArgRef]match.Verdict) match.ArgsResult {
	if len(judged) == 0 {
		return a
	}
	for i, res := range a.Results {
		v, ok := judged[ArgRef{Step: step, Arg: res.Arg}]
		if res.Verdict != match.Uncertain || !ok || (v != match.Match && v != match.NoMatch) {
			continue
		}
		a.Results[i].Verdict, a.Results[i].Tier = v, match.TierJudge
		if v == match.Match {
			a.Results[i].Reason = ""
		} else {
			a.Results[i].Reason += "; the judge says they differ"
		}
	}
	a.Verdict = match.Combine(a.Results)
	return a
}

// status: any failed check fails the run; otherwise an undecided
// argument makes it Uncertain, an unanswered judge Inconclusive.
func (r *Run) status() Status {
	failed := r.Task == TaskFail ||
		(r.Negative && r.OverTriggered) ||
		(!r.Negative && !r.Selected) ||
		(r.Chain && !r.SequenceOK)
	uncertain := false
	for _, s := range r.Steps {
		switch s.Args.Verdict {
		case match.NoMatch:
			failed = true
		case match.Uncertain:
			uncertain = true
		}
	}
	switch {
	case failed:
		return Fail
	case uncertain:
		return Uncertain
	case r.Task == TaskInconclusive:
		return Inconclusive
	}
	return Pass
}

// UncertainArgs lists the arguments a judge must decide, with what was
// expected and what the model passed.
func (r *Run) UncertainArgs() map[ArgRef]match.Result {
	out := map[ArgRef]match.Result{}
	for i, s := range r.Steps {
		for _, res := range s.Args.Results {
			if res.Verdict == match.Uncertain {
				out[ArgRef{Step: i, Arg: res.Arg}] = res
			}
		}
	}
	return out
}

// groupCalls folds retries: a call answered with an error, followed by a
// call to the same tool, is one step with it. Each group is represented
// by its first call.
func groupCalls(calls []Call) []Call {
	var out []Call
	for i, call := range calls {
		if i > 0 && calls[i-1].IsError && calls[i-1].Name == call.Name {
			continue
		}
		out = append(out, call)
	}
	return out
}

func expectedFirst(c *golden.Case) string {
	if steps := c.Steps(); len(steps) > 0 {
		return steps[0].Tool
	}
	return NoTool
}

func stepLabel(c *golden.Case, i int, tool string) string {
	if !c.Chain() {
		return tool + " "
	}
	return fmt.Sprintf("step %d (%s) ", i+1, tool)
}

// names renders the called tools: "a → b", or "no tool".
func names(calls []Call) string {
	if len(calls) == 0 {
		return "no tool"
	}
	parts := make([]string, 0, len(calls))
	for i, c := range calls {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("… (%d calls)", len(calls)))
			break
		}
		parts = append(parts, clip(c.Name))
	}
	return strings.Join(parts, " → ")
}

// className is a called tool's name as a matrix class: clipped, since a
// model can invent any name; an empty name is still a call, not NoTool.
func className(name string) string {
	if name == "" {
		return `""`
	}
	r := []rune(name)
	if len(r) > 128 {
		return string(r[:128]) + "…"
	}
	return name
}

func clip(s string) string {
	const n = 200
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
