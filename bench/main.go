// Command bench measures Layer 0 (`mcp-eval check`, all checks, MUST ×5 by
// default) against real servers, for issue 15's targets (docs/benchmarks.md):
//
//   - A/B in turns against the same HTTP server — mcp-eval, then the official
//     conformance suite (`--requirements 2026-07-28`), five pairs, timed
//     against the server itself: the median wall ratio; and the requests each
//     sends, by JSON-RPC method, counted in one untimed run of each through a
//     counting reverse proxy before the pairs (also their warm-up). Targets:
//     the TS SDK v2 fixture of interop/ts and, when set up, the TS SDK's own
//     conformance "everything" server.
//   - wall, CPU and mcp-eval's peak RSS on the stdio servers of interop/, the
//     bundled reference server on HTTP and stdio (and over stdio behind a
//     wrapper that sleeps 1.5 s before it starts the server: a start that
//     waits; and its STDIO-4 mutant, which needs SIGTERM to exit), and a
//     1,000-tool go-sdk server
//     against its 3-tool twin; with -against BIN, each of those runs is
//     paired with one of BIN (an earlier commit's mcp-eval), which of the two
//     goes first alternating, so that a change is measured against what it
//     changes in one run.
//
// bench/run.sh installs what this needs and runs it; see there for the one command.
// Every run is bounded by -run-timeout; a server is killed with its process group.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type config struct {
	root        string
	mcpEval     string
	refserver   string
	suiteJS     string
	suiteHook   string // a node --import module (Node < 22), or ""
	everything  string // directory holding everythingServer.ts and its node_modules, or ""
	pairs       int
	reps        int
	runTimeout  time.Duration
	only        map[string]bool
	jsonOut     string
	bindPreload string
	// against is another mcp-eval binary (an earlier commit's), run in
	// turns with mcpEval on the refserver, stdio and tools targets: a
	// change is measured against what it changes in one run, since this
	// machine's speed moves by a fifth from one hour to the next.
	against string
}

func main() {
	var c config
	var only string
	flag.StringVar(&c.root, "root", ".", "repository root")
	flag.StringVar(&c.mcpEval, "mcp-eval", "", "built mcp-eval binary (required)")
	flag.StringVar(&c.refserver, "refserver", "", "built golden-examples/cmd/example-server binary")
	flag.StringVar(&c.suiteJS, "suite-js", "", "the official suite's dist/index.js (empty: skip the A/B sections)")
	flag.StringVar(&c.suiteHook, "suite-hook", "", "node --import module the suite needs on Node < 22")
	flag.StringVar(&c.everything, "everything", "", "directory with the TS SDK's everythingServer.ts and its node_modules (empty: skip)")
	flag.IntVar(&c.pairs, "pairs", 5, "A/B pairs per HTTP target")
	flag.IntVar(&c.reps, "reps", 3, "runs per stdio/refserver/tools target (median reported)")
	flag.DurationVar(&c.runTimeout, "run-timeout", 4*time.Minute, "deadline of one measured run")
	flag.StringVar(&only, "only", "", "comma-separated sections: ab-ts, ab-everything, refserver, wait-start, ignores-eof, stdio, tools (default: all)")
	flag.StringVar(&c.jsonOut, "json", "", "also write every measurement as JSON to this file")
	flag.StringVar(&c.against, "against", "", "another mcp-eval binary (e.g. an earlier commit's) run in turns with -mcp-eval on the refserver, stdio and tools targets")
	flag.Parse()
	if c.mcpEval == "" {
		fmt.Fprintln(os.Stderr, "bench: -mcp-eval is required (bench/run.sh builds it)")
		os.Exit(2)
	}
	if only != "" {
		c.only = map[string]bool{}
		for _, s := range strings.Split(only, ",") {
			c.only[strings.TrimSpace(s)] = true
		}
	}
	var err error
	if c.root, err = filepath.Abs(c.root); err != nil {
		fatal(err)
	}
	if c.against != "" {
		// Runs start in -root: a relative path means the caller's directory.
		if c.against, err = filepath.Abs(c.against); err != nil {
			fatal(err)
		}
	}
	c.bindPreload = filepath.Join(c.root, "interop/legacy/bind-loopback.cjs")
	ctx := context.Background()
	res := &results{Started: time.Now().UTC().Format(time.RFC3339), Cores: runtime.NumCPU(), Load: loadavg()}
	bench(ctx, c, res)
	res.LoadAfter = loadavg()
	if c.jsonOut != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(c.jsonOut, append(b, '\n'), 0o644); err != nil {
			fatal(fmt.Errorf("writing -json: %w", err))
		}
	}
	fmt.Printf("\nload average before %s, after %s (%d cores)\n", res.Load, res.LoadAfter, res.Cores)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

func (c config) want(section string) bool { return c.only == nil || c.only[section] }

type results struct {
	Started   string      `json:"started"`
	Cores     int         `json:"cores"`
	Load      string      `json:"load_before"`
	LoadAfter string      `json:"load_after"`
	AB        []abResult  `json:"ab,omitempty"`
	Timed     []timedStat `json:"timed,omitempty"`
	Notes     []string    `json:"notes,omitempty"`
}

func (r *results) note(format string, a ...any) {
	s := fmt.Sprintf(format, a...)
	r.Notes = append(r.Notes, s)
	fmt.Println("note:", s)
}

func bench(ctx context.Context, c config, res *results) {
	mcpCheck := func(extra ...string) []string {
		return append([]string{c.mcpEval, "check", "--timeout", c.runTimeout.String()}, extra...)
	}
	if c.want("ab-ts") || c.want("ab-everything") {
		if c.suiteJS == "" {
			res.note("A/B skipped: no official suite (-suite-js)")
		}
	}
	if c.suiteJS != "" && c.want("ab-ts") {
		srv := server{name: "ts-v2-http", dir: filepath.Join(c.root, "interop/ts"), argv: []string{"node", "server.mjs", "http", "0"}}
		if r, err := abRun(ctx, c, srv, mcpCheck); err != nil {
			res.note("A/B %s: %v", srv.name, err)
		} else {
			res.AB = append(res.AB, r)
		}
	}
	if c.suiteJS != "" && c.want("ab-everything") {
		if c.everything == "" {
			res.note("A/B everything-server skipped: not set up (bench/run.sh needs BENCH_TS_SDK, a git checkout or mirror of the TypeScript SDK)")
		} else {
			srv := server{name: "ts-sdk-everything-http", dir: c.everything,
				argv: []string{"node", "--require", c.bindPreload, "--import", "tsx", "everythingServer.ts"},
				env:  []string{"PORT=0", "INTEROP_ANNOUNCE_PATH=/mcp"}}
			if r, err := abRun(ctx, c, srv, mcpCheck); err != nil {
				res.note("A/B %s: %v", srv.name, err)
			} else {
				res.AB = append(res.AB, r)
			}
		}
	}
	if c.want("refserver") && c.refserver != "" {
		srv := server{name: "refserver-http", dir: c.root, argv: []string{c.refserver, "--http", "127.0.0.1:0"}}
		if st, err := timedHTTP(ctx, c, srv, mcpCheck); err != nil {
			res.note("%s: %v", srv.name, err)
		} else {
			res.Timed = append(res.Timed, st...)
		}
		res.Timed = append(res.Timed, timedStdio(ctx, c, "refserver-stdio", mcpCheck("--cmd", c.refserver))...)
	}
	if c.want("wait-start") && c.refserver != "" {
		// A start that waits rather than computes, as docker run -i does
		// on its daemon or a wrapper that fetches a token: the bundled
		// server behind a 1.5 s sleep (startsAtOnce in pkg/conformance).
		if st, err := timedWaitStart(ctx, c, mcpCheck); err != nil {
			res.note("refserver-wait-start: %v", err)
		} else {
			res.Timed = append(res.Timed, st...)
		}
	}
	if c.want("ignores-eof") && c.refserver != "" {
		// A server that does not exit when stdin closes and needs SIGTERM,
		// as many do: the bundled server's STDIO-4 mutant (transport.Stops).
		res.Timed = append(res.Timed, timedStdio(ctx, c, "refserver-ignores-eof-stdio", mcpCheck("--cmd", c.refserver+" --break STDIO-4"))...)
	}
	if c.want("stdio") {
		for _, t := range []struct{ name, cwd, cmd string }{
			{"ts-v2-stdio", "interop/ts", "node server.mjs stdio"},
			{"go-sdk-stdio", "interop", "bin/gosdk-srv"},
			{"mcp-go-stdio", "interop", "bin/mcpgo-srv"},
		} {
			res.Timed = append(res.Timed, timedStdio(ctx, c, t.name, mcpCheck("--cwd", filepath.Join(c.root, t.cwd), "--cmd", t.cmd))...)
		}
	}
	if c.want("tools") {
		// Alternate the twins so that a change of machine load hits both.
		gosdk := filepath.Join(c.root, "interop/bin/gosdk-srv")
		small := timedStat{Name: "go-sdk-stdio-3-tools"}
		large := timedStat{Name: "go-sdk-stdio-1000-tools"}
		smallB, largeB := timedStat{Name: small.Name + againstSuffix}, timedStat{Name: large.Name + againstSuffix}
		for i := 0; i < c.reps; i++ {
			c.inTurns(i, func() {
				small.add(measure(ctx, c, "go-sdk 3 tools", mcpCheck("--cmd", gosdk+" -tools 3"), c.root))
			}, func() {
				smallB.add(measure(ctx, c, "go-sdk 3 tools"+againstSuffix, c.againstArgv(mcpCheck("--cmd", gosdk+" -tools 3")), c.root))
			})
			c.inTurns(i, func() {
				large.add(measure(ctx, c, "go-sdk 1000 tools", mcpCheck("--cmd", gosdk+" -tools 1000"), c.root))
			}, func() {
				largeB.add(measure(ctx, c, "go-sdk 1000 tools"+againstSuffix, c.againstArgv(mcpCheck("--cmd", gosdk+" -tools 1000")), c.root))
			})
		}
		pairs := [][2]*timedStat{{&small, &large}}
		if c.against != "" {
			pairs = append(pairs, [2]*timedStat{&smallB, &largeB})
		}
		for _, p := range pairs {
			sm, lg := p[0], p[1]
			sm.finish()
			lg.finish()
			lg.RatioTo = sm.Name
			if sm.MedianWall > 0 {
				lg.Ratio = lg.MedianWall / sm.MedianWall
			}
			printTimed(*sm)
			printTimed(*lg)
			fmt.Printf("  %s / %s wall: %.2f× (target ≤ 1.5×); mcp-eval peak RSS %d MB (target ≤ 64 MB)\n",
				lg.Name, sm.Name, lg.Ratio, lg.MaxRSSKB/1024)
			res.Timed = append(res.Timed, *sm, *lg)
		}
		if c.against != "" {
			printAgainst(small, smallB)
			printAgainst(large, largeB)
		}
	}
}

// ---------------------------------------------------------------- servers

type server struct {
	name string
	dir  string
	argv []string
	env  []string
}

var listeningRe = regexp.MustCompile(`listening on (http://127\.0\.0\.1:[0-9]+/mcp)`)

// start runs an HTTP server in its own process group and waits for its
// "listening on URL" line (stdout or stderr).
func (s server) start(ctx context.Context) (string, func(), error) {
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), s.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("starting %s: %w", s.name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); pw.Close(); close(done) }()
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	found := make(chan string, 1)
	var tail bytes.Buffer
	var mu sync.Mutex
	go func() {
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			if m := listeningRe.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
			mu.Lock()
			if tail.Len() < 8<<10 {
				tail.WriteString(sc.Text() + "\n")
			}
			mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case u := <-found:
		return u, stop, nil
	case <-done:
	case <-time.After(90 * time.Second):
	case <-ctx.Done():
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	return "", nil, fmt.Errorf("%s did not print its listening line:\n%s", s.name, tail.String())
}

// ---------------------------------------------------------------- counting proxy

// proxy forwards to one HTTP MCP server and counts the requests by JSON-RPC
// method (a batch counts each member; a GET, DELETE or non-JSON body by its
// HTTP method). The Host header is passed through so that the server's own
// Host/Origin validation sees what the client sent.
type proxy struct {
	mu     sync.Mutex
	counts map[string]int
	url    string
	srv    *http.Server
}

func newProxy(target string) (*proxy, error) {
	tu, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{counts: map[string]int{}, url: "http://" + ln.Addr().String() + tu.Path}
	base := &url.URL{Scheme: tu.Scheme, Host: tu.Host}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(base)
			pr.Out.Host = pr.In.Host
		},
		FlushInterval: -1, // SSE: pass every event on at once
		// A client that gives up on a request (cancellation and timeout
		// checks do so on purpose) is not a proxy failure worth a log line.
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() == nil {
				http.Error(w, "bench proxy: "+err.Error(), http.StatusBadGateway)
			}
		},
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
			if err != nil {
				http.Error(w, "bench proxy: reading body: "+err.Error(), http.StatusBadGateway)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			p.count(body)
		} else {
			p.add("HTTP " + r.Method)
		}
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func (p *proxy) add(k string) {
	p.mu.Lock()
	p.counts[k]++
	p.mu.Unlock()
}

func (p *proxy) count(body []byte) {
	type msg struct {
		Method *string          `json:"method"`
		ID     *json.RawMessage `json:"id"`
	}
	one := func(m msg) {
		switch {
		case m.Method != nil:
			p.add(*m.Method)
		case m.ID != nil:
			p.add("(a response)")
		default:
			p.add("(no method)")
		}
	}
	b := bytes.TrimSpace(body)
	if len(b) > 0 && b[0] == '[' {
		var ms []msg
		if json.Unmarshal(b, &ms) == nil {
			p.add("(batch)")
			for _, m := range ms {
				one(m)
			}
			return
		}
	}
	var m msg
	if json.Unmarshal(b, &m) != nil {
		p.add("(not JSON)")
		return
	}
	one(m)
}

// take returns the counts so far and starts again from zero.
func (p *proxy) take() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.counts
	p.counts = map[string]int{}
	return c
}

func (p *proxy) close() { _ = p.srv.Close() }

func total(m map[string]int) int {
	n := 0
	for k, v := range m {
		if k != "(batch)" {
			n += v
		}
	}
	return n
}

// ---------------------------------------------------------------- measuring one run

type run struct {
	Wall     float64        `json:"wall_s"`
	CPU      float64        `json:"cpu_s"`     // user+sys of the process and every child it waited for (a stdio server too)
	OwnCPU   float64        `json:"own_cpu_s"` // user+sys of the process alone (last /proc sample, ≤ 20 ms before exit)
	RSSKB    int            `json:"peak_rss_kb,omitempty"`
	Exit     int            `json:"exit"`
	Verdict  string         `json:"verdict,omitempty"`
	Requests map[string]int `json:"requests,omitempty"`
	TimedOut bool           `json:"timed_out,omitempty"`
}

var verdictRe = regexp.MustCompile(`(?m)^verdict: (\S+)|^Total: (.*)$`)

// measure runs argv to completion (bounded by -run-timeout), polling the
// process's own VmHWM for its peak RSS: wait4's ru_maxrss would also cover
// a stdio server it started.
func measure(ctx context.Context, c config, label string, argv []string, dir string) run {
	ctx, cancel := context.WithTimeout(ctx, c.runTimeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Printf("  %-28s could not start: %v\n", label, err)
		return run{Exit: -1}
	}
	var hwm int
	var own float64
	stopPoll := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if v := vmHWM(cmd.Process.Pid); v > hwm {
				hwm = v
			}
			if v := ownCPU(cmd.Process.Pid); v > own {
				own = v
			}
			select {
			case <-stopPoll:
				return
			case <-t.C:
			}
		}
	}()
	err := cmd.Wait()
	wall := time.Since(t0).Seconds()
	close(stopPoll)
	<-polled
	r := run{Wall: wall, RSSKB: hwm, OwnCPU: own, Exit: cmd.ProcessState.ExitCode()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.CPU = tv(ru.Utime) + tv(ru.Stime)
	}
	if ctx.Err() != nil {
		r.TimedOut = true
	}
	for _, m := range verdictRe.FindAllStringSubmatch(out.String(), -1) {
		r.Verdict = strings.TrimSpace(m[1] + m[2])
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		r.Verdict = err.Error()
	}
	fmt.Printf("  %-28s %6.2f s wall %6.2f s CPU (own %5.2f s) %4d MB exit %d %s%s\n", label, r.Wall, r.CPU, r.OwnCPU, r.RSSKB/1024, r.Exit, r.Verdict,
		map[bool]string{true: " (TIMED OUT)", false: ""}[r.TimedOut])
	if r.Exit != 0 && r.Exit != 1 {
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		for _, l := range lines[max(0, len(lines)-5):] {
			fmt.Println("      |", l)
		}
	}
	return r
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

func vmHWM(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n
		}
	}
	return 0
}

// ownCPU is utime+stime of the process alone, in seconds, from
// /proc/PID/stat (clock ticks; Linux's USER_HZ is 100 on every common
// architecture).
func ownCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; fields after it are plain.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ---------------------------------------------------------------- A/B

type abResult struct {
	Target  string    `json:"target"`
	MCPEval []run     `json:"mcp_eval"`
	Suite   []run     `json:"official_suite"`
	Ratios  []float64 `json:"wall_ratios"`
	Median  float64   `json:"median_ratio"`
	MedianA float64   `json:"median_mcp_eval_wall_s"`
	MedianB float64   `json:"median_suite_wall_s"`
	// CountedA and CountedB are the untimed runs through the counting
	// proxy, whose Requests are each side's requests per run.
	CountedA run `json:"mcp_eval_counted"`
	CountedB run `json:"official_suite_counted"`
}

func abRun(ctx context.Context, c config, srv server, mcpCheck func(...string) []string) (abResult, error) {
	res := abResult{Target: srv.name}
	target, stop, err := srv.start(ctx)
	if err != nil {
		return res, err
	}
	defer stop()
	p, err := newProxy(target)
	if err != nil {
		return res, fmt.Errorf("starting the counting proxy: %w", err)
	}
	defer p.close()
	suiteVia := func(url string) []string {
		suite := []string{"node"}
		if c.suiteHook != "" {
			suite = append(suite, "--import", c.suiteHook)
		}
		return append(suite, c.suiteJS, "server", "--url", url, "--requirements", "2026-07-28", "--timeout", "10000")
	}
	fmt.Printf("\n== A/B %s (server %s; requests counted by proxy %s): A = mcp-eval check, B = official suite --requirements 2026-07-28\n", srv.name, target, p.url)
	// The requests are counted in one run of each through the proxy,
	// which is also the warm-up (a server just started is slower on its
	// first requests: a Node server compiles its handlers as they are
	// first hit). The pairs are timed against the server itself: the
	// proxy's work per request runs on the same cores as the server and
	// would charge the side that sends more requests for the measuring.
	p.take()
	res.CountedA = measure(ctx, c, "counted A (proxy, not timed)", mcpCheck("--url", p.url), c.root)
	res.CountedA.Requests = p.take()
	res.CountedB = measure(ctx, c, "counted B (proxy, not timed)", suiteVia(p.url), c.root)
	res.CountedB.Requests = p.take()
	for i := 1; i <= c.pairs; i++ {
		a := measure(ctx, c, fmt.Sprintf("pair %d A mcp-eval", i), mcpCheck("--url", target), c.root)
		b := measure(ctx, c, fmt.Sprintf("pair %d B official suite", i), suiteVia(target), c.root)
		res.MCPEval = append(res.MCPEval, a)
		res.Suite = append(res.Suite, b)
		if b.Wall > 0 {
			res.Ratios = append(res.Ratios, a.Wall/b.Wall)
		}
	}
	var wa, wb []float64
	for i := range res.MCPEval {
		wa = append(wa, res.MCPEval[i].Wall)
		wb = append(wb, res.Suite[i].Wall)
	}
	res.Median, res.MedianA, res.MedianB = median(res.Ratios), median(wa), median(wb)
	fmt.Printf("  median wall: mcp-eval %.2f s, suite %.2f s; median ratio mcp-eval/suite %.2f× (target ≤ 0.25×)\n", res.MedianA, res.MedianB, res.Median)
	printCounts("mcp-eval", res.CountedA)
	printCounts("official suite", res.CountedB)
	return res, nil
}

// printCounts prints the requests of r, the counted run, by method, and
// says so when it did not finish (then its counts may fall short).
func printCounts(who string, r run) {
	target := ""
	if who == "mcp-eval" {
		target = " (target ≤ 400)"
	}
	fmt.Printf("  %s requests per run: %d%s%s\n", who, total(r.Requests), target, partial(r))
	keys := make([]string, 0, len(r.Requests))
	for k := range r.Requests {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y string) int {
		if r.Requests[x] != r.Requests[y] {
			return r.Requests[y] - r.Requests[x]
		}
		return strings.Compare(x, y)
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, r.Requests[k]))
	}
	fmt.Printf("    by method: %s\n", strings.Join(parts, ", "))
}

// partial says, for a counted run that did not finish, that its counts may
// fall short ("" when it finished: mcp-eval exits 0 or 1, the suite 0 or 1).
func partial(r run) string {
	switch {
	case r.TimedOut:
		return " (partial: the counted run timed out)"
	case r.Exit < 0 || r.Exit > 1:
		return fmt.Sprintf(" (partial: the counted run exited %d)", r.Exit)
	}
	return ""
}

// ---------------------------------------------------------------- timed targets

type timedStat struct {
	Name       string  `json:"target"`
	Runs       []run   `json:"runs"`
	MedianWall float64 `json:"median_wall_s"`
	MedianCPU  float64 `json:"median_cpu_s"`
	MedianOwn  float64 `json:"median_own_cpu_s"`
	MaxRSSKB   int     `json:"max_peak_rss_kb"`
	Requests   int     `json:"requests,omitempty"`
	RatioTo    string  `json:"ratio_to,omitempty"`
	Ratio      float64 `json:"ratio,omitempty"`
}

func (s *timedStat) add(r run) { s.Runs = append(s.Runs, r) }

func (s *timedStat) finish() {
	var w, c, o []float64
	for _, r := range s.Runs {
		w = append(w, r.Wall)
		c = append(c, r.CPU)
		o = append(o, r.OwnCPU)
		s.MaxRSSKB = max(s.MaxRSSKB, r.RSSKB)
		if r.Requests != nil {
			s.Requests = total(r.Requests)
		}
	}
	s.MedianWall, s.MedianCPU, s.MedianOwn = median(w), median(c), median(o)
}

func printTimed(s timedStat) {
	fmt.Printf("  => %-26s median %.2f s wall, %.2f s CPU (mcp-eval alone %.2f s), mcp-eval peak RSS ≤ %d MB", s.Name, s.MedianWall, s.MedianCPU, s.MedianOwn, s.MaxRSSKB/1024)
	if s.Requests > 0 {
		fmt.Printf(", %d requests", s.Requests)
	}
	fmt.Println()
}

// againstSuffix names the measurements of -against.
const againstSuffix = " (against)"

// inTurns runs measurement i of mcp-eval (this) and, with -against, of
// the other binary, the first of the two alternating (A B, B A, …) so
// that whatever the previous run leaves behind falls on both alike.
func (c config) inTurns(i int, this, other func()) {
	switch {
	case c.against == "":
		this()
	case i%2 == 0:
		this()
		other()
	default:
		other()
		this()
	}
}

// againstArgv is argv with -against's binary instead of -mcp-eval's.
func (c config) againstArgv(argv []string) []string {
	return append([]string{c.against}, argv[1:]...)
}

// printAgainst prints how a target's median wall time compares with
// -against's, measured in turns.
func printAgainst(st, against timedStat) {
	if against.MedianWall > 0 {
		fmt.Printf("  %s: %.2f s against %.2f s with -against, in turns (%.2f×)\n", st.Name, st.MedianWall, against.MedianWall, st.MedianWall/against.MedianWall)
	}
}

// timedWaitStart times the bundled server started by a script that
// sleeps 1.5 s first.
func timedWaitStart(ctx context.Context, c config, mcpCheck func(...string) []string) ([]timedStat, error) {
	dir, err := os.MkdirTemp("", "bench-wait-start")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "wait-start.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsleep 1.5\nexec '"+strings.ReplaceAll(c.refserver, "'", `'\''`)+"' \"$@\"\n"), 0o700); err != nil {
		return nil, err
	}
	return timedStdio(ctx, c, "refserver-wait-start-stdio", mcpCheck("--cmd", script)), nil
}

// timedStdio times argv c.reps times, each run followed by -against's
// when set; it returns the measurements of mcp-eval, then -against's.
func timedStdio(ctx context.Context, c config, name string, argv []string) []timedStat {
	fmt.Printf("\n== %s: mcp-eval check ×%d\n", name, c.reps)
	st, b := timedStat{Name: name}, timedStat{Name: name + againstSuffix}
	for i := 0; i < c.reps; i++ {
		c.inTurns(i, func() {
			st.add(measure(ctx, c, fmt.Sprintf("run %d", i+1), argv, c.root))
		}, func() {
			b.add(measure(ctx, c, fmt.Sprintf("run %d%s", i+1, againstSuffix), c.againstArgv(argv), c.root))
		})
	}
	return finishTimed(c, st, b)
}

// finishTimed prints st (and -against's b) and returns them.
func finishTimed(c config, st, b timedStat) []timedStat {
	st.finish()
	printTimed(st)
	if c.against == "" {
		return []timedStat{st}
	}
	b.finish()
	printTimed(b)
	printAgainst(st, b)
	return []timedStat{st, b}
}

func timedHTTP(ctx context.Context, c config, srv server, mcpCheck func(...string) []string) ([]timedStat, error) {
	st, b := timedStat{Name: srv.name}, timedStat{Name: srv.name + againstSuffix}
	target, stop, err := srv.start(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	p, err := newProxy(target)
	if err != nil {
		return nil, err
	}
	defer p.close()
	fmt.Printf("\n== %s: mcp-eval check ×%d (requests counted in an untimed run through a proxy first)\n", srv.name, c.reps)
	// As in abRun: counted through the proxy once, timed without it.
	p.take()
	counted := measure(ctx, c, "counted (proxy, not timed)", mcpCheck("--url", p.url), c.root)
	counted.Requests = p.take()
	if note := partial(counted); note != "" {
		fmt.Printf(" %s\n", note)
	}
	for i := 0; i < c.reps; i++ {
		argv := mcpCheck("--url", target)
		c.inTurns(i, func() {
			st.add(measure(ctx, c, fmt.Sprintf("run %d", i+1), argv, c.root))
		}, func() {
			b.add(measure(ctx, c, fmt.Sprintf("run %d%s", i+1, againstSuffix), c.againstArgv(argv), c.root))
		})
	}
	st.Requests = total(counted.Requests)
	return finishTimed(c, st, b), nil
}
