// Package behavior is Layer 1: it runs a golden set through models against
// a real MCP server and scores what the models did.
//
// For every case × run × model, an Agent gives the model the server's
// tools and the case's prompt; each tool call the model makes is executed
// on the server through the MCP client (MCPExecutor), with MRTR input
// requests answered from the case's inputs and stubbed tools answered
// without the server; results go back to the model until it answers or
// reaches the step limit. The trajectory — turns, calls, results, timings
// — is kept, bounded, for the report. Package score turns it into the
// scores; a Judge grades rubrics and decides arguments package match left
// uncertain. A Cache directory stores results and verdicts so an unchanged
// suite makes no provider call; a budget caps the spend; runs go
// concurrently under a global limit and per-provider rate limits.
//
// Quick start:
//
//	plan, err := behavior.Prepare(ctx, behavior.Config{
//		Set:    set,                               // golden.Load("tasks.yaml")
//		Models: []llm.Provider{gpt, claude},       // llm.New("openai:gpt-5-mini", …)
//		Judge:  judge,                             // nil: no judge
//		Client: client,                            // mcpclient.Connect(…)
//		Runs:   5,
//		Cache:  cache,                             // behavior.OpenCache(".mcp-eval-cache")
//		Budget: behavior.Budget{MaxUSD: 2},
//	})
//	fmt.Println(plan.Preview())                    // before any model call
//	res, err := plan.Run(ctx)
//	rep.Behavior, rep.Models = res.Behavior, append(rep.Models, res.Models...)
//
// Layout: loop.go (the agent loop), executor.go (tools on the server,
// MRTR, stubs), judge.go, cache.go, budget.go (the preview's estimate;
// the meter and prices are pkg/spend and pkg/pricing), ratelimit.go, runner.go (the matrix), evaluate.go (one
// run's scores), assemble.go (the report section). docs/behavior.md is
// the user's guide.
package behavior
