package action

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/mcp-eval/mcp-eval-action/pkg/config"
	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/pipeline"
)

// Input is one input of action.yml and host/action.yml.
type Input struct {
	Name        string
	Default     string
	Description string
}

// DefaultArtifact is the artifact name the baseline search looks for and the
// example workflow uploads report.json as.
const DefaultArtifact = "mcp-eval-report"

// InputSpecs lists every input, in action.yml order. A contract test keeps
// both action files in step with it (names and defaults).
//
// Inputs that mcp-eval.yaml can also set (golden, max-drop, runs, models)
// default to "": an empty input leaves the file's value, so the precedence
// flag > input > file holds and a default here never silently overrides the
// file.
func InputSpecs() []Input {
	return []Input{
		{"server-url", "", "Streamable HTTP endpoint of the MCP server. In the Docker action the runner's localhost is not reachable: use a services: container's hostname, or bind 0.0.0.0 and use the Docker bridge IP (http://172.17.0.1:PORT/mcp). Exactly one of server-url and server-command (or set it in the config file)."},
		{"server-command", "", "Command line of a stdio MCP server, run without a shell from the workspace. The Docker image has node and python3; anything else needs the host action."},
		{"server-user", "", "Who a stdio server runs as: auto (uid 65534 when mcp-eval runs as root, as the Docker action does, in a workflow or with a secret in its environment), unprivileged (always uid 65534; needs root) or current (mcp-eval's own user: the server can then read mcp-eval's environment, model keys and token included). Default: from the config file (server.user), else auto."},
		{"golden", "", "Golden set file or directory, relative to the workspace (default: from the config file)."},
		{"layers", "auto", "auto (by event: push and pull requests run Layer 0; schedule, workflow_dispatch and a pull request labelled run-evals run all), or a comma list of 0,1,2,3 or conformance,behavior,resilience,telemetry."},
		{"max-drop", "", "Largest drop of a score vs the baseline that is not a regression, a fraction in [0, 1) like 0.02, or points like 2% (default: from the config file, else 0.02)."},
		{"max-cost-increase", "", "Largest rise of a model's cost per case over the baseline: a fraction (0.25) or a percentage (25%). Default: from the config file (gate.max-cost-increase), else not gated."},
		{"max-cost-per-run", "", "Most the run's model calls may cost, in USD (5 or $2.50). Default: from the config file (gate.max-cost-per-run), else no cap."},
		{"max-tool-tokens", "", "Most tokens the tools array may cost in every model request. Default: from the config file (gate.max-tool-tokens), else not gated."},
		{"max-tool-tokens-increase", "", "Largest rise of the tools array's tokens over the baseline: a fraction (0.1) or a percentage (10%). Default: from the config file (gate.max-tool-tokens-increase), else not gated."},
		{"lint", "", "What a description-lint finding does: off, warn or fail. Default: from the config file (gate.lint), else warn."},
		{"tool-tokens", "", "How the tool surface's tokens are counted: estimate (the embedded tokenizer only) or exact (also each model's provider, at its token-counting endpoint, on runs that hold its key). Default: from the config file (conformance.tool-tokens), else estimate."},
		{"runs", "", "Runs per case (default: from the config file, else 5)."},
		{"models", "", "Comma list of models, e.g. openai:gpt-5-mini,anthropic:claude-sonnet-4-5 (default: from the config file, per trigger)."},
		{"prices", "", "Price override file, relative to the workspace, in the format of the built-in price table (dated rows). Its models replace or add to the built-in ones for the budget, the spend preview and the report's cost (default: pricing.file in the config file)."},
		{"record", "", "Directory, relative to the workspace, to store every model exchange of Layers 1 and 2 in (a cassette, for replay); bypasses the result cache. Record on the nightly run, then commit or upload the directory."},
		{"replay", "", "Directory of a cassette, relative to the workspace: Layers 1 and 2 answer every model request from it, with no model and no key, while the tool calls go to the server. Default: none; on a fork pull request with layers auto, eval.cassette of the config file."},
		{"baseline-artifact", DefaultArtifact, "Name of the artifact holding report.json in earlier runs of this workflow; the baseline is the newest green push or schedule run on the default branch whose report passed."},
		{"baseline", "", "Path of a report.json to use as the baseline instead of searching earlier runs."},
		{"github-token", "${{ github.token }}", "Token for the baseline search (actions: read) and the PR comment (pull-requests: write)."},
		{"comment", "true", "Post or update one sticky comment on the pull request: true or false."},
		{"shard", "", "Run one share of Layers 1 and 2: i/n (e.g. 2/4, from a matrix), split by case × model and balanced on the baseline's durations; Layer 0 runs in shard 1 only. Upload each shard's report.json as artifact <shard-artifact>-<i>. merge: download every shard's report of this run, merge them into one report, gate it and comment once."},
		{"shard-artifact", "mcp-eval-shard", "Name prefix of the shards' report artifacts: shard i uploads <prefix>-<i>, and shard: merge downloads every artifact of this run whose name starts with <prefix>-."},
		{"config", "", "Path of mcp-eval.yaml (default: mcp-eval.yaml at the workspace root when present)."},
	}
}

// Output is one output of the action.
type Output struct {
	Name        string
	Description string
}

// Score names accepted in Result.Scores; each becomes output score-<name>.
var scoreNames = []string{"conformance", "behavior", "resilience", "telemetry"}

// OutputSpecs lists every output, in action.yml order.
func OutputSpecs() []Output {
	outs := []Output{
		{"verdict", "pass, fail, inconclusive, cancelled (the job was cancelled mid-run) or error (nothing failed, but runs the harness could not judge, the step exits 2)."},
		{"passed", "true when the verdict is pass or inconclusive, else false."},
		{"report-path", "Path of report.json, relative to the workspace."},
		{"comment", "What happened to the PR comment: created, updated, unchanged, skipped or failed."},
	}
	for _, s := range scoreNames {
		outs = append(outs, Output{"score-" + s, "Main " + s + " score of this run (a number, or k/N), empty when the layer did not run."})
	}
	return outs
}

// Inputs are the parsed and validated inputs. The token is deliberately not
// here: a Plan can be printed or logged whole.
type Inputs struct {
	ServerURL        string
	ServerCommand    string
	ServerUser       string // "": from the config file
	Golden           string
	AutoLayers       bool
	Layers           []Layer  // when !AutoLayers
	MaxDrop          *float64 // nil: from the config file
	MaxCostIncrease  *float64 // nil: from the config file
	MaxCostPerRun    *float64 // USD; nil: from the config file
	MaxToolTokens    *int     // nil: from the config file
	MaxToolTokensInc *float64 // nil: from the config file
	Lint             string   // "": from the config file
	ToolTokens       string   // estimate | exact; "": from the config file
	Runs             int      // 0: from the config file
	Models           []string
	Prices           string // price override file, relative to the workspace
	// Record and Replay are cassette directories, relative to the
	// workspace.
	Record, Replay   string
	BaselineArtifact string
	Baseline         string
	HasToken         bool
	Comment          bool
	Config           string
	// Shard is "i/n" (one share of Layers 1 and 2); MergeShards is the
	// merge mode (shard: merge), which runs nothing and merges the
	// artifacts named ShardArtifact-* of this run.
	Shard         string
	MergeShards   bool
	ShardArtifact string
}

// ParseInputs reads and validates every input through go-githubactions
// (INPUT_<NAME>, hyphens kept, trimmed). GitHub does not enforce required
// inputs or types, so everything is checked here; all problems are reported
// at once, each naming its input.
func ParseInputs(getenv func(string) string) (Inputs, error) {
	gha := githubactions.New(githubactions.WithGetenv(getenv))
	get := func(name string) string {
		v := gha.GetInput(name)
		if v == "" {
			for _, in := range InputSpecs() {
				// The host action passes every input; the Docker action too. A
				// direct `mcp-eval action` run may not: fall back to the default.
				if in.Name == name && !strings.HasPrefix(in.Default, "${{") {
					return in.Default
				}
			}
		}
		return v
	}
	var (
		in   Inputs
		errs []error
	)
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("input %q: %s", name, fmt.Sprintf(format, args...)))
	}

	in.ServerURL = get("server-url")
	in.ServerCommand = get("server-command")
	switch {
	case in.ServerURL != "" && in.ServerCommand != "":
		bad("server-url", "set together with server-command; give exactly one (an HTTP endpoint or a stdio command)")
	case in.ServerURL != "":
		if u, err := url.Parse(in.ServerURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("server-url", "%q is not an http(s) URL; e.g. http://172.17.0.1:3000/mcp", in.ServerURL)
		}
	}
	if strings.ContainsAny(in.ServerCommand, "\r\n") {
		bad("server-command", "must be one line (a command and its arguments)")
	}
	switch in.ServerUser = get("server-user"); in.ServerUser {
	case "", "auto", "unprivileged", "current":
	default:
		bad("server-user", "%q is not auto, unprivileged or current", in.ServerUser)
	}

	in.Golden = get("golden")
	in.Config = get("config")
	in.Prices = get("prices")
	in.Record, in.Replay = get("record"), get("replay")
	if in.Record != "" && in.Replay != "" {
		bad("record", "record and replay are exclusive: record on a run with model keys, replay on one without")
	}
	for _, p := range [][2]string{{"golden", in.Golden}, {"config", in.Config}, {"prices", in.Prices}, {"record", in.Record}, {"replay", in.Replay}} {
		if err := checkPath(p[1]); err != nil {
			bad(p[0], "%v", err)
		}
	}

	var err error
	if in.AutoLayers, in.Layers, err = ParseLayers(get("layers")); err != nil {
		bad("layers", "%v", err)
	}

	if v := get("max-drop"); v != "" {
		// The flag's and the config file's parser: one set of values for all.
		if f, err := gate.ParseMaxDrop(v); err != nil {
			bad("max-drop", "%s", strings.TrimPrefix(err.Error(), gate.ErrPolicy.Error()+": "))
		} else {
			in.MaxDrop = &f
		}
	}
	// The cost gates read as mcp-eval.yaml and the flags read them.
	for _, c := range []struct {
		name  string
		parse func(string) (float64, error)
		dst   **float64
	}{{"max-cost-increase", gate.ParseCostIncrease, &in.MaxCostIncrease}, {"max-cost-per-run", gate.ParseUSD, &in.MaxCostPerRun},
		{"max-tool-tokens-increase", gate.ParseToolTokensIncrease, &in.MaxToolTokensInc}} {
		v := get(c.name)
		if v == "" {
			continue
		}
		f, err := c.parse(v)
		if err != nil {
			bad(c.name, "%s", strings.TrimPrefix(err.Error(), gate.ErrPolicy.Error()+": "+c.name+" "))
			continue
		}
		*c.dst = &f
	}
	if v := get("max-tool-tokens"); v != "" {
		if n, err := gate.ParseToolTokens(v); err != nil {
			bad("max-tool-tokens", "%s", strings.TrimPrefix(err.Error(), gate.ErrPolicy.Error()+": max-tool-tokens "))
		} else {
			in.MaxToolTokens = &n
		}
	}
	if v := get("lint"); v != "" {
		if err := gate.CheckLint(v); err != nil {
			bad("lint", "%q is not off, warn or fail", v)
		} else {
			in.Lint = v
		}
	}
	if v := get("tool-tokens"); v != "" {
		if err := config.CheckToolTokens(v); err != nil {
			bad("tool-tokens", "%q is not estimate or exact", v)
		} else {
			in.ToolTokens = v
		}
	}
	if v := get("runs"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			bad("runs", "%q is not a whole number from 1 to 100", v)
		} else {
			in.Runs = n
		}
	}
	if v := get("models"); v != "" {
		for _, m := range strings.Split(v, ",") {
			m = strings.TrimSpace(m)
			if m == "" || strings.ContainsAny(m, " \t\r\n") {
				bad("models", "%q is not a comma list of model names (provider:model, no spaces inside a name)", v)
				break
			}
			in.Models = append(in.Models, m)
		}
	}

	in.BaselineArtifact = get("baseline-artifact")
	in.Baseline = get("baseline")
	if !validArtifactName(in.BaselineArtifact) {
		bad("baseline-artifact", "%q is not a valid artifact name (non-empty; none of \" : < > | * ? \\ / or line breaks)", in.BaselineArtifact)
	}
	if in.Baseline != "" {
		if err := checkPath(in.Baseline); err != nil {
			bad("baseline", "%v", err)
		}
		if in.BaselineArtifact != DefaultArtifact {
			bad("baseline", "set together with baseline-artifact; give a local file or an artifact name, not both")
		}
	}

	in.HasToken = token(getenv) != ""

	switch v := get("shard"); v {
	case "":
	case "merge":
		in.MergeShards = true
	default:
		if _, err := pipeline.ParseShard(v); err != nil {
			bad("shard", "%q is not i/n (e.g. 2/4: the second of four shards) or merge", v)
		} else {
			in.Shard = v
		}
	}
	in.ShardArtifact = get("shard-artifact")
	if !validArtifactName(in.ShardArtifact) {
		bad("shard-artifact", "%q is not a valid artifact name (non-empty; none of \" : < > | * ? \\ / or line breaks)", in.ShardArtifact)
	}

	switch c := strings.ToLower(get("comment")); c {
	case "true":
		in.Comment = true
	case "false":
	default:
		bad("comment", "%q is not true or false", c)
	}
	return in, errors.Join(errs...)
}

// token is github-token, falling back to GITHUB_TOKEN for `mcp-eval run` in a
// plain run: step. It is read where needed and never stored in a Plan.
func token(getenv func(string) string) string {
	if t := strings.TrimSpace(getenv("INPUT_GITHUB-TOKEN")); t != "" {
		return t
	}
	return strings.TrimSpace(getenv("GITHUB_TOKEN"))
}

var artifactBad = regexp.MustCompile(`[":<>|*?\\/\r\n]`)

func validArtifactName(s string) bool { return s != "" && !artifactBad.MatchString(s) }

func checkPath(p string) error {
	if strings.ContainsAny(p, "\x00\r\n") {
		return errors.New("a path must be one line")
	}
	return nil
}

// UnknownInputs returns the INPUT_* variables of environ that are not inputs
// of the action, each with a suggestion. GitHub only warns about unexpected
// `with:` keys; a typo such as max_drop would otherwise be ignored silently.
func UnknownInputs(environ []string) []string {
	known := map[string]string{}
	for _, in := range InputSpecs() {
		known["INPUT_"+strings.ToUpper(in.Name)] = in.Name
	}
	squash := func(s string) string {
		return strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(strings.TrimPrefix(s, "INPUT_")))
	}
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "INPUT_") || known[name] != "" {
			continue
		}
		msg := fmt.Sprintf("unknown input %q", strings.ToLower(strings.TrimPrefix(name, "INPUT_")))
		for k, v := range known {
			if squash(k) == squash(name) {
				msg += fmt.Sprintf("; did you mean %q?", v)
			}
		}
		out = append(out, msg)
	}
	return out
}
