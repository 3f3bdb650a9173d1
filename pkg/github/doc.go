// Package github is mcp-eval's small client for the GitHub REST API: it finds
// the baseline report of the last green run and keeps one sticky comment per
// pull request up to date. It works with bytes and strings only; what a report
// means is the caller's business (see Params.Accept).
//
// Quick start (inside a workflow run):
//
//	c, err := github.New(github.Options{APIURL: os.Getenv("GITHUB_API_URL"), Token: token})
//	report, run, err := c.FetchBaseline(ctx, github.Params{
//		Owner: "o", Repo: "r", WorkflowFile: "evals.yml", DefaultBranch: "main",
//		Accept: func(b []byte) (bool, string) { return verdictIsPass(b) },
//	})
//	switch {
//	case errors.Is(err, github.ErrNoRun), errors.Is(err, github.ErrNoArtifact): // floors only
//	}
//	action, err := c.UpsertComment(ctx, "o", "r", 42, github.Marker("evals.yml"), body)
//	if errors.Is(err, github.ErrReadOnlyToken) { /* fork PR: warn, keep the verdict */ }
//
// Design notes:
//   - The base URL is GITHUB_API_URL + "/" used verbatim. go-github's
//     WithEnterpriseURLs would append "/api/v3/" to hosts that do not start
//     with "api.", which breaks test doubles and proxies; GHES already puts
//     "/api/v3" in GITHUB_API_URL.
//   - Every API call has its own deadline (Options.CallTimeout) on top of the
//     caller's context, so one stuck request cannot eat the job's budget.
//   - The artifact zip is fetched from the 302 Location with a plain
//     http.Client that never carries the token: the URL is pre-signed and may
//     point at another host.
//   - Errors are *Error values with a Kind sentinel (errors.Is) and a hint that
//     says how to fix the cause. The token never appears in any of them.
package github
