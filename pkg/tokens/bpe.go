package tokens

import (
	_ "embed"
	"fmt"
	"math"

	"github.com/dlclark/regexp2/v2"
	// The package registers the code-generated matchers of the split
	// patterns below; regexp2.MustCompile finds them by pattern. Nothing
	// else of it is linked: its vocabularies are map literals that take
	// ~60 ms and tens of MB to build, which is why the vocabularies here
	// are embedded bytes instead (internal/vocabgen writes them from it).
	_ "github.com/tiktoken-go/tokenizer/codec"

	"github.com/mcp-eval/mcp-eval-action/pkg/tokens/internal/vocab"
)

//go:generate go run ./internal/vocabgen

var (
	//go:embed o200k_base.vocab
	o200kVocab string
	//go:embed cl100k_base.vocab
	cl100kVocab string
)

// The split patterns of tiktoken, exactly as the codec package registers
// them.
const (
	o200kSplit  = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	cl100kSplit = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// bpe is a byte-pair encoder over an embedded vocabulary whose hash table
// was built at generate time: loading it allocates nothing, and only the
// pages a lookup touches are read.
type bpe struct {
	*vocab.Table
	split *regexp2.Regexp
}

func newBPE(data, split string) (*bpe, error) {
	t, err := vocab.Open(data)
	if err != nil {
		return nil, fmt.Errorf("embedded vocabulary: %w", err)
	}
	// MustCompile, not Compile: only it looks up the generated matcher,
	// which is both faster and what the library counted with (the
	// interpreted one differs on U+007F, which the generated one skips).
	return &bpe{Table: t, split: regexp2.MustCompile(split, regexp2.None)}, nil
}

// count is the number of tokens of s: tiktoken's encode_ordinary (special
// tokens are text), the algorithm of github.com/tiktoken-go/tokenizer's
// codec (MIT licence), whose results TestMatchesLibrary compares.
func (b *bpe) count(s string) (int, error) {
	n := 0
	m, err := b.split.FindStringMatch(s)
	for ; err == nil && m != nil; m, err = b.split.FindNextMatch(m) {
		piece := m.String()
		if _, ok := b.Rank(piece); ok {
			n++
			continue
		}
		n += b.parts(piece)
	}
	if err != nil {
		return 0, fmt.Errorf("splitting: %w", err)
	}
	return n, nil
}

// mergeHeapThreshold is the piece length from which parts merges with a
// heap (O(n log n)) instead of rescanning (O(n²), faster when short).
const mergeHeapThreshold = 96

// parts is how many tokens byte-pair encoding merges piece into.
func (b *bpe) parts(piece string) int {
	if len(piece) < mergeHeapThreshold {
		return b.partsScan(piece)
	}
	return b.partsHeap(piece)
}

type part struct {
	offset int
	rank   uint32
}

const noRank = math.MaxUint32

func (b *bpe) partsScan(piece string) int {
	var buf [mergeHeapThreshold + 1]part
	parts := buf[:len(piece)+1]
	for i := range parts {
		parts[i] = part{i, noRank}
	}
	rankAt := func(i, skip int) uint32 {
		if i+skip+2 < len(parts) {
			if r, ok := b.Rank(piece[parts[i].offset:parts[i+skip+2].offset]); ok {
				return r
			}
		}
		return noRank
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i].rank = rankAt(i, 0)
	}
	for len(parts) > 1 {
		minRank, minIndex := uint32(noRank), 0
		for i, p := range parts[:len(parts)-1] {
			if p.rank < minRank {
				minRank, minIndex = p.rank, i
			}
		}
		if minRank == noRank {
			break
		}
		parts[minIndex].rank = rankAt(minIndex, 1)
		if minIndex > 0 {
			parts[minIndex-1].rank = rankAt(minIndex-1, 1)
		}
		parts = append(parts[:minIndex+1], parts[minIndex+2:]...)
	}
	return len(parts) - 1
}

type mergeNode struct {
	prev, next int32
	rank       uint32
}

type mergeCandidate struct {
	rank   uint32
	offset int32
}

func (b *bpe) partsHeap(piece string) int {
	n := int32(len(piece))
	nodes := make([]mergeNode, n+1)
	for i := range nodes {
		nodes[i] = mergeNode{prev: int32(i) - 1, next: int32(i) + 1, rank: noRank}
	}
	nodes[n].next = -1
	rankOf := func(i int32) uint32 {
		j := nodes[i].next
		if j < 0 {
			return noRank
		}
		k := nodes[j].next
		if k < 0 {
			return noRank
		}
		if r, ok := b.Rank(piece[i:k]); ok {
			return r
		}
		return noRank
	}
	h := make(mergeHeap, 0, n)
	for i := int32(0); i+2 <= n; i++ {
		if r := rankOf(i); r != noRank {
			nodes[i].rank = r
			h = append(h, mergeCandidate{r, i})
		}
	}
	h.init()
	count := int(n)
	for len(h) > 0 {
		top := h.pop()
		i := top.offset
		if nodes[i].rank != top.rank {
			continue
		}
		j := nodes[i].next
		k := nodes[j].next
		nodes[j].rank = noRank
		nodes[i].next = k
		if k >= 0 {
			nodes[k].prev = i
		}
		count--
		for _, bd := range [2]int32{i, nodes[i].prev} {
			if bd < 0 {
				continue
			}
			nodes[bd].rank = rankOf(bd)
			if nodes[bd].rank != noRank {
				h.push(mergeCandidate{nodes[bd].rank, bd})
			}
		}
	}
	return count
}

// mergeHeap is a min-heap by rank, then offset: among equal ranks the
// leftmost pair merges first.
type mergeHeap []mergeCandidate

func (h mergeHeap) less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].offset < h[b].offset
}

func (h mergeHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *mergeHeap) push(c mergeCandidate) {
	*h = append(*h, c)
	h.up(len(*h) - 1)
}

func (h *mergeHeap) pop() mergeCandidate {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	h.down(0)
	return top
}

func (h mergeHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (h mergeHeap) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if r := c + 1; r < len(h) && h.less(r, c) {
			c = r
		}
		if !h.less(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
