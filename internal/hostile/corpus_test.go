package hostile_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/internal/hostile"
	"github.com/mcp-eval/mcp-eval-action/pkg/atomicfile"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/conformance"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Bounds every hostile run is held to, whatever the server does.
const (
	// defaultDeadline bounds one `mcp-eval check` run (wall clock, the
	// CI machine busy with other tests). The harness's own deadlines
	// (--request-timeout 5s here) are what keep it far below.
	defaultDeadline = 60 * time.Second
	// slowDeadline is for the behaviours that cost seconds per server
	// process or answer by design: 4 s of shutdown escalation each, a
	// gigabyte to drain per answer.
	slowDeadline = 90 * time.Second
	// maxRSS bounds the peak resident memory of the mcp-eval process. The
	// largest single message accepted is 4 MiB and a stream 16 MiB; a
	// 1 GiB body, a 10 GiB gzip bomb or an endless stream must not move
	// the peak past this. The reference server needs about 20 MiB.
	maxRSS = 256 << 20
)

// finding is what the report must say about the server: a check whose
// outcome message contains text (case-insensitive).
type finding struct {
	// text is what the message must say; alternatives are separated by
	// " | " where which one the harness reaches first is timing.
	id, text string
}

// expectation is what one behaviour must lead to.
type expectation struct {
	// findings are checks that must not pass, with their message; with
	// pass set they must have passed or warned (the behaviour breaks no
	// MUST, and the report still says what the server did).
	findings []finding
	pass     bool
	// unjudged: the server's exit leaves the checks after it not judged,
	// and no rule was seen broken: exit 2, the findings errored. (Until
	// session 45 these exited 1: REM-1 and STDIO-5 failed the dead
	// process's errors as the server's answers, the README's "server
	// unreachable is never non-conformant" broken.)
	unjudged bool
	// harness is set when the harness cannot test the server at all:
	// exit 2, and stderr must say this.
	harness  string
	deadline time.Duration
	slow     bool // skipped with -short
	// flags are extra flags for mcp-eval check. The behaviours that cost
	// seconds per server process or per answer by design run only the
	// family that judges them (--only), to keep CI time down; a gigabyte
	// per answer also runs one check at a time, so that every request
	// meets its own gigabyte rather than a queue behind the others'.
	flags []string
}

// fastTimeouts make stalls cost seconds, not the default 30 s.
var fastTimeouts = []string{"--request-timeout", "2s", "--probe-timeout", "1s"}

// expectations are keyed by behaviour, or "behaviour/transport" where the
// transports differ. Every behaviour of the corpus must have one.
var expectations = map[string]expectation{
	"never-answers":       {harness: "no answer within", flags: fastTimeouts},
	"byte-per-second":     {harness: "no answer within", flags: fastTimeouts},
	"deep-nesting":        {findings: []finding{{"TOOL-1", "exceeded max depth"}}},
	"duplicate-keys":      {findings: []finding{{"TOOL-1", `the key "id" appears twice`}}},
	"invalid-utf8":        {findings: []finding{{"TOOL-1", "not valid UTF-8"}}},
	"huge-number":         {findings: []finding{{"DISC-2", "1e400"}, {"CACHE-1", "1e400"}}},
	"gigabyte-body":       {findings: []finding{{"TOOL-1", "larger than the 4194304-byte limit"}}},
	"gigabyte-body/stdio": {findings: []finding{{"TOOL-1", "larger than the 4194304-byte limit"}}, slow: true, flags: []string{"--only", "TOOL", "--concurrency", "1"}},
	"gzip-bomb":           {findings: []finding{{"TOOL-1", "larger than the 4194304-byte limit"}}},
	// The stream is abandoned at the size limit, or at the request's
	// deadline when a loaded machine reads it too slowly to reach it.
	"sse-endless":             {findings: []finding{{"TOOL-1", "larger than the 16777216-byte limit | no answer within"}}},
	"sse-comments":            {harness: "comment line", flags: fastTimeouts},
	"notification-flood":      {findings: []finding{{"LOG-1", "notifications/message"}}},
	"huge-error":              {findings: []finding{{"TOOL-1", "returned error -32603"}}},
	"stderr-flood":            {pass: true, findings: []finding{{"STDIO-3", "to stderr"}}},
	"stdout-flood":            {findings: []finding{{"STDIO-1", "not a JSON-RPC message"}}, flags: []string{"--only", "STDIO"}},
	"stdout-noise":            {findings: []finding{{"STDIO-1", "DEBUG handling | starting on stdio"}}},
	"exit-mid-response/stdio": {findings: []finding{{"TOOL-1", "exited with code 3"}}, unjudged: true},
	"exit-mid-response/http":  {findings: []finding{{"TOOL-1", "cut its answer short"}}},
	"ignore-sigterm":          {pass: true, findings: []finding{{"STDIO-4", "SIGKILL"}}, slow: true, flags: []string{"--only", "STDIO"}},
	"orphan-child":            {findings: []finding{{"TOOL-1", "exited with code 0"}}, unjudged: true},
	// With one request in flight the null id is that request's broken
	// answer ("result with id null"); with several it answers none of
	// them ("ids never sent", quoting it): which depends on timing, and
	// both name the null id.
	"null-id/stdio":  {findings: []finding{{"TOOL-1", "null"}}, flags: fastTimeouts},
	"null-id/http":   {findings: []finding{{"TOOL-1", "result without an id"}}},
	"server-request": {findings: []finding{{"RPC-4", "sampling/createMessage"}}},
	// On stdio a stray response reaches the checks that listen for
	// answers to notifications; on HTTP the stream check sees it.
	"wrong-then-right-id/stdio":  {findings: []finding{{"RPC-3", "JSON-RPC response"}}},
	"wrong-then-right-id/http":   {findings: []finding{{"HTTP-5", `"wrong-`}}},
	"unsolicited-response/stdio": {findings: []finding{{"RPC-3", "JSON-RPC response"}}},
	"unsolicited-response/http":  {findings: []finding{{"HTTP-5", `"never-sent"`}}},
	"redirect":                   {harness: "redirect to"},
	"ref-cycle":                  {pass: true, findings: []finding{{"SCHEMA-3", "$ref cycle"}}},
	"remote-ref":                 {findings: []finding{{"SCHEMA-2", "never fetched"}}},
	"many-subschemas":            {pass: true, findings: []finding{{"SCHEMA-3", "more than 5000 subschemas"}}},
	"ten-thousand-tools":         {pass: true, findings: []finding{{"TOOL-1", "10005 tools"}}},
	"huge-description":           {pass: true, findings: []finding{{"TOOL-1", "6 tools"}}},
	"hostile-names":              {pass: true, findings: []finding{{"TOOL-5", "does not match"}}},
	"workflow-commands":          {findings: []finding{{"RSRC-1", "forged by the server"}, {"TOOL-5", "set-output"}}},
	"secrets-probe":              {findings: []finding{{"PROMPT-1", "internal error"}}},
}

func expectationFor(behaviour, transport string) (expectation, bool) {
	if e, ok := expectations[behaviour+"/"+transport]; ok {
		return e, true
	}
	e, ok := expectations[behaviour]
	return e, ok
}

// TestHostileCorpus runs `mcp-eval check` (the built binary, as CI runs
// it) against every behaviour on every transport it exists on, and holds
// each run to the same bar: it ends by its deadline, does not panic, stays
// under maxRSS, says what the server did (a finding with its check id, or
// a harness error), writes JSON and JUnit that parse, renders Markdown in
// which nothing from the server is loose, and leaves no process behind.
func TestHostileCorpus(t *testing.T) {
	all := hostile.All()
	if len(all) < 25 {
		t.Fatalf("the corpus has %d behaviours, want at least 25", len(all))
	}
	// Two runs at a time: the machine has two cores, and each run starts
	// servers of its own.
	sem := make(chan struct{}, 2)
	for _, b := range all {
		for _, tr := range b.Transports {
			want, ok := expectationFor(b.Name, tr)
			if !ok {
				t.Errorf("behaviour %s has no expectation", b.Name)
				continue
			}
			t.Run(b.Name+"/"+tr, func(t *testing.T) {
				t.Parallel()
				if want.slow && testing.Short() {
					t.Skip("slow by design; runs without -short")
				}
				sem <- struct{}{}
				defer func() { <-sem }()
				runCorpusCase(t, b.Name, tr, want)
			})
		}
	}
}

func runCorpusCase(t *testing.T, behaviour, transport string, want expectation) {
	dir := reachableDir(t)
	tag := "HOSTILE_RUN=" + filepath.Base(dir)
	trip := tripwire(t)
	serverEnv := []string{"HOSTILE_TRIPWIRE=" + trip, tag}
	args := []string{"check", "--runs", "1", "--request-timeout", "5s", "--probe-timeout", "3s", "--timeout", "100s",
		"--out", filepath.Join(dir, "check.json"), "--junit", filepath.Join(dir, "check.xml")}
	if transport == "http" {
		args = append(args, "--url", hostileHTTP(t, behaviour, baseEnv(serverEnv...)))
	} else {
		args = append(args, "--cmd", bin.server+" --behaviour "+behaviour, "--cwd", dir)
		for _, kv := range serverEnv {
			args = append(args, "--server-env", kv)
		}
	}
	args = append(args, want.flags...)
	deadline := want.deadline
	if deadline == 0 {
		deadline = defaultDeadline
		if want.slow {
			deadline = slowDeadline
		}
	}
	r := runMCPEval(t, deadline, dir, baseEnv(), args...)
	t.Logf("exit %d in %s, peak RSS %.1f MiB", r.code, r.wall.Round(time.Millisecond), float64(r.maxRSS)/(1<<20))
	noPanic(t, r)
	if r.maxRSS > maxRSS {
		t.Errorf("peak RSS %.1f MiB, over the %d MiB bound", float64(r.maxRSS)/(1<<20), maxRSS>>20)
	}
	if transport == "stdio" {
		noLeftovers(t, tag)
	}
	noWorkflowCommands(t, r.stdout)
	noWorkflowCommands(t, r.stderr)
	if want.harness != "" {
		if r.code != 2 || !strings.Contains(r.stderr, want.harness) {
			t.Fatalf("want a harness error (exit 2) saying %q, got exit %d\nstderr:\n%s", want.harness, r.code, tail(r.stderr))
		}
		return
	}
	wantCode := 1
	switch {
	case want.pass:
		wantCode = 0
	case want.unjudged:
		wantCode = 2
	}
	if r.code != wantCode {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, wantCode, tail(r.stdout), tail(r.stderr))
	}
	l0 := readCheckJSON(t, filepath.Join(dir, "check.json"))
	for _, f := range want.findings {
		assertFinding(t, l0, f, want.pass)
	}
	wellFormedXML(t, filepath.Join(dir, "check.xml"))
	renderedSafely(t, dir, l0)
}

func readCheckJSON(t *testing.T, path string) *conformance.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("--out wrote nothing: %v", err)
	}
	if len(b) > 8<<20 {
		t.Errorf("the JSON report is %d bytes: server text is not bounded in it", len(b))
	}
	rep, err := report.Parse(b)
	if err != nil || rep.Conformance == nil {
		t.Fatalf("--out is not a report with Layer 0 results: %v", err)
	}
	return rep.Conformance
}

func assertFinding(t *testing.T, l0 *conformance.Report, f finding, pass bool) {
	t.Helper()
	for _, r := range l0.Checks {
		if r.ID != f.id {
			continue
		}
		failed := r.Verdict == check.Failed || r.Verdict == check.Errored || r.Verdict == check.Warned
		if pass && (r.Verdict == check.Failed || r.Verdict == check.Errored) {
			t.Errorf("%s: %s, want pass or warn: %s", f.id, r.Verdict, r.Outcome.Message)
		}
		if !pass && !failed {
			t.Errorf("%s: %s, want a finding about %q", f.id, r.Verdict, f.text)
		}
		said := false
		for _, alt := range strings.Split(f.text, " | ") {
			said = said || strings.Contains(strings.ToLower(r.Outcome.Message), strings.ToLower(alt))
		}
		if !said {
			t.Errorf("%s: message %q does not say %q", f.id, r.Outcome.Message, f.text)
		}
		return
	}
	t.Errorf("no result for %s in the report", f.id)
}

func wellFormedXML(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("--junit wrote nothing: %v", err)
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	for {
		if _, err := dec.Token(); err == io.EOF {
			return
		} else if err != nil {
			t.Fatalf("the JUnit file is not well-formed XML: %v", err)
		}
	}
}

// renderedSafely turns the check's JSON into the report.json `mcp-eval run`
// writes and renders it with `mcp-eval report`: the PR comment (with its
// marker), the job summary and the terminal text.
func renderedSafely(t *testing.T, dir string, l0 *conformance.Report) {
	t.Helper()
	rep := report.FromConformance(l0, dir)
	now := time.Now().UTC()
	rep.Run = report.Run{HarnessVersion: "test", StartedAt: now, FinishedAt: now}
	path := filepath.Join(dir, "report.json")
	if err := saveReport(path, rep); err != nil {
		t.Fatalf("the check's report does not make a valid report.json: %v", err)
	}
	for _, args := range [][]string{
		{"report", "--in", path, "--format", "markdown", "--marker", "<!-- mcp-eval:ci -->"},
		{"report", "--in", path, "--format", "markdown"},
	} {
		r := runMCPEval(t, 30*time.Second, dir, baseEnv(), args...)
		if r.code != 0 {
			t.Fatalf("mcp-eval %v: exit %d: %s", args, r.code, r.stderr)
		}
		if len(r.stdout) > 65536 {
			t.Errorf("the Markdown body is %d bytes, over GitHub's comment limit", len(r.stdout))
		}
		if p := hostile.MarkdownProblems(r.stdout); len(p) > 0 {
			t.Errorf("the Markdown lets server text loose:\n%s\n--- body:\n%s", strings.Join(p, "\n"), tail(r.stdout))
		}
	}
	r := runMCPEval(t, 30*time.Second, dir, baseEnv(), "report", "--in", path, "--format", "text", "-v")
	noWorkflowCommands(t, r.stdout)
}

// noWorkflowCommands fails when a line of output would be read by the
// GitHub runner as a workflow command (it trims the line, then looks for
// "::"). mcp-eval's own annotations carry a title property; anything else
// starting with "::" was written by the server.
func noWorkflowCommands(t *testing.T, out string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		s := strings.TrimSpace(l)
		if !strings.HasPrefix(s, "::") {
			continue
		}
		ours := false
		for _, p := range []string{"::notice title=", "::warning title=", "::error title=", "::stop-commands::mcp-eval-", "::mcp-eval-"} {
			ours = ours || strings.HasPrefix(s, p)
		}
		if !ours {
			t.Errorf("a line of output is a workflow command the server wrote: %q", l)
		}
	}
}

func saveReport(path string, rep *report.Report) error {
	data, err := report.Marshal(rep)
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, data)
}
