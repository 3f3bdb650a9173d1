// Command crosscheck runs mcp-eval's Layer 0 and the official MCP
// conformance suite on the same servers, maps the suite's checks onto our
// check ids with mapping.tsv, and rewrites the generated sections of
// docs/conformance-crosscheck.md (between <!-- crosscheck:begin NAME -->
// and <!-- crosscheck:end NAME --> markers) from the two tools' outputs.
// The mapping is knowledge; every verdict in the tables is computed.
//
//	bash scripts/crosscheck.sh [flags]          # installs what it needs, then runs this
//	go run ./internal/crosscheck -from DIR      # re-render from the outputs of an earlier run
//
// Run from the repository root. It starts only loopback servers it builds
// or finds in interop/bin and interop/ts, and stops them when done.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/conformance"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "crosscheck:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, log io.Writer) error {
	fs := flag.NewFlagSet("crosscheck", flag.ContinueOnError)
	fs.SetOutput(log)
	out := fs.String("out", ".cache/crosscheck", "directory for the raw outputs of both tools")
	from := fs.String("from", "", "re-render from the outputs in `DIR` instead of running anything")
	doc := fs.String("doc", "docs/conformance-crosscheck.md", "document whose generated sections to rewrite")
	only := fs.String("targets", "example,ts,gosdk,mcpgo", "targets to run, comma-separated (example is always run: it is the mutants' baseline)")
	mutants := fs.Bool("mutants", true, "also run every HTTP mutant of the reference server (about 10 s each)")
	mutantList := fs.String("mutant-ids", "", "run only these mutant ids, comma-separated (default: all that apply over HTTP)")
	jobs := fs.Int("jobs", 3, "mutants run at once (each is one server and one tool at a time)")
	timeout := fs.Duration("timeout", 90*time.Minute, "deadline for the whole run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(root, "scripts/official-suite.sh")); err != nil {
		return errors.New("run from the repository root (scripts/official-suite.sh not found)")
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	dir := *out
	if *from != "" {
		dir = *from
	} else {
		if err := collect(ctx, root, dir, *only, *mutants, *mutantList, *jobs, log); err != nil {
			return err
		}
	}
	data, err := load(root, dir)
	if err != nil {
		return err
	}
	primary, extra := []string{}, []string{}
	for _, t := range data.Meta.Targets {
		if t == "example" || t == "ts" {
			primary = append(primary, t)
		} else {
			extra = append(extra, t)
		}
	}
	docPath := *doc
	if !filepath.IsAbs(docPath) {
		docPath = filepath.Join(root, docPath)
	}
	if err := rewrite(docPath, data.Sections(primary, extra)); err != nil {
		return err
	}
	fmt.Fprintf(log, "crosscheck: rewrote %s from %s\n", *doc, dir)
	return nil
}

// collect builds the binaries, runs the targets (and mutants) and writes
// meta.json into dir.
func collect(ctx context.Context, root, dir, only string, withMutants bool, mutantList string, jobs int, log io.Writer) error {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(absDir); err != nil {
		return err
	}
	bin := filepath.Join(absDir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	for _, b := range [][2]string{{"mcp-eval", "./cmd/mcp-eval"}, {"example-server", "./golden-examples/cmd/example-server"}} {
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, b[0]), b[1]).CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %v: %s", b[1], err, out)
		}
	}
	want := map[string]bool{"example": true}
	for _, t := range strings.Split(only, ",") {
		want[strings.TrimSpace(t)] = true
	}
	meta := Meta{Date: time.Now().UTC().Format("2006-01-02"), Go: runtime.Version(), Versions: versions(root)}
	meta.Commit, meta.Dirty = commit(ctx, root)
	meta.Node = strings.TrimSpace(cmdOut(ctx, root, "node", "--version"))
	r := runner{root: root, bin: bin, out: absDir, log: log}
	for _, t := range targets(bin) {
		if !want[t.Name] {
			continue
		}
		if err := r.runTarget(ctx, t); err != nil {
			return err
		}
		meta.Targets = append(meta.Targets, t.Name)
	}
	// meta.json is rewritten as results arrive, so an interrupted run can
	// still be rendered (-from) with what finished.
	var metaMu sync.Mutex
	save := func() error {
		metaMu.Lock()
		defer metaMu.Unlock()
		data, err := json.MarshalIndent(meta, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(absDir, "meta.json"), data, 0o644)
	}
	if err := save(); err != nil {
		return err
	}
	if withMutants {
		ids := httpMutants()
		if mutantList != "" {
			ids = strings.Split(mutantList, ",")
		}
		// Each mutant is its own server on its own port, so a few run at
		// once; the first error ends the run.
		jobs = max(1, jobs)
		sem := make(chan struct{}, jobs)
		errs := make([]error, len(ids))
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				fmt.Fprintf(log, "crosscheck: mutant %s (%d/%d)\n", id, i+1, len(ids))
				if errs[i] = r.runMutant(ctx, id); errs[i] == nil {
					metaMu.Lock()
					meta.Mutants = append(meta.Mutants, id)
					metaMu.Unlock()
					errs[i] = save()
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		sort.Strings(meta.Mutants)
	}
	return save()
}

// httpMutants are the reference server's mutant ids whose check runs over
// HTTP (a stdio-only rule's mutant shows nothing there), sorted.
func httpMutants() []string {
	http := map[string]bool{}
	for _, c := range conformance.Registry() {
		if c.Transports.Has("http") {
			http[c.ID] = true
		}
	}
	var ids []string
	for id := range refserver.Mutants {
		if http[id] {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

func cmdOut(ctx context.Context, dir string, argv ...string) string {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	out, _ := cmd.Output()
	return string(out)
}

// commit is HEAD's short hash, and whether the tree differs from it in
// anything but the document this program rewrites.
func commit(ctx context.Context, root string) (string, bool) {
	hash := strings.TrimSpace(cmdOut(ctx, root, "git", "rev-parse", "--short", "HEAD"))
	dirty := false
	for _, l := range strings.Split(cmdOut(ctx, root, "git", "status", "--porcelain"), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasSuffix(l, "docs/conformance-crosscheck.md") {
			dirty = true
		}
	}
	return hash, dirty
}

var requireLine = regexp.MustCompile(`(?m)^\s*(github\.com/\S+)\s+(v\S+)`)

// versions says what each target runs, read from the installed packages.
func versions(root string) map[string]string {
	pkg := func(name string) string {
		var p struct {
			Version string `json:"version"`
		}
		if err := loadJSON(filepath.Join(root, "interop/ts/node_modules", name, "package.json"), &p); err != nil {
			return "?"
		}
		return p.Version
	}
	mods := map[string]string{}
	if data, err := os.ReadFile(filepath.Join(root, "interop/go/go.mod")); err == nil {
		for _, m := range requireLine.FindAllStringSubmatch(string(data), -1) {
			mods[m[1]] = m[2]
		}
	}
	return map[string]string{
		"example": "the reference server, `example-server --http 127.0.0.1:0` (golden-examples/cmd/example-server)",
		"ts": fmt.Sprintf("the TypeScript SDK v2 fixture `node interop/ts/server.mjs http 0` (`@modelcontextprotocol/server@%s`, `@modelcontextprotocol/node@%s`)",
			pkg("@modelcontextprotocol/server"), pkg("@modelcontextprotocol/node")),
		"gosdk": fmt.Sprintf("`interop/bin/gosdk-srv --http 127.0.0.1:0 --stateless` (`github.com/modelcontextprotocol/go-sdk %s`)", mods["github.com/modelcontextprotocol/go-sdk"]),
		"mcpgo": fmt.Sprintf("`interop/bin/mcpgo-srv --http 127.0.0.1:0 --stateless` (`github.com/mark3labs/mcp-go %s`)", mods["github.com/mark3labs/mcp-go"]),
	}
}

var suiteVersion = regexp.MustCompile(`^# official-suite (\S+) .*node=(\S+)`)

// load reads meta.json and every output named there.
func load(root, dir string) (*Data, error) {
	d := &Data{Ours: map[string]*Ours{}, Official: map[string]*Official{}}
	if err := loadJSON(filepath.Join(dir, "meta.json"), &d.Meta); err != nil {
		return nil, fmt.Errorf("reading the run's meta.json (run without -from first): %w", err)
	}
	var err error
	if d.Rows, err = LoadMapping(filepath.Join(root, "internal/crosscheck/mapping.tsv")); err != nil {
		return nil, err
	}
	if d.Notes, err = LoadNotes(filepath.Join(root, "internal/crosscheck/mutant-notes.tsv")); err != nil {
		return nil, err
	}
	for _, t := range d.Meta.Targets {
		if d.Ours[t], err = loadOurs(filepath.Join(dir, t+".ours.json")); err != nil {
			return nil, err
		}
		if d.Official[t], err = loadOfficial(filepath.Join(dir, t+".official.json")); err != nil {
			return nil, err
		}
		if m := suiteVersion.FindStringSubmatch(d.Official[t].Header); m != nil {
			d.Meta.Suite = m[1]
			d.Meta.Node = m[2]
		}
	}
	if ex := d.Ours["example"]; ex != nil {
		d.Meta.HTTPCheck = len(ex.Conformance.Checks)
	}
	for _, id := range d.Meta.Mutants {
		m := MutantData{ID: id, Breaks: refserver.Mutants[id]}
		base := filepath.Join(dir, "mutant-"+id)
		if m.Ours, err = loadOurs(base + ".ours.json"); err != nil {
			return nil, err
		}
		if m.OursCall, err = loadOurs(base + ".ours-call.json"); err != nil {
			return nil, err
		}
		if m.Official, err = loadOfficial(base + ".official.json"); err != nil {
			return nil, err
		}
		d.Mutants = append(d.Mutants, m)
	}
	return d, nil
}

var marker = regexp.MustCompile(`<!-- crosscheck:(begin|end) ([a-z]+) -->`)

// rewrite replaces the body between each pair of markers that sections
// names; a section with no markers in the document is an error, a marker
// pair with no section is left as it is.
func rewrite(path string, sections map[string]string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := replaceSections(data, sections)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, out, 0o644)
}

func replaceSections(data []byte, sections map[string]string) ([]byte, error) {
	var b bytes.Buffer
	locs := marker.FindAllSubmatchIndex(data, -1)
	pos := 0
	seen := map[string]bool{}
	for i := 0; i < len(locs); i++ {
		l := locs[i]
		kind, name := string(data[l[2]:l[3]]), string(data[l[4]:l[5]])
		if kind != "begin" {
			return nil, fmt.Errorf("crosscheck:end %s without its begin", name)
		}
		if i+1 >= len(locs) || string(data[locs[i+1][2]:locs[i+1][3]]) != "end" || string(data[locs[i+1][4]:locs[i+1][5]]) != name {
			return nil, fmt.Errorf("crosscheck:begin %s is not followed by its end marker", name)
		}
		body, ok := sections[name]
		seen[name] = true
		b.Write(data[pos:l[1]])
		if ok {
			b.WriteString("\n" + strings.TrimRight(body, "\n") + "\n")
			pos = locs[i+1][0]
		} else {
			pos = l[1]
		}
		i++
	}
	b.Write(data[pos:])
	var missing []string
	for name := range sections {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("no <!-- crosscheck:begin NAME --> markers for %s", strings.Join(missing, ", "))
	}
	return b.Bytes(), nil
}
