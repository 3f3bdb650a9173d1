//go:build race

package conformance

// raceEnabled: the race detector slows every server start several times.
const raceEnabled = true
