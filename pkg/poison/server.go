package poison

import (
	"context"
	"fmt"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// ScanServer lists the server's tools a second time and scans both
// listings. first is the listing already made (Layer 0's
// conformance.Report.Tools()); when it is nil the tools are listed twice
// here. The cost is one or two tools/list calls.
func ScanServer(ctx context.Context, c *mcpclient.Client, first []mcpclient.Tool) ([]Finding, error) {
	if first == nil {
		lt, err := c.ListTools(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the tools: %w", err)
		}
		first = lt.Tools
	}
	lt, err := c.ListTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the tools a second time: %w", err)
	}
	again := lt.Tools
	if again == nil {
		again = []mcpclient.Tool{}
	}
	return Scan(first, again), nil
}
