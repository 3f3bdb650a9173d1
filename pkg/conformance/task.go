package conformance

import (
	"encoding/json"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// TASK: the tasks extension (SEP-2663, docs/extensions/tasks; checklist
// §1.19). Both checks apply only to a server that advertises the extension.

// taskExtension is the extension identifier.
const taskExtension = "io.modelcontextprotocol/tasks"

// taskCaps declares the extension (and form elicitation, as the harness
// always does).
var taskCaps = json.RawMessage(`{"elicitation":{},"extensions":{"` + taskExtension + `":{}}}`)

// taskAdvertised reports whether capabilities.extensions has the tasks
// extension.
func taskAdvertised(f *check.Facts) bool {
	var ext map[string]json.RawMessage
	_ = json.Unmarshal(f.Capabilities["extensions"], &ext)
	_, ok := ext[taskExtension]
	return ok
}

// taskSkip skips when the extension is not advertised.
func taskSkip(p *check.Pass) bool {
	if !taskAdvertised(p.Env.Facts) {
		p.Skipf("the server does not advertise the %s extension", taskExtension)
		return true
	}
	return false
}

// taskMaxCalls bounds the tools TASK-2 calls looking for a task.
const taskMaxCalls = 3

var TASK1 = &check.Check{
	ID: "TASK-1", Level: check.Must, Transports: check.Both,
	Spec: "SEP-2663 §Capability Negotiation, §Polymorphic Results",
	Doc:  "resultType \"task\" comes only on tools/call and only when this request declared the tasks extension",
	Fix:  "return a task only to requests whose clientCapabilities.extensions has io.modelcontextprotocol/tasks, and only for tools/call",
	Run: func(p *check.Pass) error {
		if taskSkip(p) {
			return nil
		}
		f := p.Env.Facts
		// Not declared: never a task; a server that cannot serve such a
		// client says which capability is missing.
		for i, t := range p.Env.CallableTools() {
			if i >= taskMaxCalls {
				break
			}
			// A plain call of a tool the harness may call: the
			// repetition's, if another check sent the same.
			resp, err := p.Do("tools/call", map[string]any{"name": t.Name, "arguments": progArgs(t.InputSchema, false)})
			if resp == nil {
				return err
			}
			ev := check.FromResponse(resp)
			if rt, _ := resp.ResultType(); rt == "task" {
				p.Failf(ev, "tools/call %s without the tasks extension in clientCapabilities got resultType \"task\"", t.Name)
			}
			if e := resp.Error; e != nil && e.Code == jsonrpc.CodeMissingRequiredClientCapability {
				var d struct {
					Required struct {
						Extensions map[string]json.RawMessage `json:"extensions"`
					} `json:"requiredCapabilities"`
				}
				_ = json.Unmarshal(e.Data, &d)
				if _, ok := d.Required.Extensions[taskExtension]; !ok {
					p.Failf(ev, "tools/call %s got -32021 without data.requiredCapabilities.extensions[%q]", t.Name, taskExtension)
				}
			}
		}
		// Declared: still no task on any other method.
		type req struct {
			method string
			params any
		}
		reqs := []req{{method: "server/discover"}}
		if f.Has("tools") {
			reqs = append(reqs, req{method: "tools/list"})
		}
		if f.Has("resources") {
			reqs = append(reqs, req{method: "resources/list"})
			if len(f.Resources) > 0 {
				reqs = append(reqs, req{method: "resources/read", params: map[string]any{"uri": f.Resources[0].URI}})
			}
		}
		if f.Has("prompts") {
			reqs = append(reqs, req{method: "prompts/list"})
		}
		for _, r := range reqs {
			resp, err := p.Env.Client.Do(p.Ctx, r.method, r.params, mcpclient.WithCapabilities(taskCaps))
			if resp == nil {
				return err
			}
			if rt, _ := resp.ResultType(); rt == "task" {
				p.Failf(check.FromResponse(resp), "%s got resultType \"task\"; only tools/call may return a task", r.method)
			}
		}
		return nil
	},
}

// taskComplete judges a tasks/* answer: a result with resultType complete.
func taskComplete(p *check.Pass, what string, resp *mcpclient.Response, err error) bool {
	ev := check.FromResponse(resp)
	switch {
	case err != nil:
		p.Failf(ev, "%s failed: %v", what, err)
	case resp.Error != nil:
		p.Failf(ev, "%s got error %d (%s), want a result", what, resp.Error.Code, jsonrpc.Clip(resp.Error.Message, 120))
	default:
		if rt, ok := resp.ResultType(); !ok || rt != mcpclient.ResultComplete {
			p.Failf(ev, "%s has resultType %q, want \"complete\"", what, rt)
			return false
		}
		return true
	}
	return false
}

var TASK2 = &check.Check{
	ID: "TASK-2", Level: check.Must, Transports: check.Both,
	Spec: "SEP-2663 §Task Creation, §Task Polling, §Task Cancellation, §Streamable HTTP: Routing Headers",
	Doc:  "a returned task resolves at once through tasks/get, and tasks/get, tasks/update and tasks/cancel answer with resultType \"complete\"",
	Fix:  "create tasks durably before returning them and answer tasks/get, tasks/update and tasks/cancel with resultType \"complete\"",
	Run: func(p *check.Pass) error {
		if taskSkip(p) {
			return nil
		}
		c := p.Env.Client
		taskOpts := func(id string) []mcpclient.CallOption {
			return []mcpclient.CallOption{mcpclient.WithCapabilities(taskCaps), mcpclient.WithHeader(mcpclient.HeaderName, mcpclient.EncodeHeaderValue(id))}
		}
		var taskID, state string
		for i, t := range p.Env.CallableTools() {
			if i >= taskMaxCalls || taskID != "" {
				break
			}
			resp, err := c.Do(p.Ctx, "tools/call", map[string]any{"name": t.Name, "arguments": progArgs(t.InputSchema, false)}, mcpclient.WithCapabilities(taskCaps))
			if resp == nil {
				return err
			}
			if rt, _ := resp.ResultType(); rt != "task" {
				continue
			}
			var ct struct {
				TaskID       string `json:"taskId"`
				RequestState string `json:"requestState"`
			}
			if json.Unmarshal(resp.Result, &ct) != nil || ct.TaskID == "" {
				p.Failf(check.FromResponse(resp), "tools/call %s returned a task without a string taskId", t.Name)
				return nil
			}
			taskID, state = ct.TaskID, ct.RequestState
		}
		if taskID != "" {
			params := map[string]any{"taskId": taskID}
			if state != "" {
				params["requestState"] = state
			}
			resp, err := c.Do(p.Ctx, "tasks/get", params, taskOpts(taskID)...)
			if resp == nil {
				return err
			}
			if taskComplete(p, "tasks/get right after the task was created", resp, err) {
				var got struct {
					TaskID string `json:"taskId"`
					State  string `json:"requestState"`
				}
				_ = json.Unmarshal(resp.Result, &got)
				if got.TaskID != taskID {
					p.Failf(check.FromResponse(resp), "tasks/get for %q returned taskId %q", jsonrpc.Clip(taskID, 60), jsonrpc.Clip(got.TaskID, 60))
				}
				if got.State != "" {
					params["requestState"] = got.State
				}
			}
			resp, err = c.Do(p.Ctx, "tasks/cancel", params, taskOpts(taskID)...)
			if resp == nil {
				return err
			}
			taskComplete(p, "tasks/cancel of the harness's own task", resp, err)
		}
		// Acknowledgments are required even for ids that name no task.
		const bogus = "mcp-eval-no-such-task"
		resp, err := c.Do(p.Ctx, "tasks/update", map[string]any{"taskId": bogus, "inputResponses": map[string]any{}}, taskOpts(bogus)...)
		if resp == nil {
			return err
		}
		taskComplete(p, "tasks/update for an unknown task", resp, err)
		resp, err = c.Do(p.Ctx, "tasks/cancel", map[string]any{"taskId": bogus}, taskOpts(bogus)...)
		if resp == nil {
			return err
		}
		taskComplete(p, "tasks/cancel for an unknown task", resp, err)
		return nil
	},
}

var taskFamily = family{name: "TASK", title: "tasks extension", checks: []*check.Check{TASK1, TASK2}}
