package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcp-eval/mcp-eval-action/pkg/migrate"
)

const migrateExamples = `  mcp-eval migrate --scan .
  mcp-eval migrate --scan src --json
`

func runMigrate(_ context.Context, c *Command, args []string) int {
	var dir string
	var asJSON bool
	fs := c.newFlagSet("migrate", "--scan DIR [--json]", migrateExamples)
	fs.StringVar(&dir, "scan", "", "directory to scan for what MCP 2026-07-28 removes or renumbers")
	fs.BoolVar(&asJSON, "json", false, "print findings as JSON")
	if code := c.parse(fs, args); code >= 0 {
		return code
	}
	if dir == "" {
		fmt.Fprintln(c.Stderr, "mcp-eval migrate: name the directory to scan: --scan DIR")
		return ExitError
	}
	found, err := migrate.Scan(dir)
	if err != nil {
		fmt.Fprintln(c.Stderr, "mcp-eval migrate:", err)
		return ExitError
	}
	if asJSON {
		if found == nil {
			found = []migrate.Finding{}
		}
		enc := json.NewEncoder(c.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(found)
	} else {
		for _, f := range found {
			fmt.Fprintln(c.Stdout, sanitize(f.String()))
		}
		fmt.Fprintf(c.Stdout, "%d finding(s) in %s\n", len(found), sanitize(dir))
	}
	if len(found) > 0 {
		return ExitFindings
	}
	return ExitOK
}
