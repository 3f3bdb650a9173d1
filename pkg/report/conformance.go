package report

import "github.com/mcp-eval/mcp-eval-action/pkg/conformance"

// FromConformance starts a report from a Layer 0 result: the section
// itself and the server identity it found. The target's paths are made
// relative to the workspace.
func FromConformance(c *conformance.Report, workspace string) *Report {
	r := New()
	r.Conformance = c
	target := c.Target
	if c.Transport == "stdio" {
		target = RelCommand(workspace, target)
		c.Target = target
	}
	r.Server = Server{Target: target, Transport: c.Transport, Era: string(c.Era), ProtocolVersion: c.ProtocolVersion}
	if c.ServerInfo != nil {
		r.Server.Name, r.Server.Version = c.ServerInfo.Name, c.ServerInfo.Version
	}
	return r
}
