package behavior

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior/score"
	"github.com/mcp-eval/mcp-eval-action/pkg/didyoumean"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/spend"
)

// Report bounds: a report is read back by the gate and rendered into a PR
// comment, so what a run adds to it is capped.
const (
	maxNotesPerResult  = 5
	maxNoteBytes       = 400
	maxTrajectoryBytes = 8 << 20 // all trajectories of a report together
)

// assemble turns the finished jobs into the report's Layer 1 section.
func (p *Plan) assemble(results []done, m *spend.Meter) *Result {
	cfg := p.cfg
	now := cfg.Now()
	b := &report.Behavior{RunsPerCase: cfg.Runs, Cases: []report.Case{}, Results: []report.CaseResult{}}
	var caseHashes []string
	for ci, c := range cfg.Set.Cases {
		kind := report.Hard
		if c.Kind == golden.Soft {
			kind = report.Soft
		}
		tags := append([]string{}, c.Tags...)
		src := cfg.Source
		if cfg.SourceOf != nil && c.Pos.File != "" {
			src = cfg.SourceOf(c.Pos.File)
		}
		b.Cases = append(b.Cases, report.Case{ID: c.ID, Hash: p.caseHash[ci], Kind: kind, Negative: c.Negative, Tags: tags, Source: src, Line: c.Pos.Line})
		caseHashes = append(caseHashes, p.caseHash[ci])
	}
	sort.Strings(caseHashes)
	b.GoldenSetHash, _ = report.Hash(caseHashes)
	if cfg.Judge != nil {
		b.JudgeModel = cfg.Judge.ID()
		b.RubricHash = rubricHash(cfg.Set.Cases)
	}

	byPair := map[[2]int][]done{}
	for _, d := range results {
		k := [2]int{d.ci, d.mi}
		byPair[k] = append(byPair[k], d)
	}
	served := map[int]string{}
	byModel := make([][]score.Run, len(p.modelIDs))
	var reused, fresh, stale, unanswered int
	var oldest time.Duration
	var listed []string
	for _, t := range cfg.Tools {
		listed = append(listed, t.Name)
	}
	for ci, c := range cfg.Set.Cases {
		// A case that expects a tool the server does not list fails every
		// run: its failing runs say so first, where a reviewer reads, not
		// only the warning the golden set got before the run.
		var unlisted []string
		for _, st := range c.Steps() {
			if !slices.Contains(listed, st.Tool) && !slices.Contains(unlisted, st.Tool) {
				unlisted = append(unlisted, st.Tool)
			}
		}
		for mi, id := range p.modelIDs {
			ds := byPair[[2]int{ci, mi}]
			sort.Slice(ds, func(i, j int) bool { return ds[i].run < ds[j].run })
			r := report.CaseResult{Case: c.ID, Model: ReportModelID(id), Scores: []report.Score{}, Notes: []string{}, Runs: []report.CaseRun{}}
			var decided []score.Run
			var incReason string
			budgetCut := 0
			for _, d := range ds {
				cr := report.CaseRun{Run: d.run, Outcome: d.s.outcome(), Tokens: d.tr.InputTokens + d.tr.OutputTokens, Trajectory: d.tr}
				if !d.s.budget {
					cr.Judge = string(d.s.run.Task)
				}
				if strings.HasPrefix(id, BaselinePrefix) {
					zero := 0.0
					cr.CostUSD = &zero
				} else if q := cfg.Prices.Quote(id, now, d.usage); q.Known {
					cost := round6(q.USD)
					cr.CostUSD = &cost
				}
				if d.reused != nil {
					at := d.storedAt.UTC()
					cr.CachedAt = &at
					age := max(now.Sub(d.storedAt), 0)
					cr.AgeSeconds = int64(age / time.Second)
					oldest = max(oldest, age)
					r.Reused++
					reused++
				} else if d.tr.End != EndBudget || d.tr.InputTokens+d.tr.OutputTokens > 0 {
					// A run the budget stopped before its first call was
					// not made: "140 made now" when 50 were.
					fresh++
				}
				if d.stale {
					stale++
				}
				if d.tr.Served != "" {
					served[mi] = d.tr.Served
				}
				reasons := d.s.allReasons()
				if cr.Outcome == report.RunFail {
					for _, u := range unlisted {
						why := fmt.Sprintf("the case expects the tool %q, which the server does not list", u)
						if near, ok := didyoumean.Nearest(u, listed); ok {
							why += fmt.Sprintf(" (did you mean %s? fix the golden set or the server)", near)
						}
						reasons = append([]string{why}, reasons...)
					}
				}
				if cr.Outcome != report.RunPass {
					cr.Reasons = clipAll(reasons)
					if len(reasons) > 0 {
						r.Notes = addNote(r.Notes, fmt.Sprintf("run %d: %s", d.run, strings.Join(reasons, "; ")))
					}
				}
				if cr.Outcome == report.RunInconclusive && incReason == "" && len(reasons) > 0 {
					incReason = reasons[len(reasons)-1]
				}
				r.Runs = append(r.Runs, cr)
				if d.s.budget {
					budgetCut++
					if d.tr.End == EndStale {
						unanswered++
					}
					continue
				}
				decided = append(decided, d.s.run)
			}
			byModel[mi] = append(byModel[mi], decided...)
			sum := score.SummarizeCase(decided)
			r.Passed, r.Errors, r.Uncertain = sum.Passed, sum.Errors, sum.Uncertain
			r.Inconclusive = sum.Inconclusive + budgetCut
			r.Scores = score.ReportScores(sum.Scores)
			if r.Inconclusive > 0 {
				b.Inconclusive = append(b.Inconclusive, report.Inconclusive{Case: c.ID, Model: r.Model, Runs: r.Inconclusive, Reason: clip(incReason, maxNoteBytes)})
			}
			if r.Passed.N == 0 {
				// Nothing decided: a 0/0 would meet any floor. The case is
				// listed under Inconclusive instead.
				continue
			}
			b.Results = append(b.Results, r)
		}
	}
	b.Confusion = p.confusion(byModel)
	boundTrajectories(b)

	res := &Result{Behavior: b, Preview: p.preview}
	for mi, id := range p.modelIDs {
		provider, requested, _ := strings.Cut(id, ":")
		if i := strings.Index(requested, "@http"); i > 0 {
			requested = requested[:i] // openai-compatible:MODEL@BASE_URL
		}
		if strings.HasPrefix(id, BaselinePrefix) {
			provider = BaselineLabel
		}
		res.Models = append(res.Models, report.Model{ID: ReportModelID(id), Provider: provider, Requested: requested, Served: served[mi]})
	}
	res.Spend = spend.Record(p.preview, m, reused, fresh)
	res.Spend.StaleRuns = stale
	res.ReusedRuns, res.FreshRuns, res.StaleRuns = reused, fresh, stale
	calls, reached := m.Calls()[spend.Layer1]+m.Calls()[spend.Judge], m.Reached()

	if reused > 0 {
		dir := ""
		if cfg.Cache != nil {
			dir = " (" + cmp.Or(cfg.Cache.Label, cfg.Cache.Dir) + ")"
		}
		res.Notes = append(res.Notes, fmt.Sprintf("Layer 1: %d of %d runs reused from the cache%s, the oldest %s old; %d provider calls made now",
			reused, reused+fresh, dir, roundAge(oldest), calls))
	}
	if stale > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("Layer 1: %d stored runs were made anew because the server answers their tool calls differently now", stale))
	}
	res.Notes = append(res.Notes, p.recheck.Notes("Layer 1")...)
	if reached != "" {
		n := 0
		for _, inc := range b.Inconclusive {
			n += inc.Runs
		}
		res.Notes = append(res.Notes, fmt.Sprintf("Layer 1: budget reached (%s): %d runs were not made or not judged and are inconclusive", reached, n))
	} else if unanswered > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("Layer 1: %d replayed runs went stale (the cassette holds no answer for a request they made) and are inconclusive; they count in no score", unanswered))
	} else if len(b.Inconclusive) > 0 {
		n := 0
		for _, inc := range b.Inconclusive {
			n += inc.Runs
		}
		res.Notes = append(res.Notes, fmt.Sprintf("Layer 1: %d runs are inconclusive (the judge did not answer); they count in no score", n))
	}
	if cfg.Judge == nil && hasRubrics(cfg.Set.Cases) {
		res.Notes = append(res.Notes, "Layer 1: no judge configured (eval.judge): task completion is not scored, and arguments the matcher cannot decide are reported uncertain, not passed")
	}
	return res
}

// rubricHash hashes every case's rubric by case id: a changed rubric
// makes judged scores not comparable with a baseline's.
func rubricHash(cases []golden.Case) string {
	rubrics := map[string]string{}
	for _, c := range cases {
		if c.Rubric != "" {
			rubrics[c.ID] = c.Rubric
		}
	}
	if len(rubrics) == 0 {
		return ""
	}
	h, _ := report.Hash(rubrics)
	return h
}

func hasRubrics(cases []golden.Case) bool {
	for _, c := range cases {
		if c.Rubric != "" {
			return true
		}
	}
	return false
}

// boundTrajectories keeps the report's trajectories under
// maxTrajectoryBytes: passing runs' trajectories go first (a failure is
// what a reader opens), then the latest runs' of the rest.
func boundTrajectories(b *report.Behavior) {
	type ref struct {
		r, i int
		size int
		pass bool
	}
	var refs []ref
	total := 0
	for ri := range b.Results {
		for i, cr := range b.Results[ri].Runs {
			if cr.Trajectory == nil {
				continue
			}
			raw, _ := json.Marshal(cr.Trajectory)
			refs = append(refs, ref{ri, i, len(raw), cr.Outcome == report.RunPass})
			total += len(raw)
		}
	}
	if total <= maxTrajectoryBytes {
		return
	}
	sort.SliceStable(refs, func(i, j int) bool { return refs[i].pass && !refs[j].pass })
	for _, rf := range refs {
		if total <= maxTrajectoryBytes {
			return
		}
		b.Results[rf.r].Runs[rf.i].Trajectory = nil
		total -= rf.size
	}
}

func clipAll(s []string) []string {
	var out []string
	for i, r := range s {
		if i == 8 {
			out = append(out, fmt.Sprintf("… %d more", len(s)-8))
			break
		}
		out = append(out, clip(r, maxNoteBytes))
	}
	return out
}

func addNote(notes []string, n string) []string {
	if len(notes) >= maxNotesPerResult {
		return notes
	}
	return append(notes, clip(n, maxNoteBytes))
}

func firstOr(s []string, def string) string {
	if len(s) == 0 || s[0] == "" {
		return def
	}
	return s[0]
}

func round6(v float64) float64 {
	return float64(int64(v*1e6+0.5)) / 1e6
}

func roundAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// maxConfusionPairs is how many confusions per model carry both tool
// descriptions.
const maxConfusionPairs = 3

// confusion builds each model's confusion matrix, with the descriptions of
// the tools of its most frequent confusions.
func (p *Plan) confusion(byModel [][]score.Run) []report.Confusion {
	desc := map[string]string{}
	for _, t := range p.cfg.Tools {
		desc[t.Name] = clip(t.Description, 1000)
	}
	describe := func(class string, expected bool) string {
		switch {
		case class == score.NoTool && expected:
			return "(no tool: the case expects none)"
		case class == score.NoTool:
			return "(no tool was called)"
		}
		if d, ok := desc[class]; ok {
			return d
		}
		return "(not a tool of the server)"
	}
	var out []report.Confusion
	for mi, runs := range byModel {
		m := score.BuildMatrix(runs)
		c := report.Confusion{Model: ReportModelID(p.modelIDs[mi]), Cells: []report.ConfusionCell{}, Top: []report.ConfusionPair{}}
		for _, cell := range m.Cells {
			c.Cells = append(c.Cells, report.ConfusionCell{Expected: cell.Expected, Chosen: cell.Chosen, Count: cell.Count})
		}
		for i, cell := range m.Confusions() {
			if i == maxConfusionPairs {
				break
			}
			c.Top = append(c.Top, report.ConfusionPair{ConfusionCell: report.ConfusionCell{Expected: cell.Expected, Chosen: cell.Chosen, Count: cell.Count},
				ExpectedDescription: describe(cell.Expected, true), ChosenDescription: describe(cell.Chosen, false)})
		}
		out = append(out, c)
	}
	return out
}
