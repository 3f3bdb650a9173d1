package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/internal/interop"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	// The server runs as the test's own user: these tests are about the
	// command, not the drop to uid 65534, and as root that user could
	// not reach servers in a checkout others cannot enter (a clone in
	// `mktemp -d`). The drop is proven where it is decided (pkg/target)
	// and end to end with the built binary (action_e2e_test.go,
	// internal/hostile).
	c := &Command{Stdout: &out, Stderr: &errb, LookupEnv: os.LookupEnv, ServerUser: func() *transport.RunAs { return nil }}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code = c.Main(ctx, args)
	regate(t, code, args, c.LookupEnv)
	return code, out.String(), errb.String()
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"probe"}, "name the server under test"},
		{[]string{"probe", "--url", "http://x/mcp", "--cmd", "srv"}, "exclusive"},
		{[]string{"probe", "--url", "ftp://x/mcp"}, "invalid server URL"},
		{[]string{"probe", "--cmd", "srv 'unterminated"}, "unterminated quote"},
		{[]string{"probe", "--url", "http://x/mcp", "--header", "NoColon"}, "invalid --header"},
		{[]string{"probe", "--cmd", "srv", "--header", "A: b"}, "only applies to a --url server"},
		{[]string{"probe", "--url", "http://x/mcp", "stray"}, "unexpected argument"},
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"chek", "--cmd", "srv"}, `unknown command "chek" (did you mean "check"?)`},
		{[]string{"check", "--ouput", "r.json", "--cmd", "srv"}, "did you mean --out?"},
		{[]string{"check", "--cmd", "srv", "--only", "RESIL"}, "selects no check that runs over stdio"},
		{[]string{"check", "--cmd", "srv", "--json", "a.json", "--out", "b.json"}, "give one of them"},
		{[]string{"check", "--cmd", "srv", "--runs", "0"}, "--runs must be 1..100, not 0"},
		{[]string{"check", "--url", "http://x/mcp", "--server-user", "nobody"}, "server user"},
	}
	for _, tc := range cases {
		code, _, stderr := run(t, tc.args...)
		if code != ExitError || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestHeaderValuesAreNeverPrinted(t *testing.T) {
	_, _, stderr := run(t, "probe", "--url", "http://x/mcp", "--header", "Authorization Bearer sekrit-token")
	if strings.Contains(stderr, "sekrit") {
		t.Fatalf("stderr leaks the header value: %q", stderr)
	}
}

func TestHelpIsFollowable(t *testing.T) {
	code, out, _ := run(t, "probe", "--help")
	if code != ExitOK || !strings.Contains(out, "Examples:") || !strings.Contains(out, "--cmd") {
		t.Fatalf("probe --help: exit %d, %q", code, out)
	}
	code, out, _ = run(t, "--help")
	if code != ExitOK || !strings.Contains(out, "probe") {
		t.Fatalf("--help: exit %d, %q", code, out)
	}
}

// Every command prints its help once, to stdout, and a bad flag names the
// flag on stderr with a pointer to the help, not the whole help twice.
func TestHelpPrintsOnce(t *testing.T) {
	for _, sc := range subcommands() {
		code, out, errOut := run(t, sc.name, "--help")
		if code != ExitOK || strings.Count(out, "Usage: mcp-eval "+sc.name) != 1 || errOut != "" {
			t.Errorf("%s --help: exit %d, %d usage lines on stdout, stderr %q", sc.name, code, strings.Count(out, "Usage:"), errOut)
		}
		code, out, errOut = run(t, sc.name, "--no-such-flag")
		if code != ExitError || out != "" || !strings.Contains(errOut, "no-such-flag") || strings.Contains(errOut, "Usage:") {
			t.Errorf("%s --no-such-flag: exit %d, stdout %q, stderr %q", sc.name, code, out, errOut)
		}
	}
}

// One meaning per flag name: --runs is runs per case wherever there are
// cases, and Layer 0's runs have their own flag; check, which has no
// cases, takes both spellings for its MUST checks.
func TestFlagsMeanTheSameEverywhere(t *testing.T) {
	for _, tc := range []struct {
		cmd, flag, want string
	}{
		{"run", "runs", "case"}, {"eval", "runs", "case"}, {"check", "runs", "MUST"},
		{"run", "conformance-runs", "MUST"}, {"check", "conformance-runs", "MUST"},
		{"run", "concurrency", "Layer 1"}, {"eval", "concurrency", "Layer 1"}, {"check", "concurrency", "check runs"},
		{"run", "out", "report"}, {"eval", "out", "report"}, {"check", "out", "report"},
		{"run", "server-user", "auto"}, {"eval", "server-user", "auto"}, {"check", "server-user", "auto"}, {"probe", "server-user", "auto"},
	} {
		_, out, _ := run(t, tc.cmd, "--help")
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "-"+tc.flag+" ") || strings.TrimSpace(l) == "-"+tc.flag {
				line = l
			}
		}
		i := strings.Index(out, line)
		if line == "" || !strings.Contains(out[i:min(len(out), i+300)], tc.want) {
			t.Errorf("%s --%s: want a flag about %q in\n%s", tc.cmd, tc.flag, tc.want, out)
		}
	}
}

func TestUnreachableURL(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/mcp"
	srv.Close() // nothing listens there any more
	code, _, stderr := run(t, "probe", "--url", url)
	if code != ExitError || !strings.Contains(stderr, "connect failed") || !strings.Contains(stderr, "hint:") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	// A URL from the config file is named as such: it is the one the
	// user doubts last. A flag's needs no saying.
	cfg := filepath.Join(t.TempDir(), "mcp-eval.yaml")
	if err := os.WriteFile(cfg, []byte("server:\n  url: "+url+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// run writes report.json by default, a run that tested nothing too:
	// into a directory of the test's.
	out := filepath.Join(t.TempDir(), "report.json")
	for _, cmd := range []string{"check", "run"} {
		code, _, stderr = run(t, cmd, "--config", cfg, "--out", out)
		if code != ExitError || !strings.Contains(stderr, "could not test the server at "+url+" (server.url in mcp-eval.yaml)") {
			t.Errorf("%s with server.url: exit %d, stderr %q", cmd, code, stderr)
		}
		code, _, stderr = run(t, cmd, "--config", cfg, "--url", url, "--out", out)
		if code != ExitError || strings.Contains(stderr, "server.url") {
			t.Errorf("%s with --url over server.url: exit %d, stderr %q", cmd, code, stderr)
		}
	}
}

func TestCommandThatExitsAtOnceShowsItsStderr(t *testing.T) {
	code, _, stderr := run(t, "probe", "--cmd", `sh -c "echo boom: no config >&2; exit 4"`)
	if code != ExitError || !strings.Contains(stderr, "boom: no config") || !strings.Contains(stderr, "code 4") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func TestMissingCommand(t *testing.T) {
	code, _, stderr := run(t, "probe", "--cmd", "no-such-server-binary --stdio")
	if code != ExitError || !strings.Contains(stderr, "command not found") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// A run that could test nothing still writes its files, each saying so,
// for the CI step that uploads them; the exit is 2, and a path that
// names no program is not sent to look on PATH.
func TestMissingServerStillWritesTheOutputs(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-server")
	out := func(name string) string { return filepath.Join(dir, name) }
	for _, cmd := range []string{"check", "run"} {
		code, stdout, stderr := run(t, cmd, "--cmd", missing, "--out", out(cmd+".json"), "--markdown", out(cmd+".md"), "--junit", out(cmd+".xml"), "--html", out(cmd+".html"))
		if code != ExitError || !strings.Contains(stderr, "no program to run at that path") || strings.Contains(stderr, "PATH") || !strings.Contains(stderr, "hint: is the command right") {
			t.Fatalf("%s: exit %d, stderr %q", cmd, code, stderr)
		}
		if strings.Contains(stdout, "verdict") {
			t.Errorf("%s: the terminal shows a verdict beside the error: %q", cmd, stdout)
		}
		rep, err := report.Load(out(cmd + ".json"))
		if err != nil || !strings.Contains(rep.Run.Untested, "no-such-server") || rep.Gate == nil || rep.Gate.Verdict != report.GateError {
			t.Fatalf("%s: report.json: %v %+v", cmd, err, rep)
		}
		code, _, stderr = run(t, "gate", "--report", out(cmd+".json"), "--out", out(cmd+".gated.json"))
		if code != ExitError || !strings.Contains(stderr, "could not test the server (run.untested says why)") {
			t.Errorf("gate --report of a run that tested nothing: exit %d, stderr %q", code, stderr)
		}
		md, _ := os.ReadFile(out(cmd + ".md"))
		xml, _ := os.ReadFile(out(cmd + ".xml"))
		html, _ := os.ReadFile(out(cmd + ".html"))
		if !strings.Contains(string(md), "the server could not be tested") || !strings.Contains(string(xml), `errors="1"`) || !strings.Contains(string(html), "the server could not be tested") {
			t.Errorf("%s: an output does not say the server could not be tested:\n%s\n%s", cmd, md, xml)
		}
	}
}

func TestServerThatNeverAnswersIsAbandonedAtTheDeadline(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	start := time.Now()
	code, _, stderr := run(t, "probe", "--url", srv.URL+"/mcp", "--request-timeout", "500ms")
	if code != ExitError || !strings.Contains(stderr, "no answer within 500ms") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %s", d)
	}
}

func TestProbeRealServersJSON(t *testing.T) {
	for _, name := range []string{"ts-v2-stdio", "everything-stdio"} {
		tg, ok := interop.Lookup(name)
		if !ok {
			t.Fatalf("no target %s", name)
		}
		t.Run(name, func(t *testing.T) {
			tg.Require(t)
			argv, dir, err := tg.Command()
			if err != nil {
				t.Fatal(err)
			}
			code, out, stderr := run(t, "probe", "--json", "--cwd", dir, "--cmd", quoteArgv(argv))
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var po ProbeOutput
			if err := json.Unmarshal([]byte(out), &po); err != nil {
				t.Fatalf("--json output is not JSON: %v\n%s", err, out)
			}
			if string(po.Era) != string(tg.Era) || len(po.Tools) != len(tg.Tools) || po.Tools[0].Name != tg.Tools[0] {
				t.Fatalf("era %s tools %v; want %s %v", po.Era, po.Tools, tg.Era, tg.Tools)
			}
		})
	}
}

func quoteArgv(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// Cancelling mcp-eval (SIGINT, as a CI runner does) while it waits on a
// server must leave no process of the server's group behind.
func TestInterruptLeavesNoChildProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "mcp-eval")
	build := exec.Command("go", "build", "-o", bin, "github.com/mcp-eval/mcp-eval-action/cmd/mcp-eval")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	pidFile := filepath.Join(reachableTempDir(t), "pid")
	// A silent server with a child of its own: sh writes its pid, then waits
	// on sleep, and answers nothing.
	cmd := exec.Command(bin, "probe", "--probe-timeout", "30s", "--cmd", `sh -c "echo $$ > `+pidFile+`; sleep 300"`)
	// As root the binary starts the server as uid 65534 in its own
	// directory, which must be one that user can enter wherever the
	// checkout is.
	cmd.Dir = filepath.Dir(pidFile)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pgid int
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidFile); err == nil && len(bytes.TrimSpace(b)) > 0 {
			pgid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pgid == 0 {
		cmd.Process.Kill()
		t.Fatal("server never started")
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("mcp-eval did not exit within 15s of SIGINT")
	}
	deadline = time.Now().Add(5 * time.Second)
	for syscall.Kill(-pgid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(-pgid, 0); err == nil {
		syscall.Kill(-pgid, syscall.SIGKILL)
		t.Fatalf("process group %d still has members after mcp-eval exited; stderr: %s", pgid, errb.String())
	}
}

// A header value given on the command line never reaches the output, even
// when the server echoes it in the body of an error the harness prints.
func TestMainRedactsEchoedHeaderValues(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "invalid credentials: "+r.Header.Get("Authorization"), http.StatusInternalServerError)
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	c := &Command{Stdout: &out, Stderr: &errb, LookupEnv: func(string) (string, bool) { return "", false }}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c.Main(ctx, []string{"probe", "--url", srv.URL + "/mcp", "--header", "Authorization: Bearer cli-canary-token"})
	all := out.String() + errb.String()
	if strings.Contains(all, "cli-canary-token") || !strings.Contains(all, "invalid credentials") {
		t.Fatalf("want the error without the token:\n%s", all)
	}
}

// check writes a schema-versioned report.json that gate and report read,
// with --out like every command; --json is the old spelling and warns.
func TestCheckWritesAReport(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	dir := t.TempDir()
	before := regated.Load()
	for _, flag := range []string{"--out", "--json"} {
		p := filepath.Join(dir, "check"+flag+".json")
		code, out, errOut := run(t, "check", "--url", hs.URL, "--runs", "1", flag, p)
		if code != ExitOK {
			t.Fatalf("check %s: exit %d\n%s\n%s", flag, code, out, errOut)
		}
		if deprecated := strings.Contains(errOut, "--json is deprecated"); deprecated != (flag == "--json") {
			t.Errorf("check %s: stderr %q", flag, errOut)
		}
		rep, err := report.Load(p)
		if err != nil || rep.Conformance == nil || rep.Gate == nil || rep.SchemaVersion != report.SchemaVersion {
			t.Fatalf("check %s wrote no usable report.json: %v", flag, err)
		}
		if code, out, errOut := run(t, "report", "--in", p, "--format", "markdown"); code != ExitOK || !strings.Contains(out, "PASS") {
			t.Fatalf("report on check's report.json: exit %d\n%s\n%s", code, out, errOut)
		}
	}
	if regated.Load() < before+2 {
		t.Error("the reports were not re-gated")
	}
}

// A legacy server fails check (it asks whether the server speaks
// 2026-07-28) but not run (it asks whether the server regressed), and
// mcp-eval gate on each report gives the same exit code: check records
// fail-on-legacy in the report's policy. The server is the legacy
// server-everything from npm, written by others.
func TestLegacyServerFailsCheckNotRun(t *testing.T) {
	_, argv, dir := realServer(t, "everything-stdio")
	out := t.TempDir()
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"check", "--out", filepath.Join(out, "check.json")}, ExitFindings},
		{[]string{"run", "--layers", "0", "--out", filepath.Join(out, "run.json"),
			"--markdown", filepath.Join(out, "run.md"), "--html", filepath.Join(out, "run.html"), "--junit", filepath.Join(out, "run.xml")}, ExitOK},
	} {
		before := regated.Load()
		code, stdout, stderr := run(t, append(tc.args, "--cwd", dir, "--cmd", argv)...)
		if code != tc.want {
			t.Errorf("%s on a legacy server: exit %d, want %d\n%s\n%s", tc.args[0], code, tc.want, stdout, stderr)
		}
		rep, err := report.Load(flagValue(tc.args, "--out"))
		if err != nil || rep.Conformance == nil || rep.Conformance.Verdict != report.ConformanceLegacy {
			t.Fatalf("%s: %v", tc.args[0], err)
		}
		if rep.Gate.Policy.FailOnLegacy != (tc.args[0] == "check") {
			t.Errorf("%s recorded failOnLegacy %v", tc.args[0], rep.Gate.Policy.FailOnLegacy)
		}
		if regated.Load() != before+1 {
			t.Errorf("%s's report was not re-gated", tc.args[0])
		}
		if tc.args[0] == "run" {
			legacyMarkedEverywhere(t, stdout, out)
		}
	}
}

// legacyMarkedEverywhere: a legacy server that the gate let through is
// shown as legacy, never as a pass, in every view run wrote (terminal,
// Markdown comment and job summary, HTML, JUnit).
func legacyMarkedEverywhere(t *testing.T, stdout, out string) {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	md, html, junit := read("run.md"), read("run.html"), read("run.xml")
	for _, c := range []struct{ view, text, want, not string }{
		{"terminal", stdout, "verdict: LEGACY", "verdict: PASS"},
		{"Markdown", md, "🕰️ mcp-eval: LEGACY", "✅"},
		{"HTML", html, `class="badge legacy"`, `class="badge pass"`},
		{"JUnit", junit, `<skipped message="[LEGACY] the server speaks`, `tests="0"`},
	} {
		if !strings.Contains(c.text, c.want) || strings.Contains(c.text, c.not) {
			t.Errorf("%s view of a legacy server: want %q and no %q:\n%s", c.view, c.want, c.not, c.text)
		}
	}
}

// eval and run with Layer 1 on a server written by others (the TS SDK v2),
// through the lexical baseline: the reports re-gate to the same exit code.
func TestEvalOnARealServerRegates(t *testing.T) {
	tg, argv, dir := realServer(t, "ts-v2-stdio")
	out := t.TempDir()
	golden := filepath.Join(out, "tasks.yaml")
	body := "version: 1\ncases:\n  - id: first-tool\n    prompt: please use " + tg.Tools[0] + "\n    expect_tool: " + tg.Tools[0] + "\n  - id: none\n    prompt: tell me a joke\n    expect_tool: null\n"
	if err := os.WriteFile(golden, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	before := regated.Load()
	for _, args := range [][]string{
		{"eval", "--golden", golden, "--runs", "2", "--cache-dir", filepath.Join(out, "cache"), "--out", filepath.Join(out, "eval.json")},
		{"run", "--layers", "0,1,3", "--golden", golden, "--runs", "2", "--conformance-runs", "1", "--cache-dir", filepath.Join(out, "cache"), "--out", filepath.Join(out, "run.json")},
	} {
		if code, stdout, stderr := run(t, append(args, "--cwd", dir, "--cmd", argv)...); code == ExitError {
			t.Fatalf("%s: exit 2\n%s\n%s", args[0], stdout, stderr)
		}
	}
	if regated.Load() != before+2 {
		t.Error("the reports were not re-gated")
	}
}

// Every id in a report is a registered check: --only takes POISON and
// RESIL like any family, RESIL-1 runs in check over HTTP, and a name the
// registry does not know is refused before anything starts.
func TestOnlySelectsRegisteredFamilies(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	dir := t.TempDir()
	for _, tc := range []struct {
		only   string
		prefix string
	}{{"POISON", "POISON-"}, {"POISON-3", "POISON-3"}, {"RESIL", "RESIL-1"}} {
		p := filepath.Join(dir, tc.only+".json")
		code, out, errOut := run(t, "check", "--url", hs.URL, "--runs", "1", "--only", tc.only, "--out", p)
		if code != ExitOK {
			t.Fatalf("--only %s: exit %d\n%s\n%s", tc.only, code, out, errOut)
		}
		rep, err := report.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Conformance.Checks) == 0 {
			t.Fatalf("--only %s ran nothing", tc.only)
		}
		for _, r := range rep.Conformance.Checks {
			if !strings.HasPrefix(r.ID, tc.prefix) || r.FamilyTitle == "" {
				t.Errorf("--only %s ran %s (family title %q)", tc.only, r.ID, r.FamilyTitle)
			}
			if r.ID == "RESIL-1" && r.Verdict != report.CheckPassed {
				t.Errorf("RESIL-1 on the reference server: %s %s", r.Verdict, r.Outcome.Message)
			}
		}
	}
	if code, _, errOut := run(t, "check", "--url", hs.URL, "--only", "POISON-9"); code != ExitError || !strings.Contains(errOut, "POISON-9") {
		t.Errorf("--only POISON-9: exit %d, %q", code, errOut)
	}
}

// realServer is an installed third-party server (internal/interop): the
// target, its command line quoted for --cmd, and its directory. The test
// skips with a hint when it is not installed (fails under CI=true).
func realServer(t *testing.T, name string) (interop.Target, string, string) {
	t.Helper()
	tg, ok := interop.Lookup(name)
	if !ok {
		t.Fatalf("no target %s", name)
	}
	tg.Require(t)
	argv, dir, err := tg.Command()
	if err != nil {
		t.Fatal(err)
	}
	return tg, quoteArgv(argv), dir
}

// A --call-tool name the server does not list allowed nothing and said
// nothing, from the flag as from conformance.call-tools: the terminal only
// asked again for --call-tool. Both sources now end in a note on the
// terminal and in report.json, with the name the user most likely meant,
// the skip names the tool it could not call, and the report records the
// names given.
func TestUnknownCallToolIsNoted(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	dir := t.TempDir()
	config := filepath.Join(dir, "mcp-eval.yaml")
	if err := os.WriteFile(config, []byte("conformance:\n  call-tools: [send_emial]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, source := range map[string][]string{"flag": {"--call-tool", "send_emial"}, "config": {"--config", config}} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name+".json")
			code, out, errOut := run(t, append([]string{"check", "--url", hs.URL, "--conformance-runs", "1", "--only", "MRTR-2", "--out", p}, source...)...)
			if code != ExitOK {
				t.Fatalf("exit %d, want %d (a note, not an error)\n%s\n%s", code, ExitOK, out, errOut)
			}
			note := `note: --call-tool (or conformance.call-tools) names "send_emial", which the server does not list, so it allows no tool (did you mean "send_email"? fix or drop the name)`
			if !strings.Contains(out, note) {
				t.Errorf("the terminal lacks\n%s\n%s", note, out)
			}
			if !strings.Contains(out, `so not called: "send_email"`) {
				t.Errorf("MRTR-2's skip does not name send_email:\n%s", out)
			}
			rep, err := report.Load(p)
			if err != nil {
				t.Fatal(err)
			}
			if c := rep.Conformance; len(c.CallTools) != 1 || c.CallTools[0] != "send_emial" || !strings.Contains(strings.Join(c.Notes, "\n"), `did you mean "send_email"?`) {
				t.Errorf("report: callTools %q, notes %q", c.CallTools, c.Notes)
			}
		})
	}
}

// A go-sdk server that exits when a tool allowed with --call-tool is
// called: the checks the exit stopped are not judged, never failed (REM-1
// and STDIO-5 judged the dead process's errors as answers), and the
// comment says the exit once, with the call it was serving.
func TestServerThatExitsOnACallIsNotJudgedFailing(t *testing.T) {
	_, cmd, cwd := realServer(t, "go-sdk-stdio")
	dir := t.TempDir()
	md := filepath.Join(dir, "comment.md")
	out := filepath.Join(dir, "report.json")
	code, stdout, stderr := run(t, "check", "--cmd", cmd+" -exit-on-call add", "--cwd", cwd, "--call-tool", "add", "--out", out, "--markdown", md)
	if code == ExitOK {
		t.Fatalf("exit 0 with a server that exited\n%s\n%s", stdout, stderr)
	}
	rep, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	exited := 0
	for _, c := range rep.Conformance.Checks {
		msg := c.Outcome.Message
		if !strings.Contains(msg, "server process exited") {
			continue
		}
		exited++
		if c.Verdict == report.CheckFailed || c.Verdict == report.CheckWarned {
			t.Errorf("%s %s on the exit: %s", c.ID, c.Verdict, msg)
		}
		if !strings.Contains(msg, `while serving tools/call "add"`) {
			t.Errorf("%s: %q does not name the call the process was serving", c.ID, msg)
		}
	}
	if exited < 10 {
		t.Fatalf("%d checks saw the exit, want most of them: %s", exited, stdout)
	}
	comment, _ := os.ReadFile(md)
	if n := strings.Count(string(comment), "checks errored in some or all of their runs"); n != 1 {
		t.Errorf("%d items of checks not judged, want the one exit:\n%s", n, comment)
	}
	// The terminal's gate section says it once too, naming the others.
	if n := strings.Count(stdout, "  E L0 check  "); n != 1 || !strings.Contains(stdout, "more not judged for the same reason: ") {
		t.Errorf("%d gate lines of checks not judged, want one naming the rest:\n%s", n, stdout)
	}
}
