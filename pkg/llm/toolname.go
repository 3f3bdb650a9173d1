package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
)

// Tool-name limits per dialect (llm-providers.md §2.6): MCP allows 1–128
// characters of [A-Za-z0-9_.-]; OpenAI (both APIs) ^[a-zA-Z0-9_-]{1,64}$,
// Anthropic ^[a-zA-Z0-9_-]{1,128}$ — neither takes dots.
const (
	openAINameMax    = 64
	anthropicNameMax = 128
)

func nameLimit(dialect string) int {
	if dialect == DialectAnthropic {
		return anthropicNameMax
	}
	return openAINameMax
}

// nameMap translates tool names between MCP and one provider, both ways.
// It is a bijection over the names it was built from: names the provider
// accepts keep their name, the others get a sanitised one that collides
// with nothing.
type nameMap struct {
	toProvider map[string]string
	toMCP      map[string]string
}

// newNameMap maps names for a provider whose names are 1..maxLen chars of
// [A-Za-z0-9_-]. The result does not depend on the order of names: valid
// names are reserved first, then the others are mapped in sorted order,
// each to sanitise(name), or on collision to sanitise(name) cut short plus
// "_" and the first 6 (then 8, 10, …) hex digits of SHA-256(name).
func newNameMap(names []string, maxLen int) nameMap {
	m := nameMap{toProvider: map[string]string{}, toMCP: map[string]string{}}
	var pending []string
	for _, n := range names {
		if _, seen := m.toProvider[n]; seen {
			continue
		}
		if validName(n, maxLen) {
			m.toProvider[n], m.toMCP[n] = n, n
		} else {
			pending = append(pending, n)
		}
	}
	slices.Sort(pending)
	pending = slices.Compact(pending)
	for _, n := range pending {
		p := m.pick(n, maxLen)
		m.toProvider[n], m.toMCP[p] = p, n
	}
	return m
}

// pick finds a free provider name for an MCP name that is not one.
func (m nameMap) pick(n string, maxLen int) string {
	base := sanitiseName(n)
	if base == "" {
		base = "tool"
	}
	if c := cut(base, maxLen); m.free(c) {
		return c
	}
	sum := sha256.Sum256([]byte(n))
	h := hex.EncodeToString(sum[:])
	for k := 6; k <= len(h); k += 2 {
		suffix := "_" + h[:k]
		if len(suffix) >= maxLen {
			break
		}
		if c := cut(base, maxLen-len(suffix)) + suffix; m.free(c) {
			return c
		}
	}
	// Only reachable when an adversary picked names for SHA-256 prefixes:
	// count until free.
	for i := 1; ; i++ {
		suffix := "_" + strconv.Itoa(i)
		if c := cut(base, maxLen-len(suffix)) + suffix; m.free(c) {
			return c
		}
	}
}

func (m nameMap) free(c string) bool {
	_, taken := m.toMCP[c]
	return !taken
}

// provider is the name sent for an MCP tool. A name the map was not built
// from (a transcript naming a tool the server no longer lists) is only
// sanitised.
func (m nameMap) provider(mcp string) string {
	if p, ok := m.toProvider[mcp]; ok {
		return p
	}
	return sanitiseName(mcp)
}

// mcp is the MCP name of a tool the model called; a name the model made up
// comes back unchanged, so that it is scored as the wrong tool it is.
func (m nameMap) mcp(provider string) string {
	if n, ok := m.toMCP[provider]; ok {
		return n
	}
	return provider
}

// renamed lists the tools whose provider name differs (nil when none).
func (m nameMap) renamed() map[string]string {
	var r map[string]string
	for n, p := range m.toProvider {
		if n != p {
			if r == nil {
				r = map[string]string{}
			}
			r[n] = p
		}
	}
	return r
}

func validName(n string, maxLen int) bool {
	if n == "" || len(n) > maxLen {
		return false
	}
	for i := 0; i < len(n); i++ {
		if !nameByte(n[i]) {
			return false
		}
	}
	return true
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// sanitiseName replaces every byte outside [A-Za-z0-9_-] with "_" (a
// multi-byte rune becomes one "_").
func sanitiseName(n string) string {
	b := make([]byte, 0, len(n))
	for _, r := range n {
		if r < 0x80 && nameByte(byte(r)) {
			b = append(b, byte(r))
		} else {
			b = append(b, '_')
		}
	}
	return string(b)
}

func cut(s string, n int) string {
	if n < 1 {
		n = 1
	}
	if len(s) > n {
		return s[:n]
	}
	return s
}
