package render

import (
	"fmt"
	"math"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/telemetry"
)

// Layer 3 figures as every renderer shows them. An absent figure is a
// dash, and an absent cost says "unknown": a missing price is never shown
// as $0.

// dur is a latency in ms or s; "–" when absent.
func dur(v *float64) string {
	if v == nil {
		return "–"
	}
	return durMs(*v)
}

// durMs picks the form by the value as printed, so that 9.96 ms is
// "10 ms" (not "10.0 ms" beside "10 ms") and 999.7 ms is "1.00 s".
func durMs(v float64) string {
	switch {
	case v >= 9995:
		return fmt.Sprintf("%.1f s", v/1000)
	case v >= 999.5:
		return fmt.Sprintf("%.2f s", v/1000)
	case v >= 9.95:
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.1f ms", v)
}

// usdOrUnknown is a cost with enough digits for a fraction of a cent.
func usdOrUnknown(v *float64) string {
	if v == nil {
		return "unknown"
	}
	return usdText(*v)
}

// usdText keeps at least two significant digits: a cheap model's cost per
// call ($0.000045) must not round to $0.00005, which would misstate its
// ratio to another model's by a tenth.
func usdText(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0 || a >= 0.01:
		return fmt.Sprintf("$%.4f", v)
	case a >= 0.0001:
		return fmt.Sprintf("$%.5f", v)
	}
	// Digits to the second significant one, at most nine: the report
	// rounds costs to a billionth of a dollar.
	d := min(9, 1-int(math.Floor(math.Log10(a))))
	return fmt.Sprintf("$%.*f", d, v)
}

// grouped groups thousands: 48,210.
func grouped(v int64) string {
	s := fmt.Sprintf("%d", v)
	if v < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// relChange is the change of now against base in percent, "" when either
// is absent or base is 0.
func relChange(now, base *float64) string {
	if now == nil || base == nil || *base == 0 {
		return ""
	}
	return relPercent(*now, *base)
}

// pointChange is the change of a rate in points.
func pointChange(now, base *float64) string {
	if now == nil || base == nil {
		return ""
	}
	return deltaPoints(*now - *base)
}

// withDelta appends a non-empty change in parentheses.
func withDelta(v, delta string) string {
	if delta == "" {
		return v
	}
	return v + " (" + delta + ")"
}

func rate(v *float64) string {
	if v == nil {
		return "–"
	}
	return percent(*v)
}

func tokensPer(v *float64) string {
	if v == nil {
		return "–"
	}
	return grouped(int64(math.Round(*v)))
}

// sparkline draws values as block characters, lowest to highest; an
// absent value is a space. It needs two values that differ to say
// anything, else it is "".
func sparkline(values []*float64) string {
	return sparklineIn(values, math.NaN(), math.NaN())
}

// sparklineIn draws values on the scale lo..hi (NaN: the values' own
// least and greatest).
func sparklineIn(values []*float64, lo, hi float64) string {
	least, most, n := math.Inf(1), math.Inf(-1), 0
	for _, v := range values {
		if v != nil {
			least, most, n = math.Min(least, *v), math.Max(most, *v), n+1
		}
	}
	if n < 2 {
		return ""
	}
	if math.IsNaN(lo) || math.IsNaN(hi) {
		lo, hi = least, most
	}
	bars := []rune("▁▂▃▄▅▆▇█")
	var b strings.Builder
	for _, v := range values {
		switch {
		case v == nil:
			b.WriteRune(' ')
		case hi == lo:
			b.WriteRune(bars[len(bars)/2])
		default:
			i := int(math.Round((*v - lo) / (hi - lo) * float64(len(bars)-1)))
			b.WriteRune(bars[max(0, min(len(bars)-1, i))])
		}
	}
	return b.String()
}

// modelColumns are the report's stored per-model columns, or for a report
// never compared, the same computed from the report alone.
func modelColumns(rep *report.Report) []report.ModelColumns {
	if t := rep.Telemetry; t != nil && len(t.Models) > 0 {
		return t.Models
	}
	return telemetry.Columns(rep, nil, nil)
}

// latencyOf names what a latency row measures.
func latencyOf(l report.Latency) string {
	switch l.Kind {
	case report.LatencyModel:
		if l.Subject == report.RoleJudge {
			return "judge calls"
		}
		return "model calls"
	case report.LatencyCase:
		return "case runs"
	}
	return l.Subject
}

// runCost is the run's total, "unknown" when a price was missing.
func runCost(t *report.Telemetry) string {
	if len(t.Usage) == 0 {
		return "–"
	}
	v, known := t.TotalCostUSD()
	if !known {
		return "unknown"
	}
	return usdText(v)
}
