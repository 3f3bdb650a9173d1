package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/merge"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/telemetry"
)

// MergeInput is a merge of a sharded run's reports: the shards as read,
// and the baseline they balanced on when the caller has it.
type MergeInput struct {
	Shards []merge.Shard
	// Baseline is the file of the last green run (""): the shards'
	// recorded baseline is read from its recorded path when this is
	// empty and that file is there. The action, which fetched it itself,
	// gives BaselineReport and BaselineRef instead (BaselineNote: why
	// there is none).
	Baseline       string
	BaselineReport *report.Report
	BaselineRef    report.ReportRef
	BaselineNote   string
	Env            Env
	Outputs        Outputs
}

// MergeShards joins the shards into one report (pkg/merge) and gates it
// once, under the policy the shards recorded, against the baseline they
// balanced on: so the cost gate sees the run's total, as the budget caps
// saw each shard's. It writes the outputs. An error is a mismatch between
// the shards, naming the shard's file, or an output that could not be
// written.
func MergeShards(in MergeInput) (*report.Report, error) {
	env := in.Env
	if env.Workspace == "" {
		env.Workspace, _ = os.Getwd()
	}
	res, err := merge.Merge(in.Shards, telemetry.Distribution)
	if err != nil {
		return nil, err
	}
	rep := res.Report
	pol := gate.DefaultPolicy()
	if res.Policy != nil {
		pol = gate.PolicyFromReport(*res.Policy)
		if err := pol.Validate(); err != nil {
			return nil, fmt.Errorf("the policy the shards recorded cannot be enforced: %w", err)
		}
	}
	gin := gate.Input{New: rep, Now: time.Now()}
	path := in.Baseline
	if path == "" && res.Baseline != nil && res.Baseline.Path != "" {
		p := res.Baseline.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(env.Workspace, p)
		}
		if _, err := os.Stat(p); err == nil {
			path = p
		}
	}
	switch {
	case in.BaselineReport != nil:
		ref := in.BaselineRef
		if err := sameBaseline(ref, res.Baseline, ref.Path); err != nil {
			return nil, err
		}
		gin.Baseline, gin.BaselineRef = in.BaselineReport, ref
	case in.BaselineNote != "" && path == "":
		gin.BaselineNote = in.BaselineNote
	case path != "":
		base, err := report.Load(path)
		if err != nil {
			env.warnf("baseline %s is unusable (%s); gating on floors only", path, Brief(err))
			gin.BaselineNote = fmt.Sprintf("baseline %s is unusable (%s)", report.RelPath(env.Workspace, abs(path)), Brief(err))
			break
		}
		ref := Ref(env.Workspace, path, base)
		if err := sameBaseline(ref, res.Baseline, path); err != nil {
			return nil, err
		}
		gin.Baseline, gin.BaselineRef = base, ref
	case res.Baseline != nil:
		env.warnf("the shards were gated against %s, which is not here; gating the merged report on floors only (pass it as --baseline)", res.Baseline.Path)
		gin.BaselineNote = fmt.Sprintf("the shards' baseline %s was not given to the merge (--baseline FILE)", res.Baseline.Path)
	default:
		gin.BaselineNote = "no baseline: the shards ran without one"
	}
	rep.Gate = gate.Evaluate(gin, pol)
	rep.Gate.Notes = append(rep.Gate.Notes, res.Notes...)
	if rep.Telemetry != nil {
		telemetry.Compare(rep, gin.Baseline, nil)
	}
	if env.Redact != nil {
		if err := env.Redact.JSON(rep); err != nil {
			return nil, fmt.Errorf("redacting the report: %w", err)
		}
	}
	return rep, in.Outputs.Write(rep)
}

// sameBaseline: the merge is gated against the report the shards
// balanced on, or none; another would gate the shards' results against
// something they were not split for.
func sameBaseline(ref report.ReportRef, shards *report.ReportRef, name string) error {
	if shards == nil || (ref.Commit == shards.Commit && ref.WorkflowRunID == shards.WorkflowRunID && ref.FinishedAt.Equal(shards.FinishedAt)) {
		return nil
	}
	return fmt.Errorf("baseline %s (commit %s, run %d) is not the one the shards balanced on and were gated against (commit %s, run %d): give the merge that report",
		name, ref.Commit, ref.WorkflowRunID, shards.Commit, shards.WorkflowRunID)
}
