package conformance

import (
	"context"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

func TestSTDIOMutants(t *testing.T) {
	for _, c := range stdioFamily.checks {
		if c.Level != "MUST" {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

// The STDIO-4 mutant ignores EOF, so this waits for the transport's 2s
// grace before SIGTERM.
func TestSTDIO4Mutant(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the shutdown grace period")
	}
	assertShould(t, STDIO4)
}

func TestSTDIOInfo(t *testing.T) { assertPasses(t, STDIO3) }

// TestSTDIO5MutantFailsUnderLoad runs STDIO-5 on its mutant while every
// core is kept busy by other processes: the quick requests wait for the streaming call's first
// notification, so they reach a busy server however the goroutines are
// scheduled. A head start guessed as a delay lost this race in CI.
func TestSTDIO5MutantFailsUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the mutant several times")
	}
	// The load is other processes, as in CI (other test binaries, other
	// servers): spinning goroutines in this process would starve the
	// client itself, which no real run sees.
	for i := 0; i < 2*runtime.NumCPU(); i++ {
		spin := exec.Command("sh", "-c", "while :; do :; done")
		if err := spin.Start(); err != nil {
			t.Fatalf("starting a busy loop: %v", err)
		}
		t.Cleanup(func() { _ = spin.Process.Kill(); _ = spin.Wait() })
	}
	for i := 0; i < 5; i++ {
		// On the correct server the quick requests must have been
		// answered while the streaming call ran, or the check tested
		// nothing and the mutant below was caught by chance.
		_, good := runChecks(t, refTarget(t, "stdio"), 1, "STDIO-5")
		if msg := good["STDIO-5"].Outcome.Message; !strings.Contains(msg, "of them while") {
			t.Fatalf("run %d: STDIO-5 on the correct server did not interleave: %s", i+1, msg)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		rep, _, err := Run(ctx, refTarget(t, "stdio", "STDIO-5"), Options{Options: check.Options{Runs: 1, Only: []string{"STDIO-5"}}, CallTools: mrtrTestTools, ProbeTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second})
		cancel()
		if err != nil || len(rep.Checks) != 1 {
			t.Fatalf("run %d: %v (%d results)", i+1, err, len(rep.Checks))
		}
		r := rep.Checks[0]
		if !strings.Contains(r.Outcome.Message, "interleaved") {
			t.Fatalf("run %d: STDIO-5 did not judge interleaved requests: %s", i+1, r.Outcome.Message)
		}
		if r.Verdict != check.Failed {
			t.Fatalf("run %d: STDIO-5 on its mutant: %s, want fail: %s", i+1, r.Verdict, r.Outcome.Message)
		}
		located := false
		for _, ev := range r.Outcome.Evidence {
			located = located || ev.Pointer != ""
		}
		if !located {
			t.Fatalf("run %d: STDIO-5 failed on its mutant without pointing at the error: %s", i+1, r.Outcome.Message)
		}
	}
}
