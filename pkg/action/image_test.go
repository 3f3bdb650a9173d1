package action

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// dockerStage is one FROM … stage of the Dockerfile with its ARG lines.
type dockerStage struct {
	from string
	args map[string]*string // name -> default (nil: declared without one)
	body string
}

// parseDockerfile splits the Dockerfile into stages, joining continued
// lines; enough of the syntax for the checks below.
func parseDockerfile(t *testing.T, src string) (global map[string]*string, stages []dockerStage) {
	t.Helper()
	global = map[string]*string{}
	joined := strings.ReplaceAll(src, "\\\n", " ")
	argRE := regexp.MustCompile(`^ARG\s+([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$`)
	for _, l := range strings.Split(joined, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		upper := strings.ToUpper(l)
		switch {
		case strings.HasPrefix(upper, "FROM "):
			stages = append(stages, dockerStage{from: l, args: map[string]*string{}})
		case strings.HasPrefix(upper, "ARG "):
			m := argRE.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("Dockerfile: cannot read %q (one ARG per line)", l)
			}
			var def *string
			if strings.Contains(l, "=") {
				def = &m[2]
			}
			if len(stages) == 0 {
				global[m[1]] = def
			} else {
				stages[len(stages)-1].args[m[1]] = def
			}
		}
		if len(stages) > 0 {
			stages[len(stages)-1].body += l + "\n"
		}
	}
	return global, stages
}

// BuildKit fills TARGETOS/TARGETARCH (and the other platform ARGs) from
// --platform only when the ARG has no default; with `ARG TARGETARCH=amd64`
// an arm64 image carries an x86-64 binary (issue 18). The builder stage
// runs on the build machine's platform and must cross-compile for the
// target's.
func TestContractDockerfilePlatformArgs(t *testing.T) {
	global, stages := parseDockerfile(t, string(repoFile(t, "Dockerfile")))
	platformArg := regexp.MustCompile(`^(TARGET|BUILD)(PLATFORM|OS|ARCH|VARIANT)$`)
	for name, def := range global {
		if platformArg.MatchString(name) && def != nil {
			t.Errorf("global ARG %s=%s: a default overrides the value BuildKit sets from --platform", name, *def)
		}
	}
	var build *dockerStage
	for i, s := range stages {
		for name, def := range s.args {
			if platformArg.MatchString(name) && def != nil {
				t.Errorf("stage %q: ARG %s=%s: a default overrides the value BuildKit sets from --platform; declare it as ARG %s", s.from, name, *def, name)
			}
		}
		if strings.Contains(s.body, "go build") {
			build = &stages[i]
		}
	}
	if build == nil {
		t.Fatal("no stage runs go build")
	}
	if !strings.Contains(build.from, "--platform=$BUILDPLATFORM") {
		t.Errorf("builder stage %q: want FROM --platform=$BUILDPLATFORM (cross-compile, no emulated Go toolchain)", build.from)
	}
	for _, name := range []string{"TARGETOS", "TARGETARCH"} {
		if _, ok := build.args[name]; !ok {
			t.Errorf("builder stage lacks ARG %s: without it $%s is empty in RUN", name, name)
		}
	}
	if !regexp.MustCompile(`GOOS=\$\{?TARGETOS\}?\s+GOARCH=\$\{?TARGETARCH\}?\s`).MatchString(build.body) {
		t.Errorf("go build does not take GOOS/GOARCH from $TARGETOS/$TARGETARCH:\n%s", build.body)
	}
	final := stages[len(stages)-1]
	if strings.Contains(final.from, "$BUILDPLATFORM") {
		t.Errorf("final stage %q runs on the build platform: it must be the target's", final.from)
	}
}

// The parser above reads what it must: a default is seen as one.
func TestParseDockerfileSeesDefaults(t *testing.T) {
	_, st := parseDockerfile(t, "FROM --platform=$BUILDPLATFORM x AS build\nARG TARGETOS=linux\nARG TARGETARCH\nRUN GOOS=$TARGETOS \\\n  GOARCH=$TARGETARCH go build .\n")
	if len(st) != 1 || st[0].args["TARGETOS"] == nil || *st[0].args["TARGETOS"] != "linux" || st[0].args["TARGETARCH"] != nil {
		t.Fatalf("parsed %+v", st)
	}
	if !strings.Contains(st[0].body, "go build") {
		t.Fatalf("continued RUN line lost: %q", st[0].body)
	}
}

// release.yml's "Pin the image and the version" step, run as written on
// copies of action.yml and host/action.yml: the released action.yml names
// the prebuilt image by version and digest (no job builds the Dockerfile,
// which needs BuildKit), host/action.yml the version, and nothing else
// changes.
func TestReleaseRewritesActionImage(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run release.yml's script")
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Name string `yaml:"name"`
				Run  string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(repoFile(t, ".github/workflows/release.yml"), &wf); err != nil {
		t.Fatal(err)
	}
	var script string
	for _, s := range wf.Jobs["release"].Steps {
		if s.Name == "Pin the image and the version" {
			script = s.Run
		}
	}
	if script == "" {
		t.Fatal(`release.yml: job release has no step "Pin the image and the version"`)
	}
	// The rewrite itself, exactly; `git diff` and the contract test run
	// are the workflow's own checks and need a checkout.
	var keep []string
	for _, l := range strings.Split(script, "\n") {
		if f := strings.Fields(l); len(f) > 0 && (f[0] == "git" || f[0] == "go") {
			continue
		}
		keep = append(keep, l)
	}
	dir := t.TempDir()
	before := map[string]string{}
	for _, rel := range []string{"action.yml", "host/action.yml"} {
		b := repoFile(t, rel)
		before[rel] = string(b)
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const (
		image   = "ghcr.io/mcp-eval/mcp-eval-action"
		version = "v1.4.2"
		digest  = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	)
	cmd := exec.Command(bash, "-euo", "pipefail", "-c", strings.Join(keep, "\n"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "IMAGE="+image, "VERSION="+version, "DIGEST="+digest)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release.yml's pin step failed: %v\n%s", err, out)
	}
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	got := read("action.yml")
	var a actionFile
	if err := yaml.Unmarshal([]byte(got), &a); err != nil {
		t.Fatalf("released action.yml is not YAML: %v", err)
	}
	want := "docker://" + image + ":" + version + "@" + digest
	if a.Runs.Image != want {
		t.Errorf("released runs.image = %q, want %q", a.Runs.Image, want)
	}
	if !releasedImage.MatchString(a.Runs.Image) {
		t.Errorf("released runs.image %q is not what the contract test accepts (%s)", a.Runs.Image, releasedImage)
	}
	assertOneLineChanged(t, "action.yml", before["action.yml"], got, "  image: Dockerfile", "  image: "+want)

	host := read("host/action.yml")
	if !strings.Contains(host, "MCP_EVAL_VERSION: "+version+"\n") {
		t.Errorf("released host/action.yml does not set MCP_EVAL_VERSION: %s", version)
	}
	if strings.Contains(host, "MCP_EVAL_VERSION: dev") {
		t.Errorf("released host/action.yml still names version dev")
	}
}

// assertOneLineChanged checks that after differs from before in exactly
// the one line from -> to.
func assertOneLineChanged(t *testing.T, name, before, after, from, to string) {
	t.Helper()
	b, a := strings.Split(before, "\n"), strings.Split(after, "\n")
	if len(a) != len(b) {
		t.Fatalf("%s: %d lines after the rewrite, %d before", name, len(a), len(b))
	}
	changed := 0
	for i := range b {
		if a[i] == b[i] {
			continue
		}
		changed++
		if b[i] != from || a[i] != to {
			t.Errorf("%s line %d: %q -> %q, want only %q -> %q", name, i+1, b[i], a[i], from, to)
		}
	}
	if changed != 1 {
		t.Errorf("%s: %d lines changed, want exactly 1 (%q)", name, changed, from)
	}
}
