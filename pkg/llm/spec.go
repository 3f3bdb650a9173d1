package llm

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/config"
	"github.com/mcp-eval/mcp-eval-action/pkg/didyoumean"
)

// Wire dialects an endpoint can speak (config.Endpoint.Dialect).
const (
	DialectOpenAIResponses = "openai-responses"
	DialectOpenAIChat      = "openai-chat"
	DialectAnthropic       = "anthropic-messages"
)

// Built-in endpoint names of a model spec.
const (
	EndpointOpenAI           = "openai"
	EndpointAnthropic        = "anthropic"
	EndpointOpenAICompatible = "openai-compatible"
)

// AnthropicVersion is the pinned anthropic-version header. 2026-10-21
// rejects temperature, top_p and top_k (llm-providers.md §2.3); an endpoint
// may pin another version with api-version, e.g. 2023-06-01, which still
// accepts temperature.
const AnthropicVersion = "2026-10-21"

// Environment variables the built-in endpoints read their key from.
const (
	EnvOpenAIKey           = "OPENAI_API_KEY"
	EnvAnthropicKey        = "ANTHROPIC_API_KEY"
	EnvOpenAICompatibleKey = "OPENAI_COMPATIBLE_API_KEY" // optional: local servers need none
)

// builtins are the endpoints every spec may name without configuration.
// An endpoints: entry with the same name overrides their fields one by
// one (a proxy's base-url, another key-env), keeping the rest.
var builtins = map[string]config.Endpoint{
	EndpointOpenAI:    {Dialect: DialectOpenAIResponses, BaseURL: "https://api.openai.com/v1", KeyEnv: EnvOpenAIKey},
	EndpointAnthropic: {Dialect: DialectAnthropic, BaseURL: "https://api.anthropic.com", KeyEnv: EnvAnthropicKey, APIVersion: AnthropicVersion},
	// The base URL comes from the spec; the key is optional.
	EndpointOpenAICompatible: {Dialect: DialectOpenAIChat, KeyEnv: EnvOpenAICompatibleKey},
}

// Spec is a parsed model spec: ENDPOINT:MODEL, or
// openai-compatible:MODEL@BASE_URL.
type Spec struct {
	Endpoint string // openai, anthropic, openai-compatible or an endpoints: name
	Model    string // the model name sent to the provider
	BaseURL  string // only for openai-compatible
}

// ParseSpec splits a model spec. It does not look the endpoint up.
func ParseSpec(s string) (Spec, error) {
	const forms = "use openai:MODEL, anthropic:MODEL, openai-compatible:MODEL@BASE_URL or ENDPOINT:MODEL with ENDPOINT an endpoints: entry of mcp-eval.yaml"
	ep, model, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok || ep == "" {
		return Spec{}, fmt.Errorf("model %q has no endpoint prefix (%s)", s, forms)
	}
	if ep != EndpointOpenAICompatible {
		if model == "" {
			return Spec{}, fmt.Errorf("model %q names no model after %q (%s)", s, ep+":", forms)
		}
		return Spec{Endpoint: ep, Model: model}, nil
	}
	// The URL starts at the first "@http": model names may themselves
	// contain "@" or ":" (Ollama's llama3.1:8b), URLs always start so.
	i := strings.Index(model, "@http")
	if i < 0 {
		return Spec{}, fmt.Errorf("model %q has no @BASE_URL (write openai-compatible:MODEL@BASE_URL, e.g. openai-compatible:llama3.1@http://localhost:11434/v1)", s)
	}
	if i == 0 {
		return Spec{}, fmt.Errorf("model %q names no model before @ (write openai-compatible:MODEL@BASE_URL)", s)
	}
	return Spec{Endpoint: ep, Model: model[:i], BaseURL: model[i+1:]}, nil
}

// CheckSpec says what is wrong with a model spec before anything is
// called: its form, and the endpoint it names among the built-ins and
// endpoints (nil when nothing is). Keys and URLs are New's to check.
func CheckSpec(spec string, endpoints map[string]config.Endpoint) error {
	sp, err := ParseSpec(spec)
	if err != nil {
		return err
	}
	_, err = resolveEndpoint(sp, endpoints)
	return err
}

// String is the spec as written.
func (s Spec) String() string {
	if s.BaseURL != "" {
		return s.Endpoint + ":" + s.Model + "@" + s.BaseURL
	}
	return s.Endpoint + ":" + s.Model
}

// New returns the Provider a model spec names. endpoints are the
// endpoints: entries of mcp-eval.yaml (nil for none); lookupEnv reads the
// environment (nil: os.LookupEnv) — keys are read from it and nowhere
// else. Errors name a missing variable, never a value.
func New(spec string, endpoints map[string]config.Endpoint, lookupEnv func(string) (string, bool), opts Options) (Provider, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	sp, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	ep, err := resolveEndpoint(sp, endpoints)
	if err != nil {
		return nil, err
	}
	r, err := resolveWire(sp, ep, lookupEnv)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", sp, err)
	}
	return newProvider(sp, r, opts.withDefaults()), nil
}

// resolveEndpoint finds the endpoint a spec names: a configured entry,
// laid over the built-in of the same name if there is one.
func resolveEndpoint(sp Spec, endpoints map[string]config.Endpoint) (config.Endpoint, error) {
	b, isBuiltin := builtins[sp.Endpoint]
	c, isConfigured := endpoints[sp.Endpoint]
	if !isBuiltin && !isConfigured {
		names := []string{EndpointOpenAI, EndpointAnthropic, EndpointOpenAICompatible}
		for n := range endpoints {
			if _, dup := builtins[n]; !dup {
				names = append(names, n)
			}
		}
		slices.Sort(names[3:])
		if near, ok := didyoumean.Nearest(sp.Endpoint, names); ok {
			return config.Endpoint{}, fmt.Errorf("model %s: unknown endpoint %q: did you mean %s:%s? (known: %s; or add it under endpoints: in mcp-eval.yaml)", sp, sp.Endpoint, near, sp.Model, strings.Join(names, ", "))
		}
		return config.Endpoint{}, fmt.Errorf("model %s: unknown endpoint %q (known: %s; add it under endpoints: in mcp-eval.yaml)", sp, sp.Endpoint, strings.Join(names, ", "))
	}
	ep := b
	if isConfigured {
		if c.Dialect != "" {
			ep.Dialect = c.Dialect
		}
		if c.BaseURL != "" {
			ep.BaseURL = c.BaseURL
		}
		if c.KeyEnv != "" {
			ep.KeyEnv = c.KeyEnv
		}
		if c.KeyHeader != "" {
			ep.KeyHeader = c.KeyHeader
		}
		if c.APIVersion != "" {
			ep.APIVersion = c.APIVersion
		}
		ep.Headers = c.Headers
	}
	if sp.BaseURL != "" {
		ep.BaseURL = sp.BaseURL // the spec's URL wins for openai-compatible
	}
	if ep.Dialect == "" {
		ep.Dialect = DialectOpenAIChat // the most widely spoken one
	}
	return ep, nil
}

// envRef matches ${NAME} as config.ExpandEnv does, to learn which header
// values are secrets.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// wire is an endpoint resolved into what goes on the wire.
type wire struct {
	dialect    string
	url        string // full URL of the one path this dialect posts to
	apiVersion string
	headers    map[string]string // auth and custom headers, values final
	secrets    []string          // values to redact from every error
	// key is the endpoint's API key ("" when it takes none), for a
	// counting endpoint that wants it in another header (Gemini's).
	key string
	// basePath is the base URL's path, without the dialect's path: a
	// counting endpoint is found from it.
	basePath string
}

func resolveWire(sp Spec, ep config.Endpoint, lookupEnv func(string) (string, bool)) (*wire, error) {
	w := &wire{dialect: ep.Dialect, headers: map[string]string{}}
	var path string
	switch ep.Dialect {
	case DialectOpenAIResponses:
		path = "/responses"
	case DialectOpenAIChat:
		path = "/chat/completions"
	case DialectAnthropic:
		path = "/v1/messages"
	default:
		return nil, fmt.Errorf("endpoint %q: unknown dialect %q (use %s, %s or %s)", sp.Endpoint, ep.Dialect, DialectOpenAIResponses, DialectOpenAIChat, DialectAnthropic)
	}
	if ep.BaseURL == "" {
		return nil, fmt.Errorf("endpoint %q has no base-url (set base-url under endpoints.%s in mcp-eval.yaml)", sp.Endpoint, sp.Endpoint)
	}
	u, err := url.Parse(strings.TrimRight(ep.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("endpoint %q: base URL %q is not an http(s) URL (e.g. https://api.openai.com/v1)", sp.Endpoint, ep.BaseURL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("endpoint %q: base URL carries credentials (put the key in an environment variable named by key-env)", sp.Endpoint)
	}
	if ep.Dialect == DialectAnthropic && strings.HasSuffix(u.Path, "/v1") {
		path = "/messages" // a base URL written with /v1 already
	}
	w.basePath = u.Path
	u.Path += path
	w.apiVersion = ep.APIVersion
	if ep.Dialect != DialectAnthropic && ep.APIVersion != "" {
		// Azure's legacy deployments API wants ?api-version=; the v1 API
		// needs none, so this is only sent when configured.
		q := u.Query()
		q.Set("api-version", ep.APIVersion)
		u.RawQuery = q.Encode()
	}
	if ep.Dialect == DialectAnthropic {
		if w.apiVersion == "" {
			w.apiVersion = AnthropicVersion
		}
		w.headers["anthropic-version"] = w.apiVersion
	}
	w.url = u.String()

	if ep.KeyEnv != "" {
		key, ok := lookupEnv(ep.KeyEnv)
		key = strings.TrimSpace(key)
		switch {
		case ok && key != "":
			header := ep.KeyHeader
			if header == "" {
				header = "Authorization"
				if ep.Dialect == DialectAnthropic {
					header = "x-api-key"
				}
			}
			if strings.EqualFold(header, "Authorization") {
				w.headers["Authorization"] = "Bearer " + key
			} else {
				w.headers[header] = key
			}
			w.secrets = append(w.secrets, key)
			w.key = key
		case sp.Endpoint == EndpointOpenAICompatible && ep.KeyEnv == EnvOpenAICompatibleKey:
			// Local servers (Ollama, vLLM, llama.cpp) take no key.
		default:
			return nil, fmt.Errorf("environment variable %s is not set (export the API key in it, or name another variable with key-env under endpoints.%s)", ep.KeyEnv, sp.Endpoint)
		}
	}
	for name, raw := range ep.Headers {
		v, err := config.ExpandEnv(raw, lookupEnv)
		if err != nil {
			return nil, fmt.Errorf("endpoint %q header %s: %w", sp.Endpoint, name, err)
		}
		w.headers[name] = v
		for _, m := range envRef.FindAllStringSubmatch(raw, -1) {
			if sv, _ := lookupEnv(m[1]); sv != "" {
				w.secrets = append(w.secrets, sv) // a token from the environment
			}
		}
	}
	return w, nil
}
