// Package llmfake is a scripted stand-in for the model APIs package llm
// speaks: one httptest server answering OpenAI Chat Completions
// (…/chat/completions), OpenAI Responses (…/responses) and Anthropic
// Messages (…/messages) the way the real services do — the auth header
// checked, anthropic-version required, bodies parsed and validated with the
// real APIs' rules and error messages, replies shaped like theirs with
// usage and a served model id. Tests drive the production provider code
// against it:
//
//	fake := llmfake.New(t, llmfake.Options{},
//		llmfake.Tool("get_weather", `{"city":"Seattle"}`),
//		llmfake.Text("72F and sunny"))
//	p, _ := llm.New("anthropic:claude-x", fake.Endpoints(), fake.LookupEnv, llm.Options{})
//
// and then assert on fake.Requests().
package llmfake

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/config"
)

// DefaultKey is the API key the fake expects unless Options.Key says
// otherwise.
const DefaultKey = "sk-fake-0123456789"

// Options configure the fake. The zero value is a faithful OpenAI and
// Anthropic.
type Options struct {
	// Key is the API key every request must carry (default DefaultKey).
	Key string
	// Auth is how the key must arrive: "" the dialect's own way
	// (Authorization: Bearer on OpenAI paths; x-api-key, or Bearer, on
	// Anthropic), "api-key" (Azure), "none" (a local server).
	Auth string
	// APIVersion, when set, must be the api-version query parameter of
	// OpenAI-dialect requests (Azure's legacy API).
	APIVersion string
	// Latency is added to every reply: a fixed-latency provider for
	// benchmarks.
	Latency time.Duration
	// TemperatureModels are globs of models that reject a temperature
	// other than 1 (default: OpenAI's reasoning models o1…, gpt-5…,
	// gpt-6…, but not gpt-5-chat…).
	TemperatureModels []string
	// NoStructuredOutput makes the fake refuse structured output like a
	// compatible server without json_schema support.
	NoStructuredOutput bool
	// Default answers once the script is used up; nil fails the test
	// and answers 500.
	Default func(*Request) Reply
	// Count answers the token-counting endpoints (count.go) when set: a
	// Reply with Status or RawBody answers that; a zero Reply answers
	// the fake's count. Counting requests never use the script.
	Count func(*Request) Reply
}

// Server is a running fake.
type Server struct {
	URL  string
	t    testing.TB
	opts Options
	srv  *httptest.Server

	mu       sync.Mutex
	script   []Reply
	next     int
	requests []*Request
	ids      int
}

// New starts a fake that answers the script in order, one reply per
// request that passes validation, across all dialects. It is closed when
// the test ends.
func New(t testing.TB, opts Options, script ...Reply) *Server {
	t.Helper()
	if opts.Key == "" {
		opts.Key = DefaultKey
	}
	if opts.TemperatureModels == nil {
		opts.TemperatureModels = []string{"o[0-9]*", "gpt-5*", "gpt-6*", "gpt-7*"}
	}
	s := &Server{t: t, opts: opts, script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Close stops the fake before the test ends: every later request fails
// to connect, like a model that is down.
func (s *Server) Close() { s.srv.Close() }

// Requests are the requests received so far, in order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Remaining is how many scripted replies are unused.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script) - s.next
}

// Endpoints point the built-in openai and anthropic endpoints of package
// llm at the fake (as an endpoints: section of mcp-eval.yaml would).
func (s *Server) Endpoints() map[string]config.Endpoint {
	return map[string]config.Endpoint{
		"openai":    {BaseURL: s.URL + "/v1"},
		"anthropic": {BaseURL: s.URL},
	}
}

// LookupEnv serves the key from the variables package llm reads
// (OPENAI_API_KEY, ANTHROPIC_API_KEY, OPENAI_COMPATIBLE_API_KEY,
// FAKE_API_KEY).
func (s *Server) LookupEnv(name string) (string, bool) {
	switch name {
	case "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_COMPATIBLE_API_KEY", "FAKE_API_KEY":
		return s.opts.Key, true
	}
	return "", false
}

func (s *Server) id(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return prefix + strconv.Itoa(s.ids)
}

// maxBody bounds a request body, as the real APIs do (32 MB there).
const maxBody = 32 << 20

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	req := &Request{Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone()}
	switch {
	case strings.HasSuffix(r.URL.Path, "/messages/count_tokens"):
		req.Dialect, req.Count = Messages, true
	case strings.HasSuffix(r.URL.Path, "/responses/input_tokens"):
		req.Dialect, req.Count = Responses, true
	case strings.HasSuffix(r.URL.Path, ":countTokens") && strings.Contains(r.URL.Path, "/models/"):
		req.Dialect, req.Count = Gemini, true
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		req.Dialect = Chat
	case strings.HasSuffix(r.URL.Path, "/responses"):
		req.Dialect = Responses
	case strings.HasSuffix(r.URL.Path, "/messages"):
		req.Dialect = Messages
	default:
		s.reject(w, req, http.StatusNotFound, "Invalid URL (POST "+r.URL.Path+")")
		return
	}
	if r.Method != http.MethodPost {
		s.reject(w, req, http.StatusMethodNotAllowed, "Method "+r.Method+" not allowed")
		return
	}
	if msg := s.checkAuth(req); msg != "" {
		s.reject(w, req, http.StatusUnauthorized, msg)
		return
	}
	if req.Dialect == Messages && r.Header.Get("anthropic-version") == "" {
		s.reject(w, req, http.StatusBadRequest, "anthropic-version: header is required")
		return
	}
	if s.opts.APIVersion != "" && req.Dialect != Messages && req.Dialect != Gemini && req.Query.Get("api-version") != s.opts.APIVersion {
		s.reject(w, req, http.StatusNotFound, "Resource not found (api-version "+strconv.Quote(req.Query.Get("api-version"))+" is not supported)")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		s.reject(w, req, http.StatusRequestEntityTooLarge, "request body too large or unreadable")
		return
	}
	req.Body = body
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		s.reject(w, req, http.StatusBadRequest, "Content-Type must be application/json")
		return
	}
	if err := json.Unmarshal(body, &req.Params); err != nil {
		s.reject(w, req, http.StatusBadRequest, "We could not parse the JSON body of your request.")
		return
	}
	if req.Count {
		s.serveCount(w, req)
		return
	}
	var verr error
	switch req.Dialect {
	case Chat:
		verr = s.parseChat(req)
	case Responses:
		verr = s.parseResponses(req)
	case Messages:
		verr = s.parseMessages(req)
	}
	if verr != nil {
		s.reject(w, req, http.StatusBadRequest, verr.Error())
		return
	}

	reply, ok := s.take(req)
	if !ok {
		return
	}
	if d := s.opts.Latency + reply.Delay; d > 0 {
		if !sleep(r.Context(), d) {
			return
		}
	}
	if reply.RetryAfter != "" {
		w.Header().Set("Retry-After", reply.RetryAfter)
	}
	if s.writeScripted(w, req, reply) {
		return
	}
	s.setRequestID(w, req)
	if reply.Usage == (Usage{}) {
		reply.Usage = Usage{InputTokens: DefaultInputTokens, OutputTokens: DefaultOutputTokens}
	}
	if reply.Model == "" {
		reply.Model = ServedModel(req.Model)
	}
	var out any
	switch req.Dialect {
	case Chat:
		out = s.chatReply(req, reply)
	case Responses:
		out = s.responsesReply(req, reply)
	case Messages:
		out = s.messagesReply(req, reply)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// take records req and hands out the next reply.
func (s *Server) take(req *Request) (Reply, bool) {
	s.mu.Lock()
	req.Status = http.StatusOK
	s.requests = append(s.requests, req)
	if s.next < len(s.script) {
		r := s.script[s.next]
		s.next++
		if r.Status != 0 {
			req.Status = r.Status
		}
		s.mu.Unlock()
		return r, true
	}
	s.mu.Unlock()
	if s.opts.Default != nil {
		r := s.opts.Default(req)
		if r.Status != 0 {
			req.Status = r.Status
		}
		return r, true
	}
	s.t.Errorf("llmfake: script used up at request %d (%s %s)", len(s.Requests()), req.Dialect, req.Model)
	return Reply{Status: http.StatusInternalServerError, Message: "llmfake: script used up"}, true
}

func (s *Server) checkAuth(req *Request) string {
	h := req.Header
	bearer, hasBearer := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	switch s.opts.Auth {
	case "none":
		return ""
	case "api-key":
		if h.Get("api-key") != s.opts.Key {
			return "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."
		}
		return ""
	}
	if req.Dialect == Gemini {
		// The native API takes the key in x-goog-api-key (or ?key=), not
		// as a bearer token, which it reads as an OAuth access token.
		switch k := h.Get("x-goog-api-key"); {
		case k == "" && hasBearer:
			return "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."
		case k == "":
			return "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."
		case k != s.opts.Key:
			return "API key not valid. Please pass a valid API key."
		}
		return ""
	}
	if req.Dialect == Messages {
		// The API prefers x-api-key when both are present.
		if k := h.Get("x-api-key"); k != "" {
			if k != s.opts.Key {
				return "invalid x-api-key"
			}
			return ""
		}
		if hasBearer && bearer == s.opts.Key {
			return ""
		}
		return "x-api-key header is required"
	}
	if !hasBearer {
		return "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
	}
	if bearer != s.opts.Key {
		return "Incorrect API key provided."
	}
	return ""
}

// reject records and answers a request the real API would refuse.
func (s *Server) reject(w http.ResponseWriter, req *Request, status int, msg string) {
	s.mu.Lock()
	req.Status, req.Rejected = status, msg
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	s.writeError(w, req, status, msg)
}

// setRequestID sets the dialect's request-id header and returns the id.
func (s *Server) setRequestID(w http.ResponseWriter, req *Request) string {
	id := s.id("req_")
	if req.Dialect == Messages {
		w.Header().Set("request-id", id)
	} else {
		w.Header().Set("x-request-id", id)
	}
	return id
}

// writeError answers in the dialect's error shape: OpenAI's
// {"error":{"message","type","param","code"}}, Anthropic's
// {"type":"error","error":{"type","message"},"request_id"} (the body
// repeats the request-id header).
func (s *Server) writeError(w http.ResponseWriter, req *Request, status int, msg string) {
	rid := s.setRequestID(w, req)
	w.Header().Set("Content-Type", "application/json")
	var body any
	if req.Dialect == Gemini {
		st := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}[status]
		if st == "" {
			st = "INTERNAL"
		}
		if msg == "" {
			msg = "An internal error has occurred."
		}
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "message": msg, "status": st}})
		return
	}
	if req.Dialect == Messages {
		typ := map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
			404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}[status]
		if typ == "" {
			typ = "api_error"
		}
		if msg == "" {
			msg = map[string]string{"rate_limit_error": "Number of request tokens has exceeded your per-minute rate limit", "overloaded_error": "Overloaded"}[typ]
			if msg == "" {
				msg = "Internal server error"
			}
		}
		body = map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}, "request_id": rid}
	} else {
		typ, code := "invalid_request_error", any(nil)
		switch {
		case status == 401:
			code = "invalid_api_key"
		case status == 429:
			typ, code = "requests", "rate_limit_exceeded"
			if msg == "" {
				msg = "Rate limit reached for requests. Please try again in 1s."
			}
		case status >= 500:
			typ = "server_error"
			if msg == "" {
				msg = "The server had an error while processing your request. Sorry about that!"
			}
		}
		body = map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}}
	}
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

func (s *Server) rejectsTemperature(model string) bool {
	for _, g := range s.opts.TemperatureModels {
		if strings.HasPrefix(model, "gpt-5-chat") {
			return false
		}
		if ok, _ := path.Match(g, model); ok {
			return true
		}
	}
	return false
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// decode reads a raw field into v; a missing field leaves v alone.
func decode(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// usage totals, for the total_tokens fields.
func total(u Usage) int { return u.InputTokens + u.OutputTokens }

// rawArgs is the argument text of a call ("" means no arguments).
func rawArgs(c Call) string {
	if strings.TrimSpace(c.Arguments) == "" {
		return "{}"
	}
	return c.Arguments
}

// objectJSON reports whether s is a JSON object.
func objectJSON(s string) bool {
	b := bytes.TrimSpace([]byte(s))
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// writeScripted writes a reply the script made a raw body or an error,
// and says whether it did.
func (s *Server) writeScripted(w http.ResponseWriter, req *Request, reply Reply) bool {
	if reply.RawBody != "" {
		s.setRequestID(w, req)
		w.Header().Set("Content-Type", "application/json")
		if reply.Status != 0 {
			w.WriteHeader(reply.Status)
		}
		io.WriteString(w, reply.RawBody)
		return true
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		s.writeError(w, req, reply.Status, reply.Message)
		return true
	}
	return false
}
