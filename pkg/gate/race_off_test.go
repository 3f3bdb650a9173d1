//go:build !race

package gate

const raceDetector = false
