package transport

import "fmt"

// Bounds on what a transport keeps of a server's output. The server under
// test is untrusted: one that floods stdout with noise, stray responses or
// notifications must not make the harness keep all of it. The first ones are
// evidence enough; the rest are counted in one closing anomaly.
const (
	// maxKept bounds the anomalies, unattributed notifications and
	// per-exchange notifications or server requests kept.
	maxKept = 1000
	// maxKeptBytes bounds the raw size of the messages kept per exchange,
	// and of the unattributed notifications of a stdio transport.
	maxKeptBytes = 16 << 20
)

// keepBudget decides, message by message, whether one more is kept.
type keepBudget struct {
	n       int
	bytes   int64
	dropped int
}

// take reports whether a message of size bytes fits; the first one that
// does not returns first=true so the caller records one anomaly.
func (b *keepBudget) take(size int) (ok, first bool) {
	if b.n < maxKept && b.bytes+int64(size) <= maxKeptBytes {
		b.n++
		b.bytes += int64(size)
		return true, false
	}
	b.dropped++
	return false, b.dropped == 1
}

// floodAnomaly is recorded once when a budget overflows.
func floodAnomaly(what string) Anomaly {
	return Anomaly{Kind: "flood", Detail: fmt.Sprintf("more than %d %s (or %d MiB) from the server; the rest were dropped", maxKept, what, maxKeptBytes>>20)}
}
