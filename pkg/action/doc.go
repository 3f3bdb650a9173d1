// Package action is mcp-eval's GitHub Actions side: it reads the action's
// inputs and the triggering event, decides what to run (Plan), fetches the
// baseline, and publishes the result (outputs, job summary, annotations and
// the sticky pull-request comment). It knows nothing of the report model: it
// takes bytes and strings from the CLI, which owns running and rendering.
//
// How the CLI drives it (`mcp-eval action`):
//
//	r := &action.Runner{Getenv: os.Getenv, Environ: os.Environ, Stdout: os.Stdout}
//	plan, err := r.Plan()                  // inputs + event → layers, models, baseline, comment target
//	if err != nil { /* print err; exit 2 (bad input, names the input) */ }
//	r.Announce(plan)                       // logs the plan and its neutral notes
//	base := r.Baseline(ctx, plan, validate, accept) // never fails: nil Report means floors only
//	... run plan.Layers, gate against base.Report, write report.json, render Markdown ...
//	pub, err := r.Publish(ctx, plan, action.Result{Verdict: "pass", Passed: true, ReportPath: "report.json",
//		MarkdownBody: md, Annotations: anns, Scores: map[string]string{"conformance": "1.00"}})
//	// exit 1 on verdict fail; a comment that could not be posted never changes it.
//
// Inputs reach the process as INPUT_<NAME> with the name upper-cased and
// hyphens kept (INPUT_SERVER-URL). The Docker image's ENTRYPOINT is the
// binary itself: a shell such as dash would drop those variables. The host
// composite action (host/action.yml) maps its inputs to the same variables,
// so both entry points share this parsing.
//
// Everything that came from the server under test or a model is untrusted:
// it never goes into an output (outputs are validated single-line values), it
// is escaped in annotations (EscapeCommandData), and it is echoed to the log
// only inside a stop-commands block (EchoUntrusted).
package action
