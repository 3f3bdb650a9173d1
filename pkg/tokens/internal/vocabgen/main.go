// Command vocabgen writes the vocabularies pkg/tokens embeds
// (o200k_base.vocab, cl100k_base.vocab) from github.com/tiktoken-go/tokenizer,
// whose Go-source map literals cost ~60 ms and tens of MB to build at run
// time. Run it through `go generate ./pkg/tokens` after bumping that module.
//
// The format is ../vocab's: the tokens by rank and a prebuilt hash table.
package main

import (
	"fmt"
	"os"

	"github.com/tiktoken-go/tokenizer"

	"github.com/mcp-eval/mcp-eval-action/pkg/tokens/internal/vocab"
)

func main() {
	for _, enc := range []tokenizer.Encoding{tokenizer.O200kBase, tokenizer.Cl100kBase} {
		if err := write(enc); err != nil {
			fmt.Fprintln(os.Stderr, "vocabgen:", err)
			os.Exit(1)
		}
	}
}

func write(enc tokenizer.Encoding) error {
	codec, err := tokenizer.Get(enc)
	if err != nil {
		return err
	}
	// Ranks are dense up to the last one; a gap decodes to an error.
	var toks [][]byte
	misses := 0
	for id := uint(0); misses < 1000; id++ {
		s, err := codec.Decode([]uint{id})
		if err != nil {
			misses++
			toks = append(toks, nil)
			continue
		}
		misses = 0
		toks = append(toks, []byte(s))
	}
	for len(toks) > 0 && toks[len(toks)-1] == nil {
		toks = toks[:len(toks)-1]
	}
	return os.WriteFile(string(enc)+".vocab", vocab.Build(toks), 0o644)
}
