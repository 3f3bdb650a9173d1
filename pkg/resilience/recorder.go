package resilience

import (
	"context"
	"sync"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
)

// recorder wraps a model for one run and keeps its last request and
// reply: the agent loop sends the whole conversation every turn, so the
// two together are the run exactly as the model lived it, with every
// tool result whole (the trajectory clips them for the report).
type recorder struct {
	llm.Provider

	mu     sync.Mutex
	last   *llm.Request
	reply  *llm.Response
	served string
}

// Complete implements llm.Provider.
func (r *recorder) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	resp, err := r.Provider.Complete(ctx, req)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last, r.reply = req, nil
	if err == nil && resp != nil {
		r.reply = resp
		if resp.ServedModel != "" {
			r.served = clip(resp.ServedModel, 200)
		}
	}
	return resp, err
}

// Transcript is the conversation of the run: the last request's messages
// and the reply to it (absent when that call failed).
func (r *recorder) Transcript() []llm.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		return nil
	}
	msgs := append([]llm.Message(nil), r.last.Messages...)
	if r.reply != nil {
		m := r.reply.Message
		m.Role = llm.Assistant
		msgs = append(msgs, m)
	}
	return msgs
}

// Served is the model the provider last said it served ("" if none).
func (r *recorder) Served() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.served
}
