package refserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// More multi round-trip requests besides send_email, for conformance tests
// that must judge every item of a server with several (MRTR-2..MRTR-7): a
// fault on the second or third item only, a requestState on a later item
// only, or thousands of items. Each item asks the user one form question
// and reports the answer; an item tool is annotated readOnlyHint: true, so
// a client may call it without permission. None exists unless
// Options.MRTRItems lists it.

// MRTRItem is one extra multi round-trip tool or prompt.
type MRTRItem struct {
	// Kind is "tool" or "prompt".
	Kind string
	// Name is the tool or prompt name; it must not be one the server
	// already has.
	Name string
	// Stateless items send inputRequests without a requestState: the
	// retry's inputResponses are all they need.
	Stateless bool
	// Break names the one MRTR rule (MRTR-2 … MRTR-7, CACHE-2) this item
	// breaks, the way Options.Break breaks it on send_email; "" for a
	// correct item.
	Break string
}

// mrtrItemBreaks are the rules an item can break.
var mrtrItemBreaks = map[string]bool{"MRTR-2": true, "MRTR-3": true, "MRTR-4": true, "MRTR-5": true, "MRTR-6": true, "MRTR-7": true, "CACHE-2": true}

// maxMRTRItems bounds ParseMRTRItems, so that a typo cannot exhaust memory.
const maxMRTRItems = 100_000

// ParseMRTRItems reads the example server's --mrtr-items: comma-separated
// KIND:NAME[:FLAG…], KIND "tool" or "prompt", FLAG "stateless", a rule id
// to break (MRTR-2 … MRTR-7, CACHE-2), or xN for N copies named NAME_1 … NAME_N.
// Example: "tool:ask_a,prompt:ask_b:MRTR-4,tool:ask_c:stateless".
func ParseMRTRItems(spec string) ([]MRTRItem, error) {
	var out []MRTRItem
	for _, part := range strings.Split(spec, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		fields := strings.Split(part, ":")
		if len(fields) < 2 || (fields[0] != "tool" && fields[0] != "prompt") || !toolNameOK(fields[1]) {
			return nil, fmt.Errorf("%q: want KIND:NAME[:FLAG…] with KIND tool or prompt and NAME of [A-Za-z0-9_.-]", part)
		}
		it, copies := MRTRItem{Kind: fields[0], Name: fields[1]}, 0
		for _, f := range fields[2:] {
			switch {
			case f == "stateless":
				it.Stateless = true
			case mrtrItemBreaks[f]:
				it.Break = f
			case strings.HasPrefix(f, "x"):
				n, err := strconv.Atoi(f[1:])
				if err != nil || n < 1 || n > maxMRTRItems {
					return nil, fmt.Errorf("%q: copies %q: want x1 … x%d", part, f, maxMRTRItems)
				}
				copies = n
			default:
				return nil, fmt.Errorf("%q: unknown flag %q (stateless, MRTR-2 … MRTR-7, CACHE-2 or xN)", part, f)
			}
		}
		if copies == 0 {
			out = append(out, it)
		}
		for i := 1; i <= copies; i++ {
			c := it
			c.Name = fmt.Sprintf("%s_%d", it.Name, i)
			out = append(out, c)
		}
		if len(out) > maxMRTRItems {
			return nil, fmt.Errorf("more than %d MRTR items", maxMRTRItems)
		}
	}
	return out, nil
}

// toolNameOK is TOOL-5's name rule.
func toolNameOK(name string) bool {
	if name == "" || len(name) > 128 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// mrtrItemToolDef is the served definition of an item tool.
func mrtrItemToolDef(name string) map[string]any {
	return map[string]any{
		"name":        name,
		"title":       "Confirm (" + name + ")",
		"description": "Asks the user a yes/no question (form elicitation through a multi round-trip request) and reports the answer. Reads and changes nothing.",
		"inputSchema": map[string]any{
			"type":                 "object",
			"properties":           map[string]any{"topic": map[string]any{"type": "string", "maxLength": 100, "description": "What to ask about"}},
			"additionalProperties": false,
		},
		"annotations": map[string]any{"title": "Confirm (" + name + ")", "readOnlyHint": true, "idempotentHint": true, "openWorldHint": false},
	}
}

// mrtrItemTools builds the item tools, in Options.MRTRItems order, after
// the server's own.
func (s *Server) mrtrItemTools() []*tool {
	var out []*tool
	for _, it := range s.opts.MRTRItems {
		if it.Kind != "tool" {
			continue
		}
		def := mrtrItemToolDef(it.Name)
		out = append(out, &tool{name: it.Name, def: def, input: lazySchema(def["inputSchema"]), run: func(_ context.Context, r *request, args map[string]any) (map[string]any, *Error) {
			return s.askItem(it, r, args, func(answer string) map[string]any {
				return toolText(fmt.Sprintf("%s: the user answered %q.", it.Name, answer))
			})
		}})
	}
	return out
}

// promptList is what prompts/list serves: the server's prompts, then the
// item prompts.
func (s *Server) promptList() []any {
	out := promptList
	for _, it := range s.opts.MRTRItems {
		if it.Kind == "prompt" {
			out = append(out[:len(out):len(out)], map[string]any{"name": it.Name, "title": "Confirm (" + it.Name + ")", "description": "Asks the user a yes/no question first (multi round-trip request)."})
		}
	}
	return out
}

// promptItem is the item prompt of that name, if any.
func (s *Server) promptItem(name string) (MRTRItem, bool) {
	for _, it := range s.opts.MRTRItems {
		if it.Kind == "prompt" && it.Name == name {
			return it, true
		}
	}
	return MRTRItem{}, false
}

// getItemPrompt answers prompts/get for an item prompt.
func (s *Server) getItemPrompt(it MRTRItem, r *request) (map[string]any, *Error) {
	args := map[string]any{}
	if raw, ok := r.params["arguments"]; ok && string(raw) != "null" {
		var a map[string]string
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, errorf(CodeInvalidParams, "Invalid params: arguments must be an object of strings")
		}
		for k, v := range a {
			args[k] = v
		}
	}
	return s.askItem(it, r, args, func(answer string) map[string]any {
		return map[string]any{
			"description": "Confirmation " + it.Name,
			"messages":    []any{map[string]any{"role": "user", "content": textContent(fmt.Sprintf("The user answered %q to %s.", answer, it.Name))}},
		}
	})
}

// askItem is an item's multi round-trip flow: the first request asks, a
// retry with the answer completes with done(action). It follows send_email
// (mrtr.go) rule for rule, except for the one rule it.Break names.
func (s *Server) askItem(it MRTRItem, r *request, args map[string]any, done func(action string) map[string]any) (map[string]any, *Error) {
	broken := func(id string) bool { return it.Break == id }
	digest := argsDigest(args)
	token, hasState, err := r.stringParam("requestState")
	if err != nil {
		return nil, err
	}
	_, hasAnswers := r.params["inputResponses"]
	if hasState || (it.Stateless && hasAnswers) {
		if broken("MRTR-5") {
			return nil, errorf(CodeInvalidParams, "Invalid params: retries are not accepted")
		}
		if hasState {
			if verr := s.openState(token, r.method, it.Name, digest); verr != nil {
				if broken("MRTR-7") {
					return map[string]any{"resultType": "complete"}, nil
				}
				return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: requestState rejected: " + verr.Error()}
			}
		}
		answer, perr := confirmResponse(r.params["inputResponses"])
		if perr != nil {
			return nil, perr
		}
		if answer != nil {
			return done(answer.Action), nil
		}
		if broken("MRTR-6") {
			return nil, errorf(CodeInvalidParams, "Invalid params: inputResponses.%s is required", confirmKey)
		}
	}
	if !formElicitationDeclared(r) && !broken("MRTR-4") {
		return nil, &Error{
			Code:    CodeMissingRequiredClientCapability,
			Message: "Server requires the elicitation capability (form mode) for " + it.Name,
			Data:    map[string]any{"requiredCapabilities": map[string]any{"elicitation": map[string]any{}}},
		}
	}
	ask := map[string]any{
		"method": "elicitation/create",
		"params": map[string]any{
			"mode":    "form",
			"message": "Go ahead with " + it.Name + "?",
			"requestedSchema": map[string]any{
				"type":       "object",
				"properties": map[string]any{"confirm": map[string]any{"type": "boolean", "title": "Go ahead?", "default": false}},
				"required":   []any{"confirm"},
			},
		},
	}
	result := map[string]any{"resultType": "input_required", "inputRequests": map[string]any{confirmKey: ask}}
	if !it.Stateless {
		result["requestState"] = s.sealState(requestState{Version: 1, Method: r.method, Tool: it.Name, Args: digest, Expires: s.opts.Now().Add(s.opts.StateTTL).Unix()})
	}
	if broken("CACHE-2") {
		result["ttlMs"], result["cacheScope"] = 60000, "public" // as send_email's CACHE-2 mutant
	}
	switch {
	case broken("MRTR-2"):
		delete(result, "inputRequests")
		delete(result, "requestState")
	case broken("MRTR-3"):
		ask["jsonrpc"], ask["id"] = "2.0", 7
	}
	return result, nil
}
