package yamlsyntax

import (
	"bytes"
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func decodeErr(t *testing.T, src string) error {
	t.Helper()
	var n yaml.Node
	err := yaml.NewDecoder(strings.NewReader(src)).Decode(&n)
	if err == nil {
		t.Fatalf("%q parses", src)
	}
	return err
}

// The loaders' tests cover the shapes of fault; these cover what the
// loaders cannot reach easily: the budget's fallback, line ends, and
// errors that are not syntax errors.
func TestLocate(t *testing.T) {
	many := strings.Repeat("  y,\n", maxParses+10)
	cases := []struct {
		name, src string
		line      int
	}{
		// Past the budget, yaml.v3's line stands when the file cut after
		// it fails (a scanner error, counted from 1) ...
		{"unterminated quote far above the end", "a: 1\nb: \"x\n" + many, 2},
		// ... and is one too low when the cut parses (a parser error,
		// counted from 0).
		{"unclosed bracket far above the end", "a: 1\nb: [x,\n" + many + "  z\n", 2},
		{"CRLF line ends", "a: 1\r\nb: [1\r\nc: 2\r\n", 2},
		{"comment lines are not an answer", "a: 1\n# b\n  # c\nd: [\n", 4},
		{"a tab before a comment", "a: 1\n\t# b\nc: 2\n", 2},
		{"a block scalar before the fault", "a: |\n  x\n\n  # y\nb: [1\nc: 2\n", 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			line, ok := Locate([]byte(c.src), decodeErr(t, c.src))
			if !ok || line != c.line {
				t.Errorf("Locate = %d, %v; want %d, true", line, ok, c.line)
			}
		})
	}
}

// An error from mapping parsed nodes onto a type carries its own line.
func TestLocateNotSyntax(t *testing.T) {
	src := []byte("a: x\n")
	var v struct{ A int }
	err := yaml.Unmarshal(src, &v)
	if err == nil {
		t.Fatal("decoded")
	}
	if line, ok := Locate(src, err); ok {
		t.Errorf("Locate = %d, true; want false", line)
	}
}

func TestProblem(t *testing.T) {
	for src, want := range map[string]string{
		"a: 1\nb: [1\nc: 2\n": "did not find expected ',' or ']'",
		"]\n":                 "did not find expected node content",
	} {
		if got := Problem(decodeErr(t, src)); got != want {
			t.Errorf("Problem(%q) = %q, want %q", src, got, want)
		}
	}
}

// On real files broken at random, the line found is in the file, the file
// cut above it parses and the file cut after it does not. (A longer run
// found a tab before a comment taken for a blank line; TestLocate keeps
// that case.)
func TestLocateMutatedFiles(t *testing.T) {
	var seeds [][]byte
	for _, f := range []string{"../../golden-examples/tasks.yaml", "../../golden-examples/mcp-eval.yaml", "../golden/testdata/ok/full.yaml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	rng := rand.New(rand.NewSource(1))
	chars := []byte(" []{}\"'\t\n:-#,|>&*!%@`")
	broken := 0
	for i := 0; broken < 300 && i < 3000; i++ {
		src := bytes.Clone(seeds[i%len(seeds)])
		for range 1 + rng.Intn(3) {
			p := rng.Intn(len(src))
			switch rng.Intn(3) {
			case 0:
				src = slices.Insert(src, p, chars[rng.Intn(len(chars))])
			case 1:
				src = slices.Delete(src, p, p+1)
			default:
				src[p] = chars[rng.Intn(len(chars))]
			}
		}
		var n yaml.Node
		err := yaml.NewDecoder(bytes.NewReader(src)).Decode(&n)
		if err == nil {
			continue
		}
		broken++
		line, ok := Locate(src, err)
		starts := lineStarts(src)
		if !ok || line < 1 || line > len(starts) {
			t.Fatalf("Locate = %d, %v for a file of %d lines: %v\n%s", line, ok, len(starts), err, src)
		}
		if !parses(bytes.NewReader(src[:prefixEnd(src, starts, line-1)])) || parses(bytes.NewReader(src[:prefixEnd(src, starts, line)])) {
			t.Fatalf("Locate = %d is not where the file stops parsing: %v\n%s", line, err, src)
		}
	}
	if broken < 100 {
		t.Fatalf("only %d broken files", broken)
	}
}
