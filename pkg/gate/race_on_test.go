//go:build race

package gate

// raceDetector is true under -race, which slows the simulation tenfold
// and has nothing to find in it (one goroutine).
const raceDetector = true
