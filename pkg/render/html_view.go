package render

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/telemetry"
)

// The HTML page is rendered from this view: every value already cleaned
// and formatted, so the template only places strings (which html/template
// escapes) and numbers. Class names and sizes come from this file, never
// from the report.

type htmlView struct {
	Title        string
	Verdict      string
	VerdictClass string // pass | fail | inconclusive | none
	Context      []htmlKV
	Links        []htmlLink
	Attention    []htmlAttention
	Baseline     string
	Compared     bool // a baseline was compared with: the Δ figures mean something
	Notes        []string
	Skipped      []htmlKV // Layer 0 checks that did not run, and why
	Suites       []htmlSuite
	Layer0       *htmlLayer0
	Matrix       *htmlMatrix
	Layer2       *htmlL2
	Layer2Gaps   *htmlGaps
	Layer3       *htmlLayer3
	Failing      []htmlFailing
	FailingMore  int
	Gate         *htmlGate
	Footer       string
}

type htmlKV struct{ Key, Value string }

// htmlLink is a link out: built by this package from report fields (an
// https URL of GitHub or the spec), never a URL a server or model wrote.
type htmlLink struct{ Text, URL string }

type htmlSuite struct {
	Class, Mark, Score, Model, Now, Baseline, Change, Surely, Status string
	Reason                                                           string // the gate's, statistics included: on hover
}

type htmlItem struct {
	Mark, Class, Layer, Kind, Subject, Model, Reason string
}

type htmlLayer0 struct {
	Summary string
	Checks  []htmlCheck // the ones that need attention
	// Legacy: the server speaks legacy MCP only; Blockers say what stands
	// in the way of 2026-07-28.
	Legacy   bool
	Blockers []htmlBlocker
}

type htmlBlocker struct{ ID, Found, Instead string }

type htmlCheck struct {
	ID, Level, Verdict, Class, KOfN, Finding string
}

type htmlMatrix struct {
	Summary    string
	Models     []string
	Rows       []htmlMatrixRow
	Columns    []htmlColumns
	Trends     []htmlTrendRow
	Confusions []htmlConfusions
}

// htmlConfusions is one model's off-diagonal confusion cells.
type htmlConfusions struct {
	Model, Summary string
	Cells          []htmlConfusion
	More           int
}

type htmlConfusion struct {
	Expected, Chosen string
	Count            int
	Similar          string // LINT-5's finding for the pair, "" none
}

type htmlMatrixRow struct {
	// What, when set, names the kind of Case in words before it (Layer
	// 2: fault or attack).
	What, Case, Kind string
	Cells            []htmlCell
}

type htmlCell struct {
	Text, Title string
	Heat        string // h0 … h10 by pass rate, "none" for no result
}

type htmlColumns struct {
	Model, Accuracy, P95, Tokens, Cost string
}

// htmlGaps are what Layer 2 could not measure.
type htmlGaps struct {
	Nothing bool // no run of the layer is in N
	Rows    []htmlGap
	More    int
}

type htmlGap struct{ Model, Kind, Subject, Text string }

// htmlL2 is the Layer 2 matrix: Rows need attention, Passed are rows
// the gate passed for every model.
type htmlL2 struct {
	Models       []string
	Rows, Passed []htmlMatrixRow
}

type htmlLayer3 struct {
	RunCost, Prices string
	Warnings        []string
	Usage           []htmlUsage
	Tools           []htmlTool
	ToolsMore       int // tool × model rows past maxHTMLToolRows
	Latency         []htmlLatency
	Ticks           []htmlTick // the histograms' shared axis
}

// htmlTick labels an edge of the histogram scale.
type htmlTick struct {
	X     float64
	Label string
}

type htmlUsage struct {
	Model, Role, Calls, Input, CacheRead, CacheWrite, Output, Reasoning, Cost, PerCall, PerCase, Per1k string
}

// maxHTMLToolRows bounds the per tool call table; the rest are in
// report.json.
const maxHTMLToolRows = 200

type htmlTool struct {
	Tool, Model, Calls, P50, P95, Max, Tokens, PerCall string
}

type htmlLatency struct {
	Kind, Of, Model, N, P50, P95, Max, Errors string
	Bars                                      []htmlBar
}

// htmlBar is one histogram bin as a bar of an SVG chart 340 × 60.
type htmlBar struct {
	X, Y, W, H float64
	Label      string
}

type htmlFailing struct {
	Open                bool // the worst pair is shown unfolded
	Case, Model, Passed string
	Notes               []string
	Runs                []htmlRun
	MoreRuns            int
}

type htmlRun struct {
	Run, Outcome, Class string
	Same                []string // other runs that failed for the same reasons
	Reasons             []string
	End, Final          string
	Turns               []htmlTurn
	Truncated           bool
	Stats               string
}

type htmlTurn struct {
	N          int // 1-based
	Text, Meta string
	Calls      []htmlCall
}

type htmlCall struct {
	Name, Arguments, Result, Meta string
	IsError                       bool
}

type htmlGate struct {
	Method, Policy string
	Items          []htmlItem
}

func buildHTMLView(rep *report.Report, opts HTMLOptions) htmlView {
	v := htmlView{Title: "mcp-eval report", Verdict: "not gated", VerdictClass: "none"}
	name := strings.TrimSpace(rep.Server.Name + " " + rep.Server.Version)
	if name == "" {
		name = rep.Server.Target
	}
	if name != "" {
		v.Title = "mcp-eval · " + line(name)
	}
	if g := rep.Gate; g != nil {
		v.Verdict, v.VerdictClass = line(g.Verdict), statusClass(g.Verdict)
		if why := rep.Run.Cancelled; why != "" {
			v.Verdict = "cancelled (" + line(why) + "): nothing is judged"
		}
		if why := rep.Run.Untested; why != "" {
			v.Verdict = "error: the server could not be tested, so nothing is judged: " + line(why)
		}
	} else if c := rep.Conformance; c != nil {
		v.Verdict, v.VerdictClass = "conformance "+line(c.Verdict)+" (not gated)", statusClass(c.Verdict)
	}
	if c := legacy(rep); c != nil && (rep.Gate == nil || rep.Gate.Verdict != report.GateFail) {
		// A legacy server gets its own badge, never the pass colour.
		v.Verdict, v.VerdictClass = legacyIcon+" legacy: speaks "+line(legacySpeaks(c))+" only ("+legacyGate(rep.Gate)+")", "legacy"
	}
	for _, kv := range []htmlKV{
		{"Server", name}, {"Era", strings.TrimSpace(rep.Server.Era + " " + rep.Server.ProtocolVersion)}, {"Transport", rep.Server.Transport},
		{"Commit", rep.Run.Commit}, {"Ref", rep.Run.Ref}, {"Event", rep.Run.Event}, {"Tool surface", rep.ToolSurfaceHash},
		{"Tool tokens", toolTokensLine(rep)},
		{"Tool tokens per provider", strings.Join(exactTokensLines(rep), "; ")},
	} {
		if kv.Value != "" {
			v.Context = append(v.Context, htmlKV{kv.Key, line(kv.Value)})
		}
	}
	if l := ReplayLabel(rep); l != "" {
		v.Context = append(v.Context, htmlKV{"Replayed", line(l)})
	}
	if !rep.Run.FinishedAt.IsZero() {
		v.Context = append(v.Context, htmlKV{"Finished", rep.Run.FinishedAt.UTC().Format("2006-01-02 15:04 UTC")})
	}
	for _, m := range rep.Models {
		v.Context = append(v.Context, htmlKV{"Model " + line(m.ID), fmt.Sprintf("requested %s, served %s", orDash(line(m.Requested)), orDash(line(m.Served)))})
	}
	if r := rep.Run; r.Repository != "" && r.WorkflowRunID > 0 && repoRE.MatchString(r.Repository) {
		v.Links = append(v.Links, htmlLink{Text: fmt.Sprintf("workflow run %d", r.WorkflowRunID), URL: fmt.Sprintf("https://github.com/%s/actions/runs/%d", r.Repository, r.WorkflowRunID)})
		if commitRE.MatchString(r.Commit) {
			v.Links = append(v.Links, htmlLink{Text: "commit " + shortSHA(r.Commit), URL: fmt.Sprintf("https://github.com/%s/commit/%s", r.Repository, r.Commit)})
		}
	}
	if g := rep.Gate; g != nil {
		v.Attention = htmlAttentionItems(rep)
		switch b := g.Baseline; {
		case b != nil:
			v.Compared = true
			v.Baseline = line(b.Path)
			if b.Commit != "" {
				v.Baseline += " · commit " + line(shortSHA(b.Commit))
			}
			if !b.FinishedAt.IsZero() {
				v.Baseline += " · " + b.FinishedAt.UTC().Format("2006-01-02 15:04 UTC")
			}
		default:
			v.Baseline = "none: " + orDash(line(g.BaselineNote))
		}
		if len(g.History) > 0 {
			v.Baseline += fmt.Sprintf(" · history: %d green reports", len(g.History))
		}
		v.Notes = collapse(append(append([]string(nil), g.Notes...), conformanceNotes(rep)...))
		ctx := newAttnContext(rep)
		for _, it := range g.Items {
			if it.Kind != report.KindSuite {
				continue
			}
			ch := suiteChange(it)
			su := htmlSuite{Class: statusClass(it.Status), Mark: statusMark(it.Status), Score: line(it.Subject), Model: line(it.Model),
				Now: "–", Baseline: "–", Change: ch.Delta, Surely: line(ch.Surely), Status: line(it.Status), Reason: line(itemWords(ctx, it))}
			if it.Value != nil {
				su.Now = pct1(*it.Value)
			}
			if it.BaselineValue != nil {
				su.Baseline = pct1(*it.BaselineValue)
			}
			v.Suites = append(v.Suites, su)
		}
		gv := &htmlGate{Method: line(g.Method), Policy: line(g.Policy.Text)}
		for _, it := range g.Items {
			if it.Status != report.ItemPass && it.Status != report.ItemInfo {
				gv.Items = append(gv.Items, htmlGateItem(it))
			}
		}
		v.Gate = gv
	}
	if rep.Conformance != nil {
		v.Layer0 = htmlConformance(rep)
		for _, r := range rep.Conformance.Checks {
			if r.Verdict == report.CheckSkipped {
				why := r.Outcome.Message
				if why == "" {
					why = r.Outcome.SkipCause
				}
				v.Skipped = append(v.Skipped, htmlKV{line(r.ID), orDash(line(why))})
			}
		}
	}
	if rep.Behavior != nil {
		v.Matrix = htmlHeatMap(rep)
		v.Failing, v.FailingMore = htmlFailures(rep, opts)
	}
	if rep.Resilience != nil {
		v.Layer2 = htmlResilience(rep)
		if rows, more := unmeasuredRows(rep.Resilience); len(rows) > 0 {
			g := &htmlGaps{Nothing: len(rep.Resilience.Faults) == 0 && len(rep.Resilience.Attacks) == 0, More: more}
			for _, u := range rows {
				g.Rows = append(g.Rows, htmlGap{Model: line(u.Model), Kind: u.Kind, Subject: line(u.Subject), Text: line(u.Text())})
			}
			v.Layer2Gaps = g
		}
	}
	if rep.Telemetry != nil {
		v.Layer3 = htmlTelemetry(rep.Telemetry)
	}
	v.Footer = "mcp-eval"
	if hv := rep.Run.HarnessVersion; hv != "" {
		v.Footer += " " + line(hv)
	}
	v.Footer += fmt.Sprintf(" · report schema %d", rep.SchemaVersion)
	return v
}

var repoRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$`)

var commitRE = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// gateCellClass is the colour of a matrix cell by its gate status.
func gateCellClass(status string) string {
	switch status {
	case report.ItemPass:
		return "pass"
	case report.ItemFail:
		return "fail"
	case report.ItemInconclusive, report.ItemWarn, report.ItemKnown, report.ItemError:
		return "warn"
	}
	return "other" // not comparable, info: judged on its floor only or not at all
}

// collapse keeps one of each identical line, in order, with how many
// times it came: five runs failing for one reason are one line.
func collapse(lines []string) []string {
	var out []string
	count := map[string]int{}
	for _, l := range lines {
		l = line(l)
		if count[l] == 0 {
			out = append(out, l)
		}
		count[l]++
	}
	for i, l := range out {
		if n := count[l]; n > 1 {
			out[i] = fmt.Sprintf("%s (×%d)", l, n)
		}
	}
	return out
}

func statusClass(s string) string {
	switch s {
	case report.GatePass: // also the item status and the Layer 0 verdict "pass"
		return "pass"
	case report.GateFail, report.GateError, report.ConformanceIncomplete: // GateError is also the item status "error"
		return "fail"
	case report.GateInconclusive, report.GateCancelled, "legacy", report.ItemKnown, report.ItemWarn:
		return "inconclusive"
	}
	return "none"
}

func htmlGateItem(it report.GateItem) htmlItem {
	return htmlItem{Mark: statusMark(it.Status), Class: statusClass(it.Status), Layer: fmt.Sprint(it.Layer), Kind: line(it.Kind),
		Subject: line(it.Subject), Model: line(it.Model), Reason: line(it.Reason)}
}

func htmlConformance(rep *report.Report) *htmlLayer0 {
	c := rep.Conformance
	if c.Verdict == report.ConformanceLegacy {
		l := &htmlLayer0{Summary: fmt.Sprintf("The server speaks %s only, not 2026-07-28: no 2026-07-28 check ran.", line(legacySpeaks(c))), Legacy: true}
		if c.Legacy != nil {
			for _, b := range c.Legacy.Blockers {
				l.Blockers = append(l.Blockers, htmlBlocker{ID: line(b.ID), Found: line(b.Found), Instead: line(b.Instead)})
			}
		}
		return l
	}
	s := Summarize(c)
	l := &htmlLayer0{Summary: fmt.Sprintf("%d checks: %s · MUST checks ran %d times", len(c.Checks), s.Line(), c.Runs)}
	sorted := append([]report.CheckResult(nil), c.Checks...)
	sort.SliceStable(sorted, func(i, j int) bool { return checkRank(sorted[i]) < checkRank(sorted[j]) })
	waived := waivedChecks(rep)
	for _, r := range sorted {
		if checkRank(r) >= 4 {
			continue
		}
		ch := htmlCheck{ID: line(r.ID), Level: line(string(r.Level)), Verdict: line(string(r.Verdict)),
			Class: statusClass(map[report.CheckVerdict]string{report.CheckFailed: "fail", report.CheckErrored: "fail", report.CheckWarned: "inconclusive", report.CheckNoted: "noted"}[r.Verdict]),
			KOfN:  kOfN(r), Finding: line(headline(r))}
		if waived[r.ID] {
			// Accepted until its date: not red in a report the gate passed.
			ch.Verdict, ch.Class = "waived ("+line(string(r.Verdict))+")", "none"
		}
		l.Checks = append(l.Checks, ch)
	}
	return l
}

// htmlHeatMap is the case × model matrix, each cell coloured by its pass
// rate in eleven steps, with the per-model columns beneath.
func htmlHeatMap(rep *report.Report) *htmlMatrix {
	b := rep.Behavior
	models := resultModels(rep)
	m := &htmlMatrix{Summary: fmt.Sprintf("%d cases × %d models, %d runs each", len(b.Cases), len(models), b.RunsPerCase)}
	for _, id := range models {
		m.Models = append(m.Models, line(id))
	}
	results := map[[2]string]report.CaseResult{}
	for _, r := range b.Results {
		results[[2]string{r.Case, r.Model}] = r
	}
	items := map[[2]string]report.GateItem{}
	var ctx *attnContext
	if rep.Gate != nil {
		ctx = newAttnContext(rep)
		for _, it := range rep.Gate.Items {
			if it.Kind == report.KindCase {
				items[[2]string{it.Subject, it.Model}] = it
			}
		}
	}
	for _, c := range b.Cases {
		row := htmlMatrixRow{Case: line(c.ID), Kind: line(string(c.Kind))}
		if c.Negative {
			row.Kind += ", negative"
		}
		for _, id := range models {
			r, ok := results[[2]string{c.ID, id}]
			if !ok || r.Passed.N == 0 {
				row.Cells = append(row.Cells, htmlCell{Text: "–", Title: "no decided run", Heat: "none"})
				continue
			}
			heat := int(math.Floor(r.Passed.Rate()*10 + 1e-9))
			title := fmt.Sprintf("%s × %s: %d of %d runs passed", line(c.ID), line(id), r.Passed.K, r.Passed.N)
			if r.Errors > 0 {
				title += fmt.Sprintf(", %d errored", r.Errors)
			}
			cell := htmlCell{Text: fmt.Sprintf("%d/%d", r.Passed.K, r.Passed.N), Title: title, Heat: fmt.Sprintf("h%d", heat)}
			if it, ok := items[[2]string{c.ID, id}]; ok {
				// The gate's status colours the cell: a hard case at 4/5,
				// below its floor, is not "mostly green".
				cell.Heat = "st-" + gateCellClass(it.Status)
				if it.Baseline != nil {
					cell.Title += fmt.Sprintf("; baseline %d/%d", it.Baseline.K, it.Baseline.N)
					if it.Status != report.ItemNotComparable && it.Baseline.N > 0 {
						cell.Title += ", Δ " + deltaPoints(r.Passed.Rate()-it.Baseline.Rate())
					}
				}
				cell.Title += "; " + it.Status + ": " + line(itemWords(ctx, it))
			}
			row.Cells = append(row.Cells, cell)
		}
		m.Rows = append(m.Rows, row)
	}
	for _, c := range modelColumns(rep) {
		b := c.Baseline
		if b == nil {
			b = &report.ModelFigures{}
		}
		m.Columns = append(m.Columns, htmlColumns{Model: line(c.Model),
			Accuracy: withDelta(rate(c.Now.Accuracy), pointChange(c.Now.Accuracy, b.Accuracy)),
			P95:      withDelta(dur(c.Now.P95Ms), relChange(c.Now.P95Ms, b.P95Ms)),
			Tokens:   withDelta(tokensPer(c.Now.TokensPerCase), relChange(c.Now.TokensPerCase, b.TokensPerCase)),
			Cost:     withDelta(usdOrUnknown(c.Now.CostPerCaseUSD), relChange(c.Now.CostPerCaseUSD, b.CostPerCaseUSD))})
	}
	m.Trends = htmlTrends(modelColumns(rep))
	some := false
	var confusions []htmlConfusions
	for _, mc := range Confusions(rep) {
		hc := htmlConfusions{Model: line(mc.Model), More: mc.More, Summary: fmt.Sprintf("%d of %d steps", mc.Runs, mc.Steps)}
		if mc.Runs == 0 {
			hc.Summary = fmt.Sprintf("no tool taken for another in %d steps", mc.Steps)
		}
		for i, c := range mc.Cells {
			hc.Cells = append(hc.Cells, htmlConfusion{Expected: line(ToolClass(c.Expected)), Chosen: line(ToolClass(c.Chosen)), Count: c.Count, Similar: mc.Similar[i]})
		}
		some = some || mc.Runs > 0
		confusions = append(confusions, hc)
	}
	if some {
		m.Confusions = confusions
	}
	return m
}

// htmlResilience is Layer 2 as an injected × model matrix: one row per
// fault or attack type and its main score (fault handled, attack
// success), one cell per model coloured by the gate's status, the other
// scores and the baseline on hover. Rows the gate passed for every model
// are folded under the rest.
func htmlResilience(rep *report.Report) *htmlL2 {
	type key struct{ kind, model, subject, score string }
	items := map[key]report.GateItem{}
	var ctx *attnContext
	if rep.Gate != nil {
		ctx = newAttnContext(rep)
		for _, it := range rep.Gate.Items {
			if it.Layer == 2 {
				items[key{it.Kind, it.Model, it.Subject, it.Score}] = it
			}
		}
	}
	l := &htmlL2{}
	var models []string
	seen := map[string]bool{}
	type rowKey struct{ kind, subject string }
	var order []rowKey
	cells := map[rowKey]map[string]htmlCell{}
	add := func(kind, model, subject string, scores []report.Score) {
		if !seen[model] {
			seen[model] = true
			models = append(models, model)
		}
		rk := rowKey{kind, subject}
		if cells[rk] == nil {
			cells[rk] = map[string]htmlCell{}
			order = append(order, rk)
		}
		main := report.FaultHandled
		if kind == report.KindAttack {
			main = report.AttackSuccess
		}
		var cell htmlCell
		var more []string
		for _, sc := range scores {
			desc := fmt.Sprintf("%s %d/%d (%s, %s is better)", line(sc.Name), sc.K, sc.N, percent(sc.Count().Rate()), line(string(sc.Direction)))
			if sc.Name != main {
				more = append(more, desc)
				continue
			}
			cell = htmlCell{Text: fmt.Sprintf("%d/%d", sc.K, sc.N), Title: line(model) + ": " + desc, Heat: "none"}
			if it, ok := items[key{kind, model, subject, sc.Name}]; ok {
				cell.Heat = "st-" + gateCellClass(it.Status)
				if it.Baseline != nil {
					cell.Title += fmt.Sprintf("; baseline %d/%d", it.Baseline.K, it.Baseline.N)
				}
				cell.Title += "; " + it.Status + ": " + line(itemWords(ctx, it))
			}
		}
		if cell.Text == "" {
			cell = htmlCell{Text: "–", Title: "no " + main + " score", Heat: "none"}
		}
		if len(more) > 0 {
			cell.Title += "; " + strings.Join(more, "; ")
		}
		cells[rk][model] = cell
	}
	for _, f := range rep.Resilience.Faults {
		add(report.KindFault, f.Model, f.Fault, f.Scores)
	}
	for _, a := range rep.Resilience.Attacks {
		add(report.KindAttack, a.Model, a.Attack, a.Scores)
	}
	for _, m := range models {
		l.Models = append(l.Models, line(m))
	}
	for _, rk := range order {
		// Short, as the comment's matrix has it (the sentence above the
		// table says what the arrows mean): four model columns left
		// "fault: fault handled (higher is better)" four lines high.
		score := "handled\u00a0↑"
		if rk.kind == report.KindAttack {
			score = "success\u00a0↓"
		}
		row := htmlMatrixRow{What: rk.kind, Case: line(rk.subject), Kind: score}
		allPass := true
		for _, m := range models {
			c, ok := cells[rk][m]
			if !ok {
				c = htmlCell{Text: "–", Title: "not run", Heat: "none"}
			}
			allPass = allPass && c.Heat == "st-pass"
			row.Cells = append(row.Cells, c)
		}
		if allPass {
			l.Passed = append(l.Passed, row)
		} else {
			l.Rows = append(l.Rows, row)
		}
	}
	return l
}

func htmlTelemetry(t *report.Telemetry) *htmlLayer3 {
	l := &htmlLayer3{RunCost: runCost(t), Prices: orDash(line(t.Prices))}
	for i, w := range t.Warnings {
		if i == 50 {
			l.Warnings = append(l.Warnings, fmt.Sprintf("… %d more in report.json", len(t.Warnings)-50))
			break
		}
		l.Warnings = append(l.Warnings, line(w))
	}
	for _, u := range t.Usage {
		l.Usage = append(l.Usage, htmlUsage{Model: line(u.Model), Role: line(u.Role), Calls: fmt.Sprint(u.Calls),
			Input: grouped(u.InputTokens), CacheRead: grouped(u.CachedInputTokens), CacheWrite: grouped(u.CacheWriteTokens),
			Output: grouped(u.OutputTokens), Reasoning: grouped(u.ReasoningTokens), Cost: usdOrUnknown(u.CostUSD),
			PerCall: dashIfNil(u.CostPerCallUSD), PerCase: dashIfNil(u.CostPerCaseUSD), Per1k: dashIfNil(u.CostPer1kToolCallsUSD)})
	}
	for i, r := range t.Tools {
		if i == maxHTMLToolRows {
			l.ToolsMore = len(t.Tools) - i
			break
		}
		c := toolCells(r)
		l.Tools = append(l.Tools, htmlTool{Tool: line(clip(r.Tool, maxToolNameRunes)), Model: line(r.Model), Calls: c.callsWithErrors(),
			P50: c.p50, P95: c.p95, Max: c.max, Tokens: c.tokens, PerCall: c.perCall})
	}
	edges := telemetry.BinEdges()
	ticks := map[float64]string{1: "1 ms", 10: "10 ms", 100: "100 ms", 1000: "1 s", 10000: "10 s", 100000: "100 s"}
	for i, e := range edges {
		if label, ok := ticks[e]; ok {
			l.Ticks = append(l.Ticks, htmlTick{X: float64(i) * 340 / float64(len(edges)), Label: label})
		}
	}
	for _, r := range t.Latency {
		l.Latency = append(l.Latency, htmlLatency{Kind: line(r.Kind), Of: line(latencyOf(r)), Model: orDash(line(r.Model)), N: fmt.Sprint(r.Samples),
			P50: dur(r.P50Ms), P95: dur(r.P95Ms), Max: durMs(r.MaxMs), Errors: fmt.Sprint(r.Errors), Bars: htmlBars(r.Histogram)})
	}
	return l
}

// htmlBars lays a histogram out on the fixed 1-2-5 bins, so two charts
// line up: one slot per bin, bar height relative to the fullest bin.
func htmlBars(hist []report.Bin) []htmlBar {
	edges := telemetry.BinEdges()
	slots := len(edges)
	most := 0
	for _, b := range hist {
		most = max(most, b.Count)
	}
	if most == 0 {
		return nil
	}
	var bars []htmlBar
	w := 340.0 / float64(slots)
	for _, b := range hist {
		slot := 0
		for i, e := range edges {
			if b.FromMs >= e {
				slot = i
			}
		}
		h := 56 * float64(b.Count) / float64(most)
		to := "∞"
		if b.ToMs != nil {
			to = durMs(*b.ToMs)
		}
		bars = append(bars, htmlBar{X: float64(slot)*w + 1, Y: 58 - h, W: w - 2, H: h, Label: fmt.Sprintf("%s – %s: %d", durMs(b.FromMs), to, b.Count)})
	}
	return bars
}

// htmlFailures are the case × model pairs with a run that did not pass,
// worst first, each with its failed runs and their trajectories.
func htmlFailures(rep *report.Report, opts HTMLOptions) ([]htmlFailing, int) {
	var failing []report.CaseResult
	for _, r := range rep.Behavior.Results {
		if r.Passed.K < r.Passed.N || r.Errors > 0 {
			failing = append(failing, r)
		}
	}
	// Waived cases last: accepted, they must not open the section and push
	// the failures that count down.
	waived := map[[2]string]bool{}
	if rep.Gate != nil {
		for _, it := range rep.Gate.Items {
			if it.Layer == 1 && it.Kind == report.KindCase && it.Status == report.ItemWaived {
				waived[[2]string{it.Subject, it.Model}] = true
			}
		}
	}
	sort.SliceStable(failing, func(i, j int) bool {
		wi, wj := waived[[2]string{failing[i].Case, failing[i].Model}], waived[[2]string{failing[j].Case, failing[j].Model}]
		if wi != wj {
			return wj
		}
		return failing[i].Passed.Rate() < failing[j].Passed.Rate()
	})
	more := 0
	if len(failing) > opts.MaxFailing {
		more = len(failing) - opts.MaxFailing
		failing = failing[:opts.MaxFailing]
	}
	var out []htmlFailing
	for _, r := range failing {
		f := htmlFailing{Open: len(out) == 0, Case: line(r.Case), Model: line(r.Model), Passed: fmt.Sprintf("%d/%d passed", r.Passed.K, r.Passed.N)}
		f.Notes = collapse(r.Notes)
		if len(f.Notes) > 10 {
			f.Notes = f.Notes[:10]
		}
		// Runs that failed for the same reasons are shown once, with the
		// others named: their trajectories are in report.json.
		same := map[string]int{}
		for _, run := range r.Runs {
			if run.Outcome == report.RunPass {
				continue
			}
			key := run.Outcome + "\x00" + strings.Join(run.Reasons, "\x00")
			if i, ok := same[key]; ok {
				f.Runs[i].Same = append(f.Runs[i].Same, fmt.Sprint(run.Run))
				continue
			}
			if len(f.Runs) == opts.MaxRunsPerCase {
				f.MoreRuns++
				continue
			}
			same[key] = len(f.Runs)
			f.Runs = append(f.Runs, htmlCaseRun(run))
		}
		out = append(out, f)
	}
	return out, more
}

func htmlCaseRun(run report.CaseRun) htmlRun {
	h := htmlRun{Run: fmt.Sprint(run.Run), Outcome: line(run.Outcome), Class: statusClass(map[string]string{report.RunFail: "fail", report.RunError: "fail"}[run.Outcome])}
	for _, r := range run.Reasons {
		h.Reasons = append(h.Reasons, line(r))
	}
	t := run.Trajectory
	if t == nil {
		return h
	}
	h.End = line(t.End)
	if t.Reason != "" {
		h.End += ": " + line(t.Reason)
	}
	h.Final, h.Truncated = block(t.Final), t.Truncated
	h.Stats = fmt.Sprintf("%d model calls · %s in, %s out · %s", t.ModelCalls, grouped(int64(t.InputTokens)), grouped(int64(t.OutputTokens)), durMs(float64(t.DurationMs)))
	for _, turn := range t.Turns {
		ht := htmlTurn{N: len(h.Turns) + 1, Text: block(turn.Text), Meta: fmt.Sprintf("%s · %s · %s in, %s out", line(turn.StopReason), durMs(float64(turn.LatencyMs)),
			grouped(int64(turn.InputTokens)), grouped(int64(turn.OutputTokens)))}
		for _, c := range turn.Calls {
			args := c.ArgumentsRaw
			if len(c.Arguments) > 0 {
				args = indentJSON(c.Arguments)
			}
			meta := durMs(float64(c.DurationMs))
			if c.Stubbed {
				meta += " · stubbed"
			}
			if c.ParseError != "" {
				meta += " · arguments did not parse: " + c.ParseError
			}
			ht.Calls = append(ht.Calls, htmlCall{Name: line(c.Name), Arguments: block(args), Result: block(c.Result), Meta: line(meta), IsError: c.IsError})
		}
		h.Turns = append(h.Turns, ht)
	}
	return h
}

func indentJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return string(raw)
	}
	return string(b)
}
