package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/pipeline"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

const probeExamples = `  mcp-eval probe --cmd "go run ./golden-examples/cmd/example-server"
  mcp-eval probe --url http://127.0.0.1:3000/mcp --header "Authorization: Bearer $TOKEN"
  mcp-eval probe --cmd "npx -y @modelcontextprotocol/server-everything stdio" --json
`

// ProbeOutput is the --json shape of probe.
type ProbeOutput struct {
	Target            string                    `json:"target"`
	Era               mcpclient.Era             `json:"era"`
	ProtocolVersion   string                    `json:"protocolVersion"`
	SupportedVersions []string                  `json:"supportedVersions,omitempty"`
	ServerInfo        *mcpclient.Implementation `json:"serverInfo,omitempty"`
	Capabilities      json.RawMessage           `json:"capabilities,omitempty"`
	Instructions      string                    `json:"instructions,omitempty"`
	Tools             []ProbeTool               `json:"tools"`
	DroppedTools      []mcpclient.DroppedTool   `json:"droppedTools"`
	Probe             []mcpclient.ProbeStep     `json:"probe"`
	Notes             []string                  `json:"notes"`
	Anomalies         []transport.Anomaly       `json:"anomalies"`
	ToolsError        string                    `json:"toolsError,omitempty"`
}

// ProbeTool is a tool in probe's output.
type ProbeTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	ReadOnly    bool   `json:"readOnly"`
	// Destructive: annotated destructiveHint: true (what a user picking
	// a --call-tool NAME needs to see).
	Destructive bool `json:"destructive,omitempty"`
}

func runProbe(ctx context.Context, c *Command, args []string) int {
	var f planFlags
	var asJSON bool
	fs := c.newFlagSet("probe", "(--url URL | --cmd \"server args…\") [flags]", probeExamples)
	f.register(fs, flagsServer|flagsConfig)
	fs.BoolVar(&asJSON, "json", false, "print machine-readable JSON instead of text")
	if code := c.parse(fs, args); code >= 0 {
		return code
	}
	// The server as mcp-eval.yaml names it, as every command reads it.
	s, err := f.withFile(pipeline.Settings{}, true)
	if err != nil {
		c.errorf("probe", "%v", err)
		return ExitError
	}
	pl, err := pipeline.Resolve(s, c.env())
	if err != nil {
		c.errorf("probe", "%v", err)
		return ExitError
	}
	if pl.ServerUserNote != "" {
		fmt.Fprintln(c.Stderr, "mcp-eval: note:", pl.ServerUserNote)
	}
	ctx, cancel := context.WithTimeout(ctx, pl.Timeout)
	defer cancel()
	cl, err := pl.Connect(ctx, nil)
	if err != nil {
		c.errorf("probe", "%s: %s", pl.TargetDesc, explain(err))
		return ExitError
	}
	defer cl.Close()
	out := ProbeOutput{Target: pl.TargetDesc, Tools: []ProbeTool{}, DroppedTools: []mcpclient.DroppedTool{}, Notes: []string{}, Anomalies: []transport.Anomaly{}}
	info := cl.Info()
	out.Era, out.ProtocolVersion, out.SupportedVersions = info.Era, info.ProtocolVersion, info.SupportedVersions
	out.ServerInfo, out.Capabilities, out.Instructions, out.Probe = info.ServerInfo, info.Capabilities, info.Instructions, info.Probe
	tools, err := cl.ListTools(ctx)
	if err != nil {
		out.ToolsError = err.Error()
	} else {
		for _, t := range tools.Tools {
			destructive := t.Annotations != nil && t.Annotations.DestructiveHint != nil && *t.Annotations.DestructiveHint && !t.ReadOnly()
			out.Tools = append(out.Tools, ProbeTool{Name: t.Name, Description: firstLine(t.Description), ReadOnly: t.ReadOnly(), Destructive: destructive})
		}
		out.DroppedTools = append(out.DroppedTools, tools.Dropped...)
	}
	out.Notes = append(out.Notes, cl.Info().Notes...)
	if st, ok := cl.Transport().(*transport.StdioTransport); ok {
		out.Anomalies = append(out.Anomalies, st.Anomalies()...)
	}
	if err := c.redact.JSON(&out); err != nil {
		fmt.Fprintln(c.Stderr, "mcp-eval probe:", err)
		return ExitError
	}
	if asJSON {
		enc := json.NewEncoder(c.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintln(c.Stderr, "mcp-eval probe: writing JSON:", err)
			return ExitError
		}
	} else {
		printProbe(c.Stdout, &out)
	}
	if out.ToolsError != "" {
		if !asJSON {
			fmt.Fprintf(c.Stderr, "mcp-eval probe: listing tools failed: %s\n", sanitizeText(out.ToolsError))
		}
		return ExitError
	}
	return ExitOK
}

func printProbe(w io.Writer, o *ProbeOutput) {
	row := func(k, v string) { fmt.Fprintf(w, "%-14s %s\n", k, v) }
	row("target", sanitize(o.Target))
	if o.ServerInfo != nil {
		row("server", sanitize(o.ServerInfo.Name+" "+o.ServerInfo.Version))
	} else {
		row("server", "(no serverInfo)")
	}
	switch o.Era {
	case mcpclient.EraModern:
		row("era", "modern: speaks "+o.ProtocolVersion)
	case mcpclient.EraLegacy:
		row("era", fmt.Sprintf("legacy: this server speaks %s only (initialize handshake); it does not serve %s", sanitize(o.ProtocolVersion), mcpclient.Latest))
	}
	if len(o.SupportedVersions) > 0 {
		row("supported", sanitize(strings.Join(o.SupportedVersions, ", ")))
	}
	row("capabilities", capabilityNames(o.Capabilities))
	if o.Instructions != "" {
		row("instructions", sanitize(firstLine(o.Instructions)))
	}
	fmt.Fprintf(w, "\ntools (%d)\n", len(o.Tools))
	width := 0
	for _, t := range o.Tools {
		width = max(width, len(t.Name))
	}
	for _, t := range o.Tools {
		ro := ""
		switch {
		case t.ReadOnly:
			ro = " [read-only]"
		case t.Destructive:
			ro = " [destructive]"
		}
		fmt.Fprintf(w, "  %-*s  %s%s\n", width, sanitize(t.Name), sanitize(t.Description), ro)
	}
	if len(o.DroppedTools) > 0 {
		fmt.Fprintf(w, "\ndropped tools (invalid definitions, not used)\n")
		for _, d := range o.DroppedTools {
			fmt.Fprintf(w, "  %s: %s\n", sanitize(d.Name), sanitize(d.Reason))
		}
	}
	fmt.Fprintf(w, "\nera detection\n")
	for _, s := range o.Probe {
		status := ""
		if s.Status != 0 {
			status = fmt.Sprintf(" HTTP %d", s.Status)
		}
		fmt.Fprintf(w, "  %s (%s)%s → %s\n", s.Method, s.Version, status, sanitize(s.Outcome))
	}
	if len(o.Notes) > 0 {
		fmt.Fprintf(w, "\nnotes\n")
		for _, n := range o.Notes {
			fmt.Fprintf(w, "  - %s\n", sanitize(n))
		}
	}
	if len(o.Anomalies) > 0 {
		fmt.Fprintf(w, "\nstdout problems (STDIO-1: only JSON-RPC may appear on stdout)\n")
		for i, a := range o.Anomalies {
			if i == 10 {
				fmt.Fprintf(w, "  … and %d more\n", len(o.Anomalies)-10)
				break
			}
			fmt.Fprintf(w, "  %s: %s %q\n", a.Kind, sanitize(a.Detail), a.Excerpt)
		}
	}
}

func capabilityNames(raw json.RawMessage) string {
	var caps map[string]json.RawMessage
	if json.Unmarshal(raw, &caps) != nil || len(caps) == 0 {
		return "(none declared)"
	}
	return sanitize(strings.Join(sortedKeys(caps), ", "))
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if len(s) > 100 {
		s = s[:97] + "…"
	}
	return s
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}
