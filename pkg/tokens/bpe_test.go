package tokens

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiktoken-go/tokenizer"
)

// TestMatchesLibrary counts the same texts with the embedded vocabularies
// and with github.com/tiktoken-go/tokenizer, which they are written from:
// every count must agree. The texts are this repository's own sources and
// docs (code, prose, JSON, non-ASCII) plus random bytes and long runs that
// take the heap merge.
func TestMatchesLibrary(t *testing.T) {
	var texts []string
	for _, glob := range []string{"*.go", "../../docs/*.md", "../report/*.json", "../config/*.json"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, string(b))
		}
	}
	if len(texts) < 5 {
		t.Fatalf("found %d texts to compare on", len(texts))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		b := make([]byte, 1+rng.IntN(400))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		texts = append(texts, string(b))
	}
	texts = append(texts, strings.Repeat("a", 500), strings.Repeat("ab1 ", 300), strings.Repeat("日本語", 200),
		"Städtename,    z. B. „Zürich“ 🌧️ 12345678901234 <|endoftext|>", "")
	for _, enc := range []string{O200kBase, Cl100kBase} {
		lib, err := tokenizer.Get(tokenizer.Encoding(enc))
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewCounter(enc)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range texts {
			want, err := lib.Count(s)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Count(s)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s: text %d (%.40q…): %d tokens, the library counts %d", enc, i, s, got, want)
			}
		}
	}
}

// TestVocabularyMatchesLibrary checks every rank of the embedded
// vocabularies against the library's: a stale .vocab file fails here.
func TestVocabularyMatchesLibrary(t *testing.T) {
	for _, v := range []struct{ enc, data, split string }{{O200kBase, o200kVocab, o200kSplit}, {Cl100kBase, cl100kVocab, cl100kSplit}} {
		lib, err := tokenizer.Get(tokenizer.Encoding(v.enc))
		if err != nil {
			t.Fatal(err)
		}
		b, err := newBPE(v.data, v.split)
		if err != nil {
			t.Fatal(err)
		}
		for r := uint32(0); r < b.Len(); r++ {
			tok := b.Token(r)
			want, err := lib.Decode([]uint{uint(r)})
			if tok == "" {
				if err == nil {
					t.Fatalf("%s: rank %d is %q in the library, missing here", v.enc, r, want)
				}
				continue
			}
			if err != nil || want != tok {
				t.Fatalf("%s: rank %d is %q here, %q (%v) in the library", v.enc, r, tok, want, err)
			}
			if got, ok := b.Rank(tok); !ok || got != r {
				t.Fatalf("%s: rank(%q) = %d, %v; want %d", v.enc, tok, got, ok, r)
			}
		}
		if _, err := lib.Decode([]uint{uint(b.Len())}); err == nil && v.enc == Cl100kBase {
			t.Fatalf("%s: the library has a rank %d past the embedded vocabulary", v.enc, b.Len())
		}
	}
}

// BenchmarkFirstCount is what a run pays for its first tool-surface count:
// a fresh process loads the vocabulary and counts a 1,000-tool array, with
// the library (the old way) and with the embedded vocabulary. Each
// iteration is a child process (this test binary), so the load is never
// cached; cpu-ms/op and maxrss-MB are the child's.
func BenchmarkFirstCount(b *testing.B) {
	for _, mode := range []string{"library", "embedded"} {
		b.Run(mode, func(b *testing.B) {
			var cpu time.Duration
			var rss int64
			for range b.N {
				cmd := exec.Command(os.Args[0], "-test.run=^TestFirstCountChild$")
				cmd.Env = append(os.Environ(), "TOKENS_FIRST_COUNT="+mode)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
					rss = max(rss, ru.Maxrss)
				}
			}
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(rss)/1024, "maxrss-MB")
		})
	}
}

// TestFirstCountChild is BenchmarkFirstCount's child.
func TestFirstCountChild(t *testing.T) {
	mode := os.Getenv("TOKENS_FIRST_COUNT")
	if mode == "" {
		t.Skip("run by BenchmarkFirstCount")
	}
	var sb strings.Builder
	sb.WriteString("[")
	for i := range 1000 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"type":"function","function":{"name":"tool_%d","description":"Looks up record %d in the catalogue and returns it","parameters":{"type":"object","properties":{"id":{"type":"string","description":"the record's id"}},"required":["id"]}}}`, i, i)
	}
	sb.WriteString("]")
	var n int
	var err error
	if mode == "library" {
		var lib tokenizer.Codec
		if lib, err = tokenizer.Get(tokenizer.O200kBase); err == nil {
			n, err = lib.Count(sb.String())
		}
	} else {
		c, _ := NewCounter(O200kBase)
		n, err = c.Count(sb.String())
	}
	if err != nil || n == 0 {
		t.Fatal(n, err)
	}
}
