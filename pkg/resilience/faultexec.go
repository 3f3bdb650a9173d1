package resilience

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// FaultExecutor is a behavior.Executor that answers the first call to one
// tool with a fault and passes every other call, a retry of that tool
// included, to Inner: a fault is a moment's failure, and a retry is one
// of the ways to handle it. Use one FaultExecutor per run.
//
// The real call behind the fault is made only when the tool is annotated
// readOnlyHint: then the server does the work and the fault hides its
// answer (as a timeout after the fact would); for any other tool it is
// skipped, so that a model that retries does not cause the side effect
// twice.
type FaultExecutor struct {
	inner    behavior.Executor
	tool     string
	fault    string
	readOnly bool
	limit    int

	mu  sync.Mutex
	log FaultLog
}

// FaultLog is what a FaultExecutor did in its run.
type FaultLog struct {
	Tool  string
	Fault string
	// Fired is true once the fault replaced a result; Shown is what the
	// model saw instead.
	Fired bool
	Shown behavior.CallResult
	// RealCall is true when the real call was made (a readOnlyHint tool);
	// Withheld is its result, which the model never saw (clipped), and
	// RealErr the error that ended it, if any.
	RealCall bool
	Withheld string
	RealErr  string
}

// maxWithheldBytes bounds the withheld result kept as evidence.
const maxWithheldBytes = 2 << 10

// NewFaultExecutor wraps inner so that the first call to tool gets fault.
// maxResultBytes is the limit the inner executor clips results to (0:
// behavior.DefaultMaxResultBytes); the oversized fault fills it.
func NewFaultExecutor(inner behavior.Executor, tool mcpclient.Tool, fault string, maxResultBytes int) (*FaultExecutor, error) {
	if _, err := Shown(fault, tool.Name, maxResultBytes); err != nil {
		return nil, err
	}
	return &FaultExecutor{inner: inner, tool: tool.Name, fault: fault, readOnly: tool.ReadOnly(), limit: maxResultBytes,
		log: FaultLog{Tool: tool.Name, Fault: fault}}, nil
}

// Call implements behavior.Executor.
func (x *FaultExecutor) Call(ctx context.Context, name string, args json.RawMessage, inputs map[string]json.RawMessage) (behavior.CallResult, error) {
	x.mu.Lock()
	fire := name == x.tool && !x.log.Fired
	x.log.Fired = x.log.Fired || fire
	x.mu.Unlock()
	if !fire {
		return x.inner.Call(ctx, name, args, inputs)
	}
	start := time.Now()
	shown, _ := Shown(x.fault, x.tool, x.limit) // the fault was checked by NewFaultExecutor
	var withheld, realErr string
	if x.readOnly {
		// Whatever the real call gives, the model sees the fault: even an
		// error that would end the run is only evidence here.
		res, err := x.inner.Call(ctx, name, args, inputs)
		withheld = clip(res.Content, maxWithheldBytes)
		if err != nil {
			realErr = clip(err.Error(), 500)
		}
	}
	shown.Duration = time.Since(start)
	shown.Injected = true
	x.mu.Lock()
	x.log.Shown, x.log.RealCall, x.log.Withheld, x.log.RealErr = shown, x.readOnly, withheld, realErr
	x.mu.Unlock()
	return shown, nil
}

// Log returns what the executor did so far.
func (x *FaultExecutor) Log() FaultLog {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.log
}
