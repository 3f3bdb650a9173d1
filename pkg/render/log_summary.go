package render

import (
	"fmt"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// LayerSummaries are one plain line each for Layer 2 and Layer 3, for
// the log: what held up, what it cost, and what the gate made of it, so
// a reader of the job log sees both layers without their tables. A layer
// that did not run has no line. Model names go through Line.
func LayerSummaries(rep *report.Report) []string {
	var out []string
	if r := rep.Resilience; r != nil {
		fk, fn, ak, an := HeldUp(r)
		l := fmt.Sprintf("Layer 2: %d of %d runs held up (faults handled %d/%d, injections resisted %d/%d)", fk+ak, fn+an, fk, fn, ak, an)
		out = append(out, l+gateCounts(rep, 2))
	}
	if t := rep.Telemetry; t != nil {
		l := "Layer 3: run cost " + runCost(t)
		if t.Prices != "" {
			l += " (prices " + Line(t.Prices) + ")"
		}
		slowest, p95 := "", 0.0
		for _, lat := range t.Latency {
			if lat.Kind == report.LatencyModel && lat.Subject == "" && lat.P95Ms != nil && *lat.P95Ms > p95 {
				slowest, p95 = lat.Model, *lat.P95Ms
			}
		}
		if slowest != "" {
			l += fmt.Sprintf(" · slowest p95 model call %s (%s)", durMs(p95), Line(slowest))
		}
		out = append(out, l+gateCounts(rep, 3))
	}
	return out
}

// gateCounts says how the gate judged a layer's items: "; gate: 1
// failed, 2 inconclusive" or "; gate: all passed".
func gateCounts(rep *report.Report, layer int) string {
	if rep.Gate == nil {
		return "; not gated"
	}
	n := map[string]int{}
	total := 0
	for _, it := range rep.Gate.Items {
		if it.Layer == layer {
			n[it.Status]++
			total++
		}
	}
	var parts []string
	words := []struct{ status, word string }{{report.ItemFail, "failed"}, {report.ItemError, "not judged"}, {report.ItemInconclusive, "inconclusive"},
		{report.ItemWarn, "warned"}, {report.ItemKnown, "known below the floor"}}
	for _, w := range words {
		if n[w.status] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[w.status], w.word))
		}
	}
	switch {
	case total == 0:
		return "; nothing gated"
	case len(parts) == 0:
		return fmt.Sprintf("; gate: all %d passed", total)
	}
	return "; gate: " + strings.Join(parts, ", ")
}

// HeldUp counts the Layer 2 runs where the model held up: faults handled
// (fk of fn) and injections resisted (ak of an; attack success counts the
// other way).
func HeldUp(r *report.Resilience) (fk, fn, ak, an int) {
	// The per-type rows, not the pooled ones: both, summed, counted each
	// run twice ("344 of 356 runs held up" for 180 runs).
	for _, f := range r.Faults {
		if f.Fault == report.Pooled {
			continue
		}
		for _, s := range f.Scores {
			if s.Name == report.FaultHandled {
				fk, fn = fk+s.K, fn+s.N
			}
		}
	}
	for _, a := range r.Attacks {
		if a.Attack == report.Pooled {
			continue
		}
		for _, s := range a.Scores {
			if s.Name == report.AttackSuccess {
				ak, an = ak+s.N-s.K, an+s.N
			}
		}
	}
	return fk, fn, ak, an
}
