package action

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The contract between the Go input parsing and the two action files: same
// input names in the same order, same defaults, same outputs. GitHub passes
// whatever the YAML says; only these tests notice a drift.

type actionFile struct {
	Inputs  yaml.Node `yaml:"inputs"`
	Outputs yaml.Node `yaml:"outputs"`
	Runs    struct {
		Using string   `yaml:"using"`
		Image string   `yaml:"image"`
		Args  []string `yaml:"args"`
		Env   map[string]string
		Steps []struct {
			ID   string            `yaml:"id"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			Env  map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

type inputDecl struct {
	Description string  `yaml:"description"`
	Required    bool    `yaml:"required"`
	Default     *string `yaml:"default"`
}

type outputDecl struct {
	Description string `yaml:"description"`
	Value       string `yaml:"value"`
}

func repoFile(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func loadAction(t *testing.T, rel string) (actionFile, []string, map[string]inputDecl, []string, map[string]outputDecl) {
	t.Helper()
	var a actionFile
	if err := yaml.Unmarshal(repoFile(t, rel), &a); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	// Mapping nodes keep the file's order: Content is key, value, key, value…
	var inNames, outNames []string
	ins, outs := map[string]inputDecl{}, map[string]outputDecl{}
	for i := 0; i+1 < len(a.Inputs.Content); i += 2 {
		var d inputDecl
		if err := a.Inputs.Content[i+1].Decode(&d); err != nil {
			t.Fatal(err)
		}
		name := a.Inputs.Content[i].Value
		inNames = append(inNames, name)
		ins[name] = d
	}
	for i := 0; i+1 < len(a.Outputs.Content); i += 2 {
		var d outputDecl
		if err := a.Outputs.Content[i+1].Decode(&d); err != nil {
			t.Fatal(err)
		}
		name := a.Outputs.Content[i].Value
		outNames = append(outNames, name)
		outs[name] = d
	}
	return a, inNames, ins, outNames, outs
}

func specNames() (ins []string, outs []string) {
	for _, in := range InputSpecs() {
		ins = append(ins, in.Name)
	}
	for _, o := range OutputSpecs() {
		outs = append(outs, o.Name)
	}
	return ins, outs
}

func checkInputsAndOutputs(t *testing.T, rel string, inNames []string, ins map[string]inputDecl, outNames []string, outs map[string]outputDecl) {
	t.Helper()
	wantIn, wantOut := specNames()
	if !reflect.DeepEqual(inNames, wantIn) {
		t.Errorf("%s inputs = %v\nGo InputSpecs = %v", rel, inNames, wantIn)
	}
	for _, spec := range InputSpecs() {
		d, ok := ins[spec.Name]
		if !ok {
			continue
		}
		if d.Default == nil || *d.Default != spec.Default {
			t.Errorf("%s: input %s default = %v, Go default = %q", rel, spec.Name, d.Default, spec.Default)
		}
		if d.Required {
			t.Errorf("%s: input %s is required: GitHub does not enforce it; Go validates instead", rel, spec.Name)
		}
		if strings.TrimSpace(d.Description) == "" {
			t.Errorf("%s: input %s has no description", rel, spec.Name)
		}
	}
	if !reflect.DeepEqual(outNames, wantOut) {
		t.Errorf("%s outputs = %v\nGo OutputSpecs = %v", rel, outNames, wantOut)
	}
	for name, d := range outs {
		if strings.TrimSpace(d.Description) == "" {
			t.Errorf("%s: output %s has no description", rel, name)
		}
	}
}

var releasedImage = regexp.MustCompile(`^docker://ghcr\.io/mcp-eval/mcp-eval-action:v\d+\.\d+\.\d+@sha256:[0-9a-f]{64}$`)

func TestContractDockerAction(t *testing.T) {
	a, inNames, ins, outNames, outs := loadAction(t, "action.yml")
	checkInputsAndOutputs(t, "action.yml", inNames, ins, outNames, outs)
	if a.Runs.Using != "docker" {
		t.Errorf("runs.using = %q, want docker", a.Runs.Using)
	}
	// Development builds the Dockerfile; a release pins version and digest,
	// never a moving tag.
	if a.Runs.Image != "Dockerfile" && !releasedImage.MatchString(a.Runs.Image) {
		t.Errorf("runs.image = %q, want Dockerfile or %s", a.Runs.Image, releasedImage)
	}
	if !reflect.DeepEqual(a.Runs.Args, []string{"action"}) {
		t.Errorf("runs.args = %q, want [action]: the subcommand only, never a secret", a.Runs.Args)
	}
	for _, o := range outs {
		if o.Value != "" {
			t.Errorf("docker action outputs take no value: expressions")
		}
	}
}

func TestContractHostAction(t *testing.T) {
	a, inNames, ins, outNames, outs := loadAction(t, "host/action.yml")
	checkInputsAndOutputs(t, "host/action.yml", inNames, ins, outNames, outs)
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using = %q, want composite", a.Runs.Using)
	}
	for name, d := range outs {
		if want := "${{ steps.run.outputs." + name + " }}"; d.Value != want {
			t.Errorf("host output %s value = %q, want %q", name, d.Value, want)
		}
	}
	var run, install map[string]string
	for _, s := range a.Runs.Steps {
		switch s.ID {
		case "run":
			run = s.Env
			if !strings.Contains(s.Run, `"$MCP_EVAL_BIN" action`) {
				t.Errorf("the run step does not run the binary's action mode: %q", s.Run)
			}
		case "install":
			install = s.Env
		}
		if s.Uses != "" && !pinned.MatchString(s.Uses) {
			t.Errorf("host step uses %q: pin actions by full commit SHA", s.Uses)
		}
	}
	// Every input is mapped to the variable the Docker action would get.
	wantEnv := map[string]string{}
	for _, in := range InputSpecs() {
		wantEnv["INPUT_"+strings.ToUpper(in.Name)] = "${{ inputs." + in.Name + " }}"
	}
	gotEnv := map[string]string{}
	for k, v := range run {
		if strings.HasPrefix(k, "INPUT_") {
			gotEnv[k] = v
		}
	}
	if !reflect.DeepEqual(gotEnv, wantEnv) {
		t.Errorf("run step INPUT_* env = %v\nwant %v", gotEnv, wantEnv)
	}
	if v := install["MCP_EVAL_VERSION"]; v != "dev" && !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(v) {
		t.Errorf("MCP_EVAL_VERSION = %q, want dev or vX.Y.Z", v)
	}
}

func TestContractDockerfile(t *testing.T) {
	lines := strings.Split(string(repoFile(t, "Dockerfile")), "\n")
	final := -1
	for i, l := range lines {
		if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(l)), "FROM ") {
			final = i
		}
	}
	if final < 0 {
		t.Fatal("no FROM")
	}
	stage := strings.Join(lines[final:], "\n")
	for _, bad := range []string{"\nUSER ", "\nWORKDIR ", "\nCMD "} {
		if strings.Contains(stage, bad) {
			t.Errorf("final stage has %q: GitHub needs root and its own working directory", strings.TrimSpace(bad))
		}
	}
	ep := regexp.MustCompile(`(?m)^ENTRYPOINT \["(/[^"]+)"\]$`).FindStringSubmatch(stage)
	if ep == nil {
		t.Errorf("final stage needs an exec-form ENTRYPOINT with an absolute path to the binary (no shell)")
	}
	for _, pkg := range []string{"nodejs", "python3", "ca-certificates"} {
		if !strings.Contains(stage, pkg) {
			t.Errorf("final stage lacks %s: stdio servers in the workspace need it", pkg)
		}
	}
}

// pinned matches a third-party action pinned by a full commit SHA.
var pinned = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$`)

// Every third-party action in our workflows and the users' example is
// pinned by commit SHA with its version in a comment: a tag can be moved
// (tj-actions/changed-files, March 2025).
func TestContractWorkflowsPinActions(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", ".github", "workflows", "*.yml"))
	files = append(files, filepath.Join("..", "..", "docs", "example-workflow.yml"))
	usesLine := regexp.MustCompile(`^\s*(?:-\s*)?uses:\s*(\S+)\s*(#.*)?$`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			m := usesLine.FindStringSubmatch(l)
			if m == nil || strings.HasPrefix(m[1], "./") || strings.HasPrefix(m[1], "docker://") {
				continue
			}
			if m[1] == "mcp-eval/mcp-eval-action@v1" || m[1] == "mcp-eval/mcp-eval-action/host@v1" {
				continue // the example's own action: users pin it by SHA (documented)
			}
			if !pinned.MatchString(m[1]) || !regexp.MustCompile(`^#\s*v\d`).MatchString(m[2]) {
				t.Errorf("%s:%d: %q: pin by full commit SHA with `# vX.Y.Z`", filepath.Base(f), i+1, strings.TrimSpace(l))
			}
		}
	}
}

// docs/action.md documents every input and output by name.
func TestContractDocsNameEveryInputAndOutput(t *testing.T) {
	doc := string(repoFile(t, "docs/action.md"))
	ins, outs := specNames()
	for _, name := range append(ins, outs...) {
		if !strings.Contains(doc, "`"+name+"`") {
			t.Errorf("docs/action.md does not mention `%s`", name)
		}
	}
}
