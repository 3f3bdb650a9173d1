package llm

import (
	"fmt"
	"path"
	"strings"
)

// capability says which determinism knobs a model accepts on a dialect.
type capability struct {
	temperature bool
	seed        bool
	// why explains a refused knob, for Response.Dropped.
	tempWhy, seedWhy string
	// reasoning models take max_completion_tokens, not max_tokens, on
	// Chat Completions, and carry encrypted reasoning across turns on
	// Responses.
	reasoning bool
}

// modelRule is one row of the capability table: a glob over the model name
// (lower case, after the last "/", so an OpenRouter "openai/gpt-5" matches
// like "gpt-5"). The first matching row wins.
type modelRule struct {
	glob      string
	reasoning bool
	noTemp    string // why temperature is refused ("" = accepted)
}

// modelRules is the capability table of llm-providers.md §4. OpenAI's
// reasoning models (o-series, gpt-5 and later) answer 400 "Unsupported
// value: 'temperature' does not support 0 with this model" unless reasoning
// effort is none, which this package does not send; gpt-5-chat is the
// non-reasoning chat variant.
var modelRules = []modelRule{
	{glob: "gpt-5-chat*"},
	{glob: "gpt-5*", reasoning: true, noTemp: "reasoning model: OpenAI rejects temperature unless reasoning effort is none"},
	{glob: "gpt-6*", reasoning: true, noTemp: "reasoning model: OpenAI rejects temperature unless reasoning effort is none"},
	{glob: "gpt-7*", reasoning: true, noTemp: "reasoning model: OpenAI rejects temperature unless reasoning effort is none"},
	{glob: "o[0-9]*", reasoning: true, noTemp: "reasoning model: OpenAI o-series models accept only the default temperature"},
}

// capabilityOf combines the dialect's rules with the model table.
func capabilityOf(dialect, model, apiVersion string) capability {
	c := capability{temperature: true, seed: true}
	name := strings.ToLower(model)
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	for _, r := range modelRules {
		if ok, _ := path.Match(r.glob, name); ok {
			c.reasoning = r.reasoning
			if r.noTemp != "" {
				c.temperature, c.tempWhy = false, r.noTemp
			}
			break
		}
	}
	switch dialect {
	case DialectOpenAIResponses:
		c.seed, c.seedWhy = false, "the Responses API has no seed parameter"
	case DialectAnthropic:
		c.seed, c.seedWhy = false, "the Anthropic Messages API has no seed parameter"
		// Versions are dates, so they compare as strings.
		if apiVersion >= "2026-10-21" {
			c.temperature, c.tempWhy = false, fmt.Sprintf("anthropic-version %s rejects temperature, top_p and top_k even at default values", apiVersion)
		}
	}
	return c
}

// filterSampling decides what of the requested sampling is sent; every
// knob left out is listed with its reason.
func filterSampling(c capability, req Sampling, defaultMaxTokens int, dialect string) (sent Sampling, dropped []string) {
	if req.Temperature != nil {
		if c.temperature {
			t := *req.Temperature
			sent.Temperature = &t
		} else {
			dropped = append(dropped, "temperature: "+c.tempWhy)
		}
	}
	if req.Seed != nil {
		if c.seed {
			s := *req.Seed
			sent.Seed = &s
		} else {
			dropped = append(dropped, "seed: "+c.seedWhy)
		}
	}
	sent.MaxOutputTokens = max(req.MaxOutputTokens, 0)
	if sent.MaxOutputTokens == 0 && dialect == DialectAnthropic {
		sent.MaxOutputTokens = defaultMaxTokens // max_tokens is required there
	}
	return sent, dropped
}
