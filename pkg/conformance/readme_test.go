package conformance

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

// readmeCounts is the README sentence that states the size of Layer 0.
var readmeCounts = regexp.MustCompile("`mcp-eval check` runs (\\d+) checks over Streamable HTTP, (\\d+) of them MUST, and (\\d+) over stdio, (\\d+) of them MUST, in (\\d+) families")

// The README states how many checks run and how many are MUST; the numbers
// drift whenever a check is added, so they are compared with the registry.
func TestReadmeStatesTheRegistrysCounts(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The sentence is wrapped at any space.
	text := strings.Join(strings.Fields(string(b)), " ")
	m := readmeCounts.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("README.md has no sentence matching %s", readmeCounts)
	}
	count := func(kind string) (n, must int) {
		for _, c := range Registry() {
			if c.Transports.Has(kind) {
				n++
				if c.Level == check.Must {
					must++
				}
			}
		}
		return n, must
	}
	httpN, httpMust := count("http")
	stdioN, stdioMust := count("stdio")
	want := []int{httpN, httpMust, stdioN, stdioMust, len(Families())}
	for i, name := range []string{"HTTP checks", "HTTP MUST checks", "stdio checks", "stdio MUST checks", "families"} {
		if got, _ := strconv.Atoi(m[i+1]); got != want[i] {
			t.Errorf("README.md states %d %s; the registry has %d", got, name, want[i])
		}
	}
}
