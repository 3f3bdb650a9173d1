package resilience

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// RunnerVersion changes whenever a Layer 2 run is set up, classified or
// recorded differently; it is part of every Layer 2 cache key, so that a
// stored verdict is never read by code that would classify it otherwise.
// 2: an attacker's call's arguments are written once in the reason
// (3470a0c); runs stored before said them twice in every report.
// 3: the key holds the stubs' texts (a stubbed call is not asked again
// before reuse, so a changed stub must change the key).
const RunnerVersion = "resilience/3"

// storedRun is a Layer 2 run as the cache keeps it: what assemble needs,
// and the calls it made on the server, asked again before reuse.
type storedRun struct {
	Model      string                `json:"model"`
	Trajectory report.Trajectory     `json:"trajectory"`
	Verdict    Verdict               `json:"verdict"`
	Judge      string                `json:"judge,omitempty"`
	Served     string                `json:"served,omitempty"`
	Calls      []behavior.ServerCall `json:"calls"`
}

// keyParts are what every key of this run depends on besides the job.
type keyParts struct {
	params  string   // loop and runner settings
	surface string   // the server's tools
	cases   []string // hash of each case's definition
	judge   string
}

func (r *runner) keyParts() (keyParts, error) {
	params, err := report.Hash(map[string]any{"runner": RunnerVersion, "loop": behavior.LoopVersion, "system": behavior.SystemPrompt,
		"faults": FaultVersion, "maxSteps": r.cfg.MaxSteps, "sampling": r.cfg.Sampling, "maxResultBytes": r.cfg.MaxResultBytes, "stubs": r.cfg.Stubs})
	if err != nil {
		return keyParts{}, fmt.Errorf("resilience: hashing the parameters: %w", err)
	}
	k := keyParts{params: params, surface: report.ToolSurfaceHash(mcpclient.ToolSurfaces(r.cfg.Tools))}
	for _, c := range r.cfg.Set.Cases {
		h, err := report.Hash(c.Definition())
		if err != nil {
			return keyParts{}, fmt.Errorf("%s: case %s cannot be hashed: %w", c.Pos, c.ID, err)
		}
		k.cases = append(k.cases, h)
	}
	if r.cfg.Judge != nil {
		k.judge = r.cfg.Judge.ID()
	}
	return k, nil
}

// key is the job's cache key: the job kind, the case, the fault (with the
// faulted tool and the text shown instead of its result) or the payload
// (with its rendered text and canary, and the attacker's tool), the model,
// the tool surface, the settings, the judge and the run.
func (r *runner) key(k keyParts, j job) (string, error) {
	var subject string
	var err error
	switch j.kind {
	case report.KindFault:
		shown, serr := Shown(j.fault, j.tool.Name, r.cfg.MaxResultBytes)
		if serr != nil {
			return "", serr
		}
		subject, err = report.Hash(map[string]any{"fault": j.fault, "tool": j.tool.Name, "shown": shown.Content, "isError": shown.IsError})
	case report.KindAttack:
		subject, err = report.Hash(map[string]any{"payload": j.payload.ID, "category": j.payload.Category, "text": j.payload.Render(j.target),
			"canary": j.payload.Canary.String(), "target": j.target})
	}
	if err != nil {
		return "", fmt.Errorf("resilience: hashing job %s: %w", j.kind, err)
	}
	return behavior.CacheKey("resilience", j.kind, k.cases[j.ci], subject, r.modelIDs[j.mi], k.surface, k.params, k.judge, fmt.Sprint(j.run)), nil
}

// lookUp finds every job's stored run, when results may be reused.
func (r *runner) lookUp() error {
	if r.cfg.Cache == nil {
		return nil
	}
	k, err := r.keyParts()
	if err != nil {
		return err
	}
	for i := range r.jobs {
		j := &r.jobs[i]
		if j.key, err = r.key(k, *j); err != nil {
			return err
		}
		if r.cfg.Reuse != behavior.ReuseAll {
			continue
		}
		var s storedRun
		if at, ok := r.cfg.Cache.Load(behavior.KindResilience, j.key, &s); ok && s.Model == r.modelIDs[j.mi] {
			j.reused, j.storedAt = &s, at
		}
	}
	return nil
}

// replay returns the job's stored run when the server still answers its
// calls as it did; stale says it was found but the server changed.
func (r *runner) replay(ctx context.Context, j job) (d done, ok, stale bool) {
	if j.reused == nil {
		return done{}, false, false
	}
	switch r.recheck.Check(ctx, j.reused.Calls) {
	case behavior.Valid:
	case behavior.Stale:
		return done{}, false, true
	default:
		return done{}, false, false
	}
	s := j.reused
	tr := s.Trajectory
	return done{job: j, tr: &tr, verdict: s.Verdict, judge: s.Judge, served: s.Served, reused: true}, true, false
}

// store keeps a finished run for the next time, unless it did not end in
// a result: errors, budget stops and undecided judges are retried.
func (r *runner) store(d done, calls []behavior.ServerCall) {
	if r.cfg.Cache == nil || d.key == "" || d.tr == nil {
		return
	}
	switch d.tr.End {
	case behavior.EndAnswered, behavior.EndStepLimit, behavior.EndInputMissing:
	default:
		return
	}
	if d.verdict.Outcome == RunError || (d.judge != "" && d.judge != behavior.JudgePass && d.judge != behavior.JudgeFail) {
		return
	}
	// A failed write only costs a re-run next time.
	_ = r.cfg.Cache.Store(behavior.KindResilience, d.key, storedRun{Model: r.modelIDs[d.mi], Trajectory: *d.tr, Verdict: d.verdict,
		Judge: d.judge, Served: d.served, Calls: calls})
}

// reuseNotes say how many runs came from the cache, for the gate section.
func (r *runner) reuseNotes(results []done, dir string, calls int64) (notes []string, reused, fresh, stale int) {
	var oldest time.Duration
	now := time.Now()
	for _, d := range results {
		switch {
		case d.reused:
			reused++
			oldest = max(oldest, now.Sub(d.storedAt))
		default:
			fresh++
		}
		if d.stale {
			stale++
		}
	}
	if r.cfg.Cache != nil && len(results) > 0 {
		n := fmt.Sprintf("Layer 2: %d of %d runs reused from the cache (%s)", reused, len(results), dir)
		if reused > 0 {
			n += ", the oldest " + oldest.Round(time.Second).String() + " old"
		}
		n += fmt.Sprintf("; %d model calls made now", calls)
		if stale > 0 {
			n += fmt.Sprintf("; %d stored runs were made anew because the server answers their tool calls differently now", stale)
		}
		notes = append(notes, n)
	}
	return append(notes, r.recheck.Notes("Layer 2")...), reused, fresh, stale
}
