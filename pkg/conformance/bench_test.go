package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

// BenchmarkCheck measures a whole `mcp-eval check` run (connect, era probe,
// facts, every check, MUST checks ×5) against the reference server on
// loopback. Figures and the command are in docs/benchmarks.md.
//
//	go test ./pkg/conformance -run '^$' -bench BenchmarkCheck -benchtime 20x
func BenchmarkCheck(b *testing.B) {
	for _, kind := range []string{"http", "stdio"} {
		b.Run(kind, func(b *testing.B) {
			target := refTarget(b, kind)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				rep, _, err := Run(ctx, target, Options{Options: check.Options{Runs: 5}})
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				if i == 0 {
					b.ReportMetric(float64(len(rep.Checks)), "checks")
				}
			}
		})
	}
}
