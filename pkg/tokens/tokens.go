// Package tokens counts what the tool surface costs in every model
// request: the tools array as mcp-eval sends it (llm.ToolsArray), through
// a tokenizer whose vocabularies are compiled into the binary (bpe.go:
// o200k_base and cl100k_base as embedded bytes, written from
// github.com/tiktoken-go/tokenizer), so nothing is downloaded at run time.
package tokens

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Encodings the counter knows.
const (
	O200kBase  = "o200k_base"  // GPT-4o, GPT-4.1, o-series, GPT-5: the default
	Cl100kBase = "cl100k_base" // GPT-4 and GPT-3.5
)

// Serialization names what was tokenized, in the report.
const Serialization = "tools array of an OpenAI Chat Completions request, compact JSON"

// Counter tokenizes with one encoding. Its rank table (~2 MB, a few ms)
// is built on the first Count and kept: a run holds one Counter per
// encoding, so a Layer 0 run without tools never builds one.
type Counter struct {
	encoding string
	once     sync.Once
	codec    *bpe
	err      error
}

// NewCounter returns a counter for encoding (O200kBase or Cl100kBase).
func NewCounter(encoding string) (*Counter, error) {
	switch encoding {
	case O200kBase, Cl100kBase:
		return &Counter{encoding: encoding}, nil
	}
	return nil, fmt.Errorf("tokens: unknown encoding %q (want %s or %s)", encoding, O200kBase, Cl100kBase)
}

// Encoding is the counter's encoding name.
func (c *Counter) Encoding() string { return c.encoding }

// Count is the number of tokens of s.
func (c *Counter) Count(s string) (int, error) {
	c.once.Do(func() {
		if c.encoding == Cl100kBase {
			c.codec, c.err = newBPE(cl100kVocab, cl100kSplit)
		} else {
			c.codec, c.err = newBPE(o200kVocab, o200kSplit)
		}
	})
	if c.err != nil {
		return 0, fmt.Errorf("tokens: loading %s: %w", c.encoding, c.err)
	}
	n, err := c.codec.count(s)
	if err != nil {
		return 0, fmt.Errorf("tokens: counting with %s: %w", c.encoding, err)
	}
	return n, nil
}

// EncodingFor is the encoding of a model name as the run names it
// ("gpt-4-turbo", "openai:gpt-3.5-turbo", "azure/gpt-4o"): cl100k_base for
// the GPT-4 and GPT-3.5 families, o200k_base for everything else (the
// OpenAI models of today; for other providers' models it is an estimate,
// labelled as such by the encoding).
func EncodingFor(model string) string {
	m := strings.ToLower(model)
	if i := strings.LastIndexAny(m, "/:"); i >= 0 {
		m = m[i+1:]
	}
	switch {
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "gpt-4.1"), strings.HasPrefix(m, "chatgpt-4o"):
		return O200kBase
	case strings.HasPrefix(m, "gpt-4"), strings.HasPrefix(m, "gpt-3.5"), strings.HasPrefix(m, "gpt-35"):
		return Cl100kBase
	}
	return O200kBase
}

// Meter is one run's tokenizers, each built at most once, whichever
// layer asks first.
type Meter struct {
	mu       sync.Mutex
	counters map[string]*Counter
}

// NewMeter returns a meter with no tokenizer loaded.
func NewMeter() *Meter { return &Meter{counters: map[string]*Counter{}} }

func (m *Meter) counter(encoding string) (*Counter, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.counters[encoding]; ok {
		return c, nil
	}
	c, err := NewCounter(encoding)
	if err != nil {
		return nil, err
	}
	m.counters[encoding] = c
	return c, nil
}

// ToolSurface counts the tools array in o200k_base and, when one of models
// belongs to a family that uses it, in cl100k_base too, each labelled with
// its encoding and the models it stands for. Tools are largest first.
func (m *Meter) ToolSurface(tools []llm.Tool, models []string) (*report.ToolTokens, error) {
	whole, each, err := llm.ToolsArray(tools)
	if err != nil {
		return nil, err
	}
	byEnc := map[string][]string{O200kBase: {}}
	for _, md := range models {
		e := EncodingFor(md)
		byEnc[e] = append(byEnc[e], md)
	}
	out := &report.ToolTokens{Serialization: Serialization, Counts: []report.ToolTokenCount{}}
	for _, enc := range []string{O200kBase, Cl100kBase} {
		ms, ok := byEnc[enc]
		if !ok {
			continue
		}
		c, err := m.counter(enc)
		if err != nil {
			return nil, err
		}
		tc := report.ToolTokenCount{Encoding: enc, Models: ms, Tools: []report.ToolTokenItem{}}
		if tc.Total, err = c.Count(string(whole)); err != nil {
			return nil, err
		}
		for _, t := range each {
			n, err := c.Count(string(t.JSON))
			if err != nil {
				return nil, err
			}
			tc.Tools = append(tc.Tools, report.ToolTokenItem{Name: t.Name, Tokens: n})
		}
		sort.SliceStable(tc.Tools, func(i, j int) bool {
			if tc.Tools[i].Tokens != tc.Tools[j].Tokens {
				return tc.Tools[i].Tokens > tc.Tools[j].Tokens
			}
			return tc.Tools[i].Name < tc.Tools[j].Name
		})
		out.Counts = append(out.Counts, tc)
	}
	return out, nil
}
