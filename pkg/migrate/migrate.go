// Package migrate finds, in a repository's code and tests, what MCP revision
// 2026-07-28 removes or renumbers, and says what replaces it (the seeds'
// migration advice as a command: mcp-eval migrate --scan DIR).
package migrate

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Rule is one thing 2026-07-28 breaks.
type Rule struct {
	ID      string
	Pattern *regexp.Regexp
	Finding string
	Fix     string
}

// quoted matches a string literal holding exactly s, in any common quote.
func quoted(s string) *regexp.Regexp { return quotedOr(s) }

// quotedOr matches a string literal holding exactly s, or one of the
// given expressions: how SDKs name the method instead of spelling it (the
// TypeScript SDK 1.x's request schemas, the Python SDK's decorators).
func quotedOr(s string, or ...string) *regexp.Regexp {
	q := regexp.QuoteMeta(s)
	return regexp.MustCompile(strings.Join(append([]string{`["'` + "`" + `]` + q + `["'` + "`" + `]`}, or...), "|"))
}

// pyDecorator matches a Python SDK low-level server's handler decorator,
// "@server.name(" at the start of a line; the bare name is too common.
func pyDecorator(name string) string { return `(?m:^\s*@[\w.]+\.` + name + `\()` }

// Rules are checked on every line, in this order (changelog.mdx Major 1-9,
// Minor 11-12; basic/index.mdx §Error Codes).
var Rules = []Rule{
	{"MIG-initialize", quotedOr("initialize", `\bInitializeRequestSchema\b`), "the initialize handshake is removed", "probe with server/discover; send protocolVersion, clientCapabilities and clientInfo in every request's _meta"},
	{"MIG-initialized", quotedOr("notifications/initialized", `\bInitializedNotificationSchema\b`), "notifications/initialized is removed", "drop it: requests are stateless, there is nothing to acknowledge"},
	{"MIG-session", regexp.MustCompile(`(?i)mcp-session-id`), "Mcp-Session-Id is removed: 2026-07-28 has no sessions", "carry cross-request state in explicit ids (MRTR requestState, subscriptions/listen)"},
	{"MIG-last-event-id", regexp.MustCompile(`(?i)last-event-id`), "Last-Event-ID stream resumption is removed", "re-issue a broken request under a new id; reconnect a subscription with a new subscriptions/listen"},
	{"MIG-ping", quotedOr("ping", `\bPingRequestSchema\b`), "ping is removed in both directions", "drop it; use transport-level health checks"},
	{"MIG-setLevel", quotedOr("logging/setLevel", `\bSetLevelRequestSchema\b`, pyDecorator("set_logging_level")), "logging/setLevel is removed", "send _meta io.modelcontextprotocol/logLevel on the requests that should log"},
	{"MIG-subscribe", quotedOr("resources/subscribe", `\bSubscribeRequestSchema\b`, pyDecorator("subscribe_resource")), "resources/subscribe is removed", "use subscriptions/listen with notifications.resourceSubscriptions"},
	{"MIG-unsubscribe", quotedOr("resources/unsubscribe", `\bUnsubscribeRequestSchema\b`, pyDecorator("unsubscribe_resource")), "resources/unsubscribe is removed", "cancel the subscriptions/listen request instead"},
	{"MIG-roots-changed", quotedOr("notifications/roots/list_changed", `\bRootsListChangedNotificationSchema\b`), "notifications/roots/list_changed is removed", "roots travel as MRTR input requests (roots/list) answered per request"},
	{"MIG-elicitation-complete", quoted("notifications/elicitation/complete"), "notifications/elicitation/complete is removed", "complete URL elicitation through the MRTR retry"},
	{"MIG-tasks", regexp.MustCompile(`["'` + "`" + `]tasks/(list|result)["'` + "`" + `]`), "tasks/list and tasks/result do not exist in 2026-07-28 (core tasks moved to the tasks extension without them)", "use the io.modelcontextprotocol/tasks extension: tasks/get, tasks/update, tasks/cancel"},
	{"MIG-32001", regexp.MustCompile(`-32001\b`), "-32001 was the pre-release number of HeaderMismatch (and a legacy SDK's \"Session not found\")", "use -32020 HeaderMismatch (HTTP 400)"},
	{"MIG-32002", regexp.MustCompile(`-32002\b`), "-32002 (resource not found) is removed", "return -32602 Invalid params with data.uri for a missing resource"},
	{"MIG-32003", regexp.MustCompile(`-32003\b`), "-32003 was the pre-release number of MissingRequiredClientCapability", "use -32021 with data.requiredCapabilities (HTTP 400)"},
	{"MIG-32004", regexp.MustCompile(`-32004\b`), "-32004 was the pre-release number of UnsupportedProtocolVersion", "use -32022 with data.supported and data.requested (HTTP 400)"},
	{"MIG-32042", regexp.MustCompile(`-32042\b`), "-32042 (URL elicitation required) is removed", "ask for URL elicitation as an MRTR input request"},
}

// Finding is one match.
type Finding struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Rule string `json:"rule"`
	Text string `json:"finding"`
	Fix  string `json:"fix"`
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s [%s]; fix: %s", f.Path, f.Line, f.Text, f.Rule, f.Fix)
}

// Limits of a scan: it reads code, not data or dependencies.
const (
	maxFileBytes = 1 << 20
	maxFiles     = 50000
)

var skipDirs = map[string]bool{".git": true, "node_modules": true, "vendor": true, "dist": true, "build": true, ".venv": true, "venv": true, "__pycache__": true, "target": true, ".next": true, "third_party": true}

var codeExt = map[string]bool{
	".go": true, ".ts": true, ".tsx": true, ".js": true, ".jsx": true, ".mjs": true, ".cjs": true, ".py": true,
	".rs": true, ".java": true, ".kt": true, ".cs": true, ".rb": true, ".php": true, ".swift": true, ".scala": true,
	".c": true, ".cc": true, ".cpp": true, ".h": true, ".hpp": true, ".ex": true, ".exs": true, ".dart": true,
	".json": true, ".yaml": true, ".yml": true, ".toml": true, ".sh": true,
}

// Scan walks dir and returns the findings, sorted by path and line. Paths
// start with dir, so they open from where the scan was run. Lock files and minified bundles are skipped.
func Scan(dir string) ([]Finding, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("scanning %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("scanning %s: not a directory", dir)
	}
	var out []Finding
	files := 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable entry is skipped, not fatal
		}
		if d.IsDir() {
			if path != dir && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if !d.Type().IsRegular() || !codeExt[strings.ToLower(filepath.Ext(name))] || strings.HasSuffix(name, ".min.js") || strings.Contains(name, "lock") {
			return nil
		}
		if files++; files > maxFiles {
			return fmt.Errorf("more than %d files; scan a smaller directory", maxFiles)
		}
		fs, err := scanFile(path, filepath.ToSlash(path))
		if err == nil {
			out = append(out, fs...)
		}
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Line < out[j].Line
	})
	return out, err
}

func scanFile(path, rel string) ([]Finding, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() > maxFileBytes {
		return nil, err
	}
	b := make([]byte, st.Size())
	if _, err := f.Read(b); err != nil && st.Size() > 0 {
		return nil, err
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return nil, nil // binary
	}
	var out []Finding
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), maxFileBytes)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		for _, r := range Rules {
			if r.Pattern.MatchString(line) {
				out = append(out, Finding{Path: rel, Line: n, Rule: r.ID, Text: r.Finding, Fix: r.Fix})
			}
		}
	}
	return out, nil
}
