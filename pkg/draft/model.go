package draft

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/spend"
)

// maxDraftedPrompt bounds a prompt a model writes (model output is
// untrusted).
const maxDraftedPrompt = 1000

var promptSchema = json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"the user's message"}},"required":["prompt"],"additionalProperties":false}`)

const rewriteSystem = `You write test prompts for an evaluation of an MCP server's tools.
Write what a real user would type to ask for the task described, in one or two natural sentences.
Mention every value you are given exactly as written (same spelling, digits and case).
Do not name the tool, do not mention JSON, arguments or tools, and do not add requirements that are not given.
Answer with JSON: {"prompt": "..."}.`

// Rewrite asks model for a natural prompt for each positive case (chains
// included), varied by asking for a different kind of user each time. A
// drafted prompt that leaves out a value the case matches exactly, or is
// empty or too long, is not used: the template prompt stays, and the case
// says why. The error is only for a model that cannot be reached at all
// (every request failed) or for a meter whose budget was reached before the
// first call. Every call is metered: drafting spends from the same budget
// as the run that follows it.
func Rewrite(ctx context.Context, model llm.Provider, meter *spend.Meter, d *Draft) error {
	personas := []string{"a busy professional", "a new user who is unsure of the terms", "someone typing quickly on a phone", "a careful analyst"}
	var tried, failed int
	var lastErr error
	zero := 0.0
	for i, c := range d.Cases {
		if c.Negative || len(c.Todo) > 0 {
			continue
		}
		if err := meter.Gate(); err != nil {
			if tried == 0 {
				return err
			}
			c.How = append(c.How, fmt.Sprintf("the budget was reached before this prompt was drafted (%s): the template prompt stays", clipText(oneLine(err.Error()), 160)))
			continue
		}
		tried++
		var values []string
		for _, s := range c.Steps {
			for _, k := range sortedKeys(s.Args) {
				values = append(values, fmt.Sprintf("%s = %s", k, valueText(s.Args[k])))
			}
		}
		user := fmt.Sprintf("Task: %s\nValues to mention: %s\nWrite it the way %s would.", c.subject, strings.Join(values, "; "), personas[i%len(personas)])
		if len(values) == 0 {
			user = fmt.Sprintf("Task: %s\nWrite it the way %s would.", c.subject, personas[i%len(personas)])
		}
		resp, err := model.Complete(ctx, &llm.Request{System: rewriteSystem, Messages: []llm.Message{{Role: llm.User, Text: user}},
			Output: promptSchema, ToolChoice: "none", Sampling: llm.Sampling{Temperature: &zero, MaxOutputTokens: 400}})
		if resp != nil {
			meter.Add(spend.Draft, model.ID(), resp.Usage)
		}
		if err != nil {
			failed++
			lastErr = err
			c.How = append(c.How, fmt.Sprintf("%s could not draft a prompt (%s): the template prompt stays", model.ID(), clipText(oneLine(err.Error()), 120)))
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue
		}
		var out struct {
			Prompt string `json:"prompt"`
		}
		_ = json.Unmarshal(resp.Output, &out)
		p := oneLine(out.Prompt)
		if why := unusable(p, c.facts); why != "" {
			c.How = append(c.How, fmt.Sprintf("%s's drafted prompt was not used (%s): the template prompt stays", model.ID(), why))
			continue
		}
		c.Prompt = p
		c.How[0] = strings.Replace(c.How[0], "from ", "values from ", 1)
		c.How = append(c.How, fmt.Sprintf("prompt drafted by %s (asked for the wording of %s); the values are the draft's, checked against the schema", model.ID(), personas[i%len(personas)]))
		c.Tags = replaceTag(c.Tags, TagFromSchema, TagModel)
	}
	if tried > 0 && failed == tried {
		return fmt.Errorf("%s did not draft any prompt: %w", model.ID(), lastErr)
	}
	return nil
}

// unusable says why a drafted prompt cannot replace the template, "" when
// it can.
func unusable(p string, facts []fact) string {
	switch {
	case p == "":
		return "empty"
	case len(p) > maxDraftedPrompt:
		return fmt.Sprintf("over %d characters", maxDraftedPrompt)
	}
	lower := strings.ToLower(p)
	for _, f := range facts {
		if f.exact && !strings.Contains(lower, strings.ToLower(f.text)) {
			return fmt.Sprintf("it leaves out %q, which the case matches exactly", clipText(f.text, 40))
		}
		if !f.exact && !mentionsAWordOf(lower, f.text) {
			return fmt.Sprintf("it says nothing of %q, which the case expects (matched semantically)", clipText(f.text, 40))
		}
	}
	return ""
}

// mentionsAWordOf: the prompt holds, as a whole word (plurals folded,
// as Similarity reads them), one of value's content words of three
// letters or more, or, when it has none, one of its shorter ones, or,
// for a value of stopwords only, the value itself. "any" does not count for "ny", nor "the" for
// a value that says "the".
func mentionsAWordOf(prompt, value string) bool {
	have := map[string]bool{}
	for _, w := range words(prompt) {
		have[w] = true
	}
	vw := words(value)
	short := true // no content word of three letters: any word of it, whole
	for _, w := range vw {
		if utf8.RuneCountInString(w) >= 3 {
			short = false
			if have[w] {
				return true
			}
		}
	}
	if !short {
		return false
	}
	for _, w := range vw {
		if have[w] {
			return true
		}
	}
	if len(vw) == 0 {
		// Only stopwords or single letters ("all", "A"): the value as
		// written, as a whole word.
		v := strings.ToLower(strings.TrimSpace(value))
		for _, w := range strings.FieldsFunc(strings.ToLower(prompt), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if w == v {
				return true
			}
		}
		return v == ""
	}
	return false
}

func replaceTag(tags []string, old, repl string) []string {
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		if t == old {
			t = repl
		}
		out = append(out, t)
	}
	return out
}
