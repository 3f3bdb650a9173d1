package conformance

import "testing"

func TestLOGMutants(t *testing.T) {
	for _, c := range logFamily.checks {
		if c.Level != "MUST" {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

func TestLOG4Mutant(t *testing.T) { assertShould(t, LOG4) }

func TestLOGRank(t *testing.T) {
	if logRank("debug") != 0 || logRank("emergency") != 7 || logRank("notice") <= logRank("info") || logRank("verbose") != -1 {
		t.Fatal("wrong level order")
	}
}
