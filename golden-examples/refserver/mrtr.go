package refserver

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// Multi round-trip requests (basic/patterns/mrtr.mdx). send_email asks the
// user to confirm through an elicitation embedded in an InputRequiredResult;
// the client retries tools/call with inputResponses and the requestState it
// was given. The server keeps nothing between the two requests: everything it
// needs is in the retry (STATE-1, STATE-2).

// confirmKey is the inputRequests key; it is unique within the request (MRTR-3).
const confirmKey = "confirm"

// maxRequestStateLen bounds the requestState read from the client.
const maxRequestStateLen = 2048

// requestState is the integrity-protected payload of an issued requestState.
// mrtr.mdx asks for an expiry and an identifier of the originating request;
// there is no authenticated principal on this server to bind to.
type requestState struct {
	Version int    `json:"v"`
	Method  string `json:"m"`
	Tool    string `json:"t"`
	Args    string `json:"a"`   // hex SHA-256 of the canonical arguments
	Expires int64  `json:"exp"` // Unix seconds
}

// sealState returns base64url(payload) "." base64url(HMAC-SHA256(payload)).
func (s *Server) sealState(st requestState) string {
	payload, _ := json.Marshal(st)
	return base64.RawURLEncoding.EncodeToString(payload) + "." + s.stateMAC(payload)
}

func (s *Server) stateMAC(payload []byte) string {
	m := hmac.New(sha256.New, s.stateKey)
	m.Write(payload)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// openState verifies a requestState against the request it came back on.
// MRTR-7: requestState is attacker-controlled and decides whether an email
// is queued, so anything that fails verification is rejected.
func (s *Server) openState(token, method, toolName, argsDigest string) error {
	if len(token) > maxRequestStateLen {
		return fmt.Errorf("too long")
	}
	enc, mac, ok := strings.Cut(token, ".")
	payload, err := base64.RawURLEncoding.DecodeString(enc)
	if !ok || err != nil || !hmac.Equal([]byte(mac), []byte(s.stateMAC(payload))) {
		return fmt.Errorf("integrity check failed")
	}
	var st requestState
	if err := json.Unmarshal(payload, &st); err != nil || st.Version != 1 {
		return fmt.Errorf("unreadable")
	}
	if st.Method != method || st.Tool != toolName || st.Args != argsDigest {
		return fmt.Errorf("issued for a different request")
	}
	if s.opts.Now().Unix() > st.Expires {
		return fmt.Errorf("expired")
	}
	return nil
}

// argsDigest hashes the canonical JSON of the arguments (encoding/json sorts
// map keys), binding a requestState to the exact call it was issued for.
func argsDigest(args map[string]any) string {
	canonical, _ := marshal(args)
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}

// elicitResult is the part of an ElicitResult send_email reads.
type elicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
}

func (s *Server) sendEmail(_ context.Context, r *request, args map[string]any) (map[string]any, *Error) {
	to, subject := args["to"].(string), args["subject"].(string)
	digest := argsDigest(args)

	token, hasState, err := r.stringParam("requestState")
	if err != nil {
		return nil, err
	}
	if hasState {
		if e := s.mutRetry(); e != nil {
			return nil, e
		}
		if verr := s.openState(token, r.method, "send_email", digest); verr != nil {
			if res := s.mutTamperedState(); res != nil {
				return res, nil
			}
			return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: requestState rejected: " + verr.Error()}
		}
		answer, perr := confirmResponse(r.params["inputResponses"])
		if perr != nil {
			return nil, perr
		}
		if answer != nil {
			confirmed, _ := answer.Content["confirm"].(bool)
			switch {
			case answer.Action == "accept" && confirmed:
				return toolText(fmt.Sprintf("Queued email to %s with subject %q. (Demo server: nothing was actually sent.)", to, subject)), nil
			case answer.Action == "accept" && answer.Content["confirm"] == nil:
				// Accepted an empty form: the answer we need is missing,
				// so ask again below (MRTR-6).
			case answer.Action == "accept":
				return toolText(fmt.Sprintf("Email to %s was not sent: the user did not confirm.", to)), nil
			case answer.Action == "decline":
				return toolText(fmt.Sprintf("Email to %s was not sent: the user declined.", to)), nil
			default: // cancel
				return toolText(fmt.Sprintf("Email to %s was not sent: the user cancelled.", to)), nil
			}
		}
		// MRTR-6: the retry lacks the answer; ask again rather than fail.
		if e := s.mutMissingAnswer(); e != nil {
			return nil, e
		}
	}

	// MRTR-4/META-4: only ask for what this very request declares (META-3).
	if !s.mutElicitationDeclared(formElicitationDeclared(r) || s.opts.breaks("MRTR-4")) {
		return nil, s.mutMissingCapability(&Error{
			Code:    CodeMissingRequiredClientCapability,
			Message: "Server requires the elicitation capability (form mode) for send_email",
			Data:    map[string]any{"requiredCapabilities": map[string]any{"elicitation": map[string]any{}}},
		})
	}
	// LOG-1: a request that asked for logs hears why it has to wait; on
	// HTTP the log turns the answer into an SSE stream, which the
	// input_required result then ends (MRTR-8).
	if r.log("info", "send_email", "asking the user to confirm") != nil {
		return nil, nil
	}
	state := s.sealState(requestState{
		Version: 1, Method: r.method, Tool: "send_email", Args: digest,
		Expires: s.opts.Now().Add(s.opts.StateTTL).Unix(),
	})
	// MRTR-2/MRTR-3; CACHE-2: no ttlMs or cacheScope on input_required.
	return s.mutInputRequired(s.mutMRTRResult(map[string]any{
		"resultType": "input_required",
		"inputRequests": map[string]any{
			confirmKey: map[string]any{
				"method": "elicitation/create",
				"params": map[string]any{
					"mode":    "form",
					"message": fmt.Sprintf("Send an email to %s with subject %q?", to, subject),
					"requestedSchema": map[string]any{
						"type": "object",
						"properties": map[string]any{
							"confirm": map[string]any{"type": "boolean", "title": "Send this email?", "default": false},
						},
						"required": []any{"confirm"},
					},
				},
			},
		},
		"requestState": state,
	})), nil
}

// formElicitationDeclared reports whether this request declares form-mode
// elicitation: "elicitation": {} means form only, and an object naming only
// "url" does not include form (MRTR-4).
func formElicitationDeclared(r *request) bool {
	if !r.hasCapability("elicitation") {
		return false
	}
	var e map[string]json.RawMessage
	_ = json.Unmarshal(r.meta.caps["elicitation"], &e)
	_, form := e["form"]
	_, url := e["url"]
	return form || !url
}

// confirmResponse extracts inputResponses.confirm. A missing entry is not an
// error (the caller asks again); a malformed one is a protocol error. Other
// keys are ignored (MRTR-6).
func confirmResponse(raw json.RawMessage) (*elicitResult, *Error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	var responses map[string]json.RawMessage
	if err := json.Unmarshal(raw, &responses); err != nil {
		return nil, errorf(CodeInvalidParams, "Invalid params: inputResponses must be an object")
	}
	entry, ok := responses[confirmKey]
	if !ok {
		return nil, nil
	}
	var res elicitResult
	if err := json.Unmarshal(entry, &res); err != nil {
		return nil, errorf(CodeInvalidParams, "Invalid params: inputResponses.%s must be an ElicitResult", confirmKey)
	}
	switch res.Action {
	case "accept", "decline", "cancel":
		return &res, nil
	}
	return nil, errorf(CodeInvalidParams, `Invalid params: inputResponses.%s.action must be "accept", "decline" or "cancel"`, confirmKey)
}
