package behavior

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
)

func judgedWeather() golden.Case {
	c := weatherCase()
	c.Rubric = "The answer states the current weather in Seattle."
	return c
}

func passJudge() *judgeFake {
	return &judgeFake{id: "test:judge", verdict: func(user string) (string, error) {
		if strings.Contains(user, "Expected value:") {
			return `{"equivalent":true,"reason":"same city"}`, nil
		}
		return `{"verdict":"pass","reason":"it did"}`, nil
	}}
}

func runOnce(t *testing.T, cfg Config) *Result {
	t.Helper()
	plan, err := Prepare(ctx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := plan.Run(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestUnchangedRerunMakesZeroProviderCalls(t *testing.T) {
	rs := newRefServer(t)
	dir := t.TempDir()
	cache, err := OpenCache(dir)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	cache.Now = func() time.Time { return clock }
	model, judge := newScripted("test:a", matrixScripts()), passJudge()
	cfg := Config{Set: set(judgedWeather(), negativeCase(), chainCase()), Models: []llm.Provider{model}, Judge: judge,
		Client: rs.client, Runs: 5, Cache: cache, Now: func() time.Time { return clock }}
	first := runOnce(t, cfg)
	modelCalls, judgeCalls := model.calls.Load(), judge.calls.Load()
	// Every weather run is judged against the rubric (5 calls), and the
	// run that sent "Seattle" has its uncertain argument judged (1).
	if modelCalls == 0 || judgeCalls != 6 {
		t.Fatalf("first run: %d model calls, %d judge calls; want some, and 6", modelCalls, judgeCalls)
	}

	// The same suite an hour later: everything from the cache.
	clock = clock.Add(time.Hour)
	second := runOnce(t, cfg)
	if d := model.calls.Load() - modelCalls; d != 0 {
		t.Errorf("the unchanged re-run made %d model calls, want 0", d)
	}
	if d := judge.calls.Load() - judgeCalls; d != 0 {
		t.Errorf("the unchanged re-run made %d judge calls, want 0", d)
	}
	if second.Spend.Used.Calls != 0 || second.Spend.ReusedRuns != 15 || second.Preview.Calls() != 0 || second.Preview.Reused != 15 {
		t.Errorf("spend %+v, preview %+v; want 0 calls and 15 reused runs", second.Spend, second.Preview)
	}
	for _, r := range second.Behavior.Results {
		if r.Reused != len(r.Runs) {
			t.Errorf("%s: %d of %d runs marked reused", r.Case, r.Reused, len(r.Runs))
		}
		for _, run := range r.Runs {
			if run.CachedAt == nil || run.AgeSeconds != 3600 {
				t.Errorf("%s run %d: cachedAt %v, age %ds; want the first run's time, 3600s", r.Case, run.Run, run.CachedAt, run.AgeSeconds)
			}
		}
	}
	if !strings.Contains(strings.Join(second.Notes, "\n"), "15 of 15 runs reused from the cache") {
		t.Errorf("notes %q do not say the results were reused", second.Notes)
	}
	// The scores are the same, recomputed from the stored trajectories.
	for i, r := range first.Behavior.Results {
		r2 := second.Behavior.Results[i]
		if r.Passed != r2.Passed || len(r.Scores) != len(r2.Scores) {
			t.Errorf("%s: passed %v then %v", r.Case, r.Passed, r2.Passed)
		}
	}

	// A scheduled run: new model calls, reused verdicts where the
	// trajectory is the same.
	cfg.Reuse = ReuseVerdicts
	before, jb := model.calls.Load(), judge.calls.Load()
	runOnce(t, cfg)
	if model.calls.Load() == before {
		t.Errorf("a scheduled run must call the models again")
	}
	if d := judge.calls.Load() - jb; d != 0 {
		t.Errorf("a scheduled run with identical trajectories made %d judge calls, want 0 (verdicts are reused)", d)
	}

	// --fresh: everything anew.
	cfg.Reuse = ReuseNothing
	before, jb = model.calls.Load(), judge.calls.Load()
	runOnce(t, cfg)
	if model.calls.Load() == before || judge.calls.Load() == jb {
		t.Errorf("--fresh must call the models and the judge again")
	}
}

func TestCacheKeysOnCaseSurfaceModelAndParameters(t *testing.T) {
	rs := newRefServer(t)
	cache, _ := OpenCache(t.TempDir())
	model := newScripted("test:a", perfectScripts())
	cfg := Config{Set: set(weatherCase()), Models: []llm.Provider{model}, Client: rs.client, Runs: 1, Cache: cache}
	runOnce(t, cfg)
	calls := func(cfg Config) int64 {
		before := model.calls.Load()
		runOnce(t, cfg)
		return model.calls.Load() - before
	}
	if n := calls(cfg); n != 0 {
		t.Fatalf("unchanged: %d calls, want 0", n)
	}
	edited := weatherCase()
	edited.Prompt += " "
	changed := map[string]Config{}
	c := cfg
	c.Set = set(edited)
	changed["case"] = c
	c = cfg
	c.MaxSteps = 3
	changed["max-steps"] = c
	c = cfg
	c.Stubs = map[string]string{"get_weather": "sunny"}
	changed["stubs"] = c
	lt, _ := rs.client.ListTools(ctx(t))
	c = cfg
	c.Tools = append(lt.Tools[:0:0], lt.Tools...)
	c.Tools[0].Description += " Changed."
	changed["tool surface"] = c
	// A selector built into mcp-eval whose code changed (llm.Revision):
	// the same id, another revision.
	c = cfg
	c.Models = []llm.Provider{revised{model, "r2"}}
	changed["revision of a built-in selector"] = c
	for what, cfg := range changed {
		if n := calls(cfg); n == 0 {
			t.Errorf("a changed %s reused the old result", what)
		}
	}
	c = cfg
	c.Models = []llm.Provider{revised{model, "r2"}}
	if n := calls(c); n != 0 {
		t.Errorf("the same revision: %d calls, want 0", n)
	}
}

// revised is a provider with a revision (llm.Revision).
type revised struct {
	llm.Provider
	rev string
}

func (r revised) Revision() string { return r.rev }

func TestUnreadableCacheEntriesAreMisses(t *testing.T) {
	dir := t.TempDir()
	c, _ := OpenCache(dir)
	key := cacheKey("x")
	if err := c.put(kindResult, key, cachedRun{Model: "m"}); err != nil {
		t.Fatal(err)
	}
	var cr cachedRun
	if _, ok := c.get(kindResult, key, &cr); !ok || cr.Model != "m" {
		t.Fatalf("round trip failed")
	}
	os.WriteFile(filepath.Join(dir, kindResult, key[:2], key+".json"), []byte(`{"version":1,"key":"`), 0o644)
	if _, ok := c.get(kindResult, key, &cr); ok {
		t.Errorf("a truncated entry was read")
	}
	other := cacheKey("y")
	os.MkdirAll(filepath.Join(dir, kindResult, other[:2]), 0o755)
	os.Rename(filepath.Join(dir, kindResult, key[:2], key+".json"), filepath.Join(dir, kindResult, other[:2], other+".json"))
	c.put(kindResult, key, cachedRun{Model: "m"})
	b, _ := os.ReadFile(filepath.Join(dir, kindResult, key[:2], key+".json"))
	os.WriteFile(filepath.Join(dir, kindResult, other[:2], other+".json"), b, 0o644)
	if _, ok := c.get(kindResult, other, &cr); ok {
		t.Errorf("an entry stored under another key was accepted")
	}
	if _, err := OpenCache(""); err == nil {
		t.Errorf("an empty cache dir must be an error")
	}
}

// Before reuse each distinct call of the stored runs is asked again once,
// however many runs made it; a stubbed call is never asked, and its runs
// are reused: the stub's text is in the key.
func TestRevalidationAsksEachDistinctCallOnce(t *testing.T) {
	rs := newRefServer(t)
	cache, _ := OpenCache(t.TempDir())
	model := newScripted("test:a", perfectScripts())
	cfg := Config{Set: set(weatherCase()), Models: []llm.Provider{model}, Client: rs.client, Runs: 5, Cache: cache}
	runOnce(t, cfg)
	served := rs.callsTo("get_weather")
	if served != 5 {
		t.Fatalf("first run: %d calls to get_weather, want 5", served)
	}
	before := model.calls.Load()
	res := runOnce(t, cfg)
	if d := rs.callsTo("get_weather") - served; d != 1 {
		t.Errorf("revalidating 5 runs of one call asked the server %d times, want 1", d)
	}
	if model.calls.Load() != before || res.ReusedRuns != 5 {
		t.Errorf("the unchanged re-run made %d model calls and reused %d runs; want 0 and 5", model.calls.Load()-before, res.ReusedRuns)
	}

	cfg.Stubs = map[string]string{"get_weather": `{"temperature": 20}`}
	runOnce(t, cfg)
	served = rs.callsTo("get_weather")
	before = model.calls.Load()
	res = runOnce(t, cfg)
	if rs.callsTo("get_weather") != served || model.calls.Load() != before || res.ReusedRuns != 5 {
		t.Errorf("stubbed runs: %d server calls, %d model calls, %d reused; want 0, 0, 5",
			rs.callsTo("get_weather")-served, model.calls.Load()-before, res.ReusedRuns)
	}
	// Another stub text is another key: made anew.
	cfg.Stubs = map[string]string{"get_weather": `{"temperature": 25}`}
	before = model.calls.Load()
	if res = runOnce(t, cfg); model.calls.Load() == before || res.ReusedRuns != 0 {
		t.Errorf("a changed stub: %d model calls, %d reused; want some, 0", model.calls.Load()-before, res.ReusedRuns)
	}
}
