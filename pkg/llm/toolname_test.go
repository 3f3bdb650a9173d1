package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func hexSHA(name string, n int) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])[:n]
}

func TestNameMap(t *testing.T) {
	long70 := strings.Repeat("x", 70)
	cases := []struct {
		name  string
		in    []string
		max   int
		want  map[string]string // MCP → provider, for every input
		notes string
	}{
		{name: "valid names kept", in: []string{"get_weather", "search-docs", "A1"}, max: 64,
			want: map[string]string{"get_weather": "get_weather", "search-docs": "search-docs", "A1": "A1"}},
		{name: "dots become underscores", in: []string{"weather.get", "files.read.v2"}, max: 64,
			want: map[string]string{"weather.get": "weather_get", "files.read.v2": "files_read_v2"}},
		{name: "collision with a valid name gets a hash suffix", in: []string{"a.b", "a_b"}, max: 64,
			want: map[string]string{"a_b": "a_b", "a.b": "a_b_" + hexSHA("a.b", 6)}},
		{name: "two invalid names sanitising alike", in: []string{"a/b", "a.b"}, max: 64,
			// sorted: "a.b" < "a/b"; the first takes a_b.
			want: map[string]string{"a.b": "a_b", "a/b": "a_b_" + hexSHA("a/b", 6)}},
		{name: "an adversary holding the 6-digit suffix pushes to 8", in: []string{"a.b", "a_b", "a_b_" + hexSHA("a.b", 6)}, max: 64,
			want: map[string]string{"a_b": "a_b", "a_b_" + hexSHA("a.b", 6): "a_b_" + hexSHA("a.b", 6), "a.b": "a_b_" + hexSHA("a.b", 8)}},
		{name: "too long for OpenAI is cut to 64", in: []string{long70 + "1", long70 + "2"}, max: 64,
			want: map[string]string{long70 + "1": long70[:64], long70 + "2": long70[:57] + "_" + hexSHA(long70+"2", 6)}},
		{name: "Anthropic allows 128", in: []string{long70 + "1"}, max: 128,
			want: map[string]string{long70 + "1": long70 + "1"}},
		{name: "non-ASCII and empty", in: []string{"météo", ""}, max: 64,
			want: map[string]string{"météo": "m_t_o", "": "tool"}},
		{name: "duplicates collapse", in: []string{"x.y", "x.y"}, max: 64,
			want: map[string]string{"x.y": "x_y"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newNameMap(c.in, c.max)
			if !reflect.DeepEqual(m.toProvider, c.want) {
				t.Errorf("map = %v, want %v", m.toProvider, c.want)
			}
			for n, p := range m.toProvider {
				if m.mcp(p) != n {
					t.Errorf("mcp(%q) = %q, want %q", p, m.mcp(p), n)
				}
			}
			// Order of the tool list must not matter.
			rev := append([]string(nil), c.in...)
			for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
				rev[i], rev[j] = rev[j], rev[i]
			}
			if m2 := newNameMap(rev, c.max); !reflect.DeepEqual(m2.toProvider, m.toProvider) {
				t.Errorf("reversed input maps differently: %v", m2.toProvider)
			}
		})
	}
}

func TestNameMapUnknownNames(t *testing.T) {
	m := newNameMap([]string{"a.b"}, 64)
	if got := m.mcp("not_offered"); got != "not_offered" {
		t.Errorf("an invented name came back as %q", got)
	}
	if got := m.provider("c.d"); got != "c_d" {
		t.Errorf("provider of an unlisted name = %q, want it sanitised", got)
	}
	if got := m.renamed(); !reflect.DeepEqual(got, map[string]string{"a.b": "a_b"}) {
		t.Errorf("renamed = %v", got)
	}
	if newNameMap([]string{"ok"}, 64).renamed() != nil {
		t.Error("renamed is not nil when nothing was renamed")
	}
}

// Property: over many random tool lists drawn from a small alphabet (so
// collisions are frequent), the map is a bijection onto valid names.
func TestNameMapBijective(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("ab._-/é")
	for round := 0; round < 500; round++ {
		var names []string
		for i := 0; i < 1+r.IntN(12); i++ {
			var b strings.Builder
			for j := 0; j < r.IntN(6); j++ {
				b.WriteRune(alphabet[r.IntN(len(alphabet))])
			}
			if r.IntN(10) == 0 {
				b.WriteString(strings.Repeat("z", 60+r.IntN(10)))
			}
			names = append(names, b.String())
		}
		max := 64
		if round%2 == 1 {
			max = 8 // tight limit: truncation collisions everywhere
		}
		m := newNameMap(names, max)
		seen := map[string]string{}
		for _, n := range names {
			p, ok := m.toProvider[n]
			if !ok {
				t.Fatalf("%q not mapped (names %q)", n, names)
			}
			if !validName(p, max) {
				t.Fatalf("%q mapped to invalid %q (limit %d)", n, p, max)
			}
			if other, dup := seen[p]; dup && other != n {
				t.Fatalf("%q and %q both map to %q", n, other, p)
			}
			seen[p] = n
			if m.mcp(p) != n {
				t.Fatalf("round trip of %q failed: %q", n, m.mcp(p))
			}
		}
	}
}
