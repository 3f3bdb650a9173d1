package refserver

import (
	"context"
	"encoding/json"
)

// maxResourceSubscriptions bounds the URIs one listen request may name.
const maxResourceSubscriptions = 100

type teardownKey struct{}

// withTeardown attaches a channel whose closing asks long-lived requests on
// this transport to end gracefully (stdio uses it on shutdown). Cancelling
// the context instead ends them abruptly, with no response.
func withTeardown(ctx context.Context, ch <-chan struct{}) context.Context {
	return context.WithValue(ctx, teardownKey{}, ch)
}

func teardownFrom(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(teardownKey{}).(<-chan struct{})
	return ch // nil blocks forever in a select, which is what we want
}

// listen answers subscriptions/listen. It first acknowledges the subset of
// the filter it honours (SUB-2), then holds the request open. Nothing this
// server serves ever changes, so no list_changed or resources/updated
// notification ever follows (and none of a type the client did not ask
// for, SUB-3). The stream ends when the client goes away (no response) or
// when the server tears it down (closing result, SUB-6).
func (s *Server) listen(ctx context.Context, r *request) (map[string]any, *Error) {
	raw, ok := r.params["notifications"]
	if !ok {
		return nil, errorf(CodeInvalidParams, "Invalid params: notifications is required")
	}
	var filter struct {
		ToolsListChanged      bool     `json:"toolsListChanged"`
		PromptsListChanged    bool     `json:"promptsListChanged"`
		ResourcesListChanged  bool     `json:"resourcesListChanged"`
		ResourceSubscriptions []string `json:"resourceSubscriptions"`
	}
	if err := json.Unmarshal(raw, &filter); err != nil {
		return nil, errorf(CodeInvalidParams, "Invalid params: notifications must be a SubscriptionFilter: %v", err)
	}
	if len(filter.ResourceSubscriptions) > maxResourceSubscriptions {
		return nil, errorf(CodeInvalidParams, "Invalid params: at most %d resourceSubscriptions per listen request", maxResourceSubscriptions)
	}
	honoured := map[string]any{}
	if filter.ToolsListChanged {
		honoured["toolsListChanged"] = true // capabilities.tools.listChanged
	}
	if filter.ResourcesListChanged {
		honoured["resourcesListChanged"] = true // capabilities.resources.listChanged
	}
	// promptsListChanged is left out: capabilities.prompts has no listChanged.
	if filter.ResourceSubscriptions != nil {
		uris := []string{}
		for _, uri := range filter.ResourceSubscriptions {
			if len(uri) <= maxURILen && knownResource(uri) {
				uris = append(uris, uri)
			}
		}
		honoured["resourceSubscriptions"] = uris
	}
	// SUB-2/SUB-4: the subscription id is the listen request's id, with its JSON type.
	subID := json.RawMessage(r.id)
	ack := Notification{Method: "notifications/subscriptions/acknowledged", Params: map[string]any{
		"_meta":         map[string]any{metaSubscriptionID: subID},
		"notifications": honoured,
	}}
	if r.notify(ack) != nil {
		return nil, nil
	}
	select {
	case <-ctx.Done():
		return nil, nil
	case <-s.closing:
	case <-teardownFrom(ctx):
	}
	return map[string]any{"_meta": map[string]any{metaSubscriptionID: subID}}, nil
}
