package poison

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// BenchmarkScan1000Tools scans the listing of a server of 1,000 tools like
// interop's go-sdk server with -tools 1000 (the issue-15 benchmark's large
// twin), twice listed as the drift rule compares. The scan runs once per
// Layer 0 run, in the exclusive tail where nothing else keeps the cores busy.
func BenchmarkScan1000Tools(b *testing.B) {
	tools := make([]mcpclient.Tool, 1000)
	for i := range tools {
		raw := fmt.Sprintf(`{"name":"lookup_%04d","title":"Lookup %d","description":"Look up records in table %d by key. Returns at most limit records as text.","inputSchema":{"type":"object","properties":{"key":{"type":"string","description":"the record key, e.g. K-0001"},"limit":{"type":"integer","description":"most records to return (1-50)"}},"required":["key"],"additionalProperties":false}}`, i, i, i)
		if err := json.Unmarshal([]byte(raw), &tools[i]); err != nil {
			b.Fatal(err)
		}
		tools[i].Raw = json.RawMessage(raw)
	}
	b.ReportAllocs()
	for b.Loop() {
		if fs := Scan(tools, tools); len(fs) != 0 {
			b.Fatalf("%d findings on plain tools, first %s", len(fs), fs[0])
		}
	}
}
