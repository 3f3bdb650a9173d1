package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// Page is one page of a paginated list, kept whole for the conformance layer.
type Page struct {
	Cursor   *string // the cursor sent (nil for the first page)
	Response *Response
}

// ListResult is a whole list followed across pages.
type ListResult struct {
	// Items are the raw entries of every page, in order.
	Items []json.RawMessage
	Pages []Page
	// Truncated is true when MaxPages was reached with a nextCursor left.
	Truncated bool
}

// List follows nextCursor for a paginated method (tools/list, prompts/list,
// resources/list, resources/templates/list) and gathers the entries under
// key. An empty-string cursor is a valid cursor, not the end
// (pagination.mdx); only an absent nextCursor ends the list.
func (c *Client) List(ctx context.Context, method, key string, opts ...CallOption) (*ListResult, error) {
	out := &ListResult{}
	var cursor *string
	seen := map[string]bool{}
	for page := 0; ; page++ {
		if page >= c.cfg.MaxPages {
			out.Truncated = true
			c.note("%s: stopped after %d pages with a cursor left", method, c.cfg.MaxPages)
			return out, nil
		}
		var params map[string]any
		if cursor != nil {
			params = map[string]any{"cursor": *cursor}
		}
		resp, err := c.call(ctx, method, params, opts...)
		if transport.GatewayRefused(err) {
			// A proxy answered a page in the server's stead: the walk
			// shows nothing of the list, not a list that ended there.
			return nil, err
		}
		out.Pages = append(out.Pages, Page{Cursor: cursor, Response: resp})
		if err != nil {
			return out, err
		}
		// One pass over the page, split by member: a page of 1,000 tools
		// is about 370 KB, and the cursor was found by a second pass.
		var items map[string]json.RawMessage
		if err := json.Unmarshal(resp.Result, &items); err != nil {
			return out, fmt.Errorf("%s: result is not a JSON object: %w", method, err)
		}
		var entries []json.RawMessage
		if raw, ok := items[key]; ok {
			if err := json.Unmarshal(raw, &entries); err != nil {
				return out, fmt.Errorf("%s: %q is not an array: %w", method, key, err)
			}
		}
		out.Items = append(out.Items, entries...)
		// Exactly "nextCursor": decoding into a struct also took any other
		// case of it ("NextCursor"), which is no member of the spec's.
		var next *string
		if raw, ok := items["nextCursor"]; ok {
			_ = json.Unmarshal(raw, &next)
		}
		if next == nil {
			return out, nil
		}
		if seen[*next] {
			// A cursor seen before would loop forever.
			c.note("%s: nextCursor %q repeats an earlier cursor; stopped", method, *next)
			out.Truncated = true
			return out, nil
		}
		seen[*next] = true
		cursor = next
	}
}

// Tools is the result of ListTools.
type Tools struct {
	// Tools are the usable tools, in the server's order.
	Tools []Tool
	// Dropped are tools whose definition is invalid and that a client MUST
	// NOT use (TOOL-6), with the reason.
	Dropped []DroppedTool
	List    *ListResult
}

// DroppedTool is a tool left out of what later layers see.
type DroppedTool struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// ListTools lists every tool, drops those with invalid x-mcp-header
// declarations (streamable-http.mdx §Schema Extension: the client MUST
// exclude them) and remembers the declarations for Mcp-Param-* headers.
func (c *Client) ListTools(ctx context.Context, opts ...CallOption) (*Tools, error) {
	lr, err := c.List(ctx, "tools/list", "tools", opts...)
	if lr == nil {
		return nil, err // a gateway answered: no listing at all
	}
	out := &Tools{List: lr}
	if err != nil {
		return out, err
	}
	decl := map[string][]HeaderParam{}
	for _, raw := range lr.Items {
		var t Tool
		if err := json.Unmarshal(raw, &t); err != nil {
			out.Dropped = append(out.Dropped, DroppedTool{Name: nameOf(raw), Reason: "not a valid Tool object: " + err.Error()})
			continue
		}
		t.Raw = raw
		hp, err := HeaderParams(t.InputSchema)
		if err != nil {
			out.Dropped = append(out.Dropped, DroppedTool{Name: t.Name, Reason: err.Error() + " (TOOL-6)"})
			continue
		}
		decl[t.Name] = hp
		out.Tools = append(out.Tools, t)
	}
	c.mu.Lock()
	c.headerFor = decl
	c.mu.Unlock()
	return out, nil
}

func nameOf(raw json.RawMessage) string {
	var v struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(raw, &v)
	return v.Name
}

// ListResources, ListResourceTemplates and ListPrompts follow every page.
func (c *Client) ListResources(ctx context.Context, opts ...CallOption) ([]Resource, *ListResult, error) {
	return listOf[Resource](ctx, c, "resources/list", "resources", opts)
}

func (c *Client) ListResourceTemplates(ctx context.Context, opts ...CallOption) ([]ResourceTemplate, *ListResult, error) {
	return listOf[ResourceTemplate](ctx, c, "resources/templates/list", "resourceTemplates", opts)
}

func (c *Client) ListPrompts(ctx context.Context, opts ...CallOption) ([]Prompt, *ListResult, error) {
	return listOf[Prompt](ctx, c, "prompts/list", "prompts", opts)
}

func listOf[T any](ctx context.Context, c *Client, method, key string, opts []CallOption) ([]T, *ListResult, error) {
	lr, err := c.List(ctx, method, key, opts...)
	if err != nil {
		return nil, lr, err
	}
	out := make([]T, 0, len(lr.Items))
	for _, raw := range lr.Items {
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return out, lr, fmt.Errorf("%s: an entry is not valid: %w", method, err)
		}
		setRaw(&v, raw)
		out = append(out, v)
	}
	return out, lr, nil
}

func setRaw(v any, raw json.RawMessage) {
	switch x := v.(type) {
	case *Resource:
		x.Raw = raw
	case *ResourceTemplate:
		x.Raw = raw
	case *Prompt:
		x.Raw = raw
	}
}
