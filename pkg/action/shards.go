package action

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/merge"
	"github.com/mcp-eval/mcp-eval-action/pkg/pipeline"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// ShardReports downloads the shards' reports of this workflow run (shard:
// merge): every artifact named shard-artifact-*, each report.json read
// as untrusted. An unreadable report is an error naming its artifact.
func (r *Runner) ShardReports(ctx context.Context, p Plan) ([]merge.Shard, error) {
	owner, repo, ok := strings.Cut(p.Repository, "/")
	if !ok || p.RunID == 0 {
		return nil, fmt.Errorf("shard: merge needs GITHUB_REPOSITORY and GITHUB_RUN_ID: it downloads the shards' artifacts of this workflow run")
	}
	c, err := r.client()
	if err != nil {
		return nil, err
	}
	arts, err := c.FetchRunReports(ctx, owner, repo, p.RunID, p.Inputs.ShardArtifact+"-")
	if err != nil {
		return nil, fmt.Errorf("shard: merge: %w", err)
	}
	var out []merge.Shard
	for _, a := range arts {
		name := fmt.Sprintf("artifact %s", a.Name)
		rep, err := report.Parse(a.Report)
		if err != nil {
			return nil, fmt.Errorf("%s: report.json: %s", name, pipeline.Brief(err))
		}
		out = append(out, merge.Shard{Name: name, Report: rep})
	}
	return out, nil
}

// ShardLayers are the layers the shards ran, which a baseline for their
// merge must hold.
func ShardLayers(shards []merge.Shard) []string {
	var has [3]bool
	for _, s := range shards {
		has[0] = has[0] || s.Report.Conformance != nil
		has[1] = has[1] || s.Report.Behavior != nil
		has[2] = has[2] || s.Report.Resilience != nil
	}
	var out []string
	for i, l := range []string{pipeline.Conformance, pipeline.Behavior, pipeline.Resilience} {
		if has[i] {
			out = append(out, l)
		}
	}
	return out
}
