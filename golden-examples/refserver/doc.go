// Package refserver is mcp-eval's reference MCP server: a correct
// implementation of MCP revision 2026-07-28 over stdio and Streamable HTTP,
// written against the standard library only so that every byte on the wire is
// visible. It is the quick-start target of mcp-eval and the base the
// project's "mutant" servers break one rule at a time (see the mutant
// switches in Options).
//
// Quick start:
//
//	srv := refserver.New(refserver.Options{})
//	defer srv.Close()
//
//	// Streamable HTTP
//	mux := http.NewServeMux()
//	mux.Handle("/mcp", srv.Handler())
//	go http.ListenAndServe("127.0.0.1:8080", mux)
//
//	// stdio
//	err := srv.ServeStdio(ctx, os.Stdin, os.Stdout)
//
// What it serves (all data fake and deterministic):
//
//   - server/discover, tools/list, tools/call, resources/list,
//     resources/templates/list, resources/read, prompts/list, prompts/get,
//     completion/complete, subscriptions/listen.
//   - tools get_weather, search_invoices ($ref in its schemas), send_email
//     (multi round-trip confirmation through form elicitation), lookup_region
//     (x-mcp-header → Mcp-Param-Region) and slow_count (progress and logs);
//     with Options.MRTRItems (--mrtr-items), more multi round-trip tools and
//     prompts, each correct, stateless or breaking one MRTR rule, so tests
//     can put a fault on a later item than the first (mrtr_items.go).
//
// Layout: jsonrpc.go frames messages; server.go validates the envelope and
// dispatches (the one place both transports share); one file per feature
// (discover, tools, mrtr, resources, prompts, completion, subscriptions,
// logging, pagination); validate.go is the JSON Schema subset used for tool
// arguments; http.go and headers.go are Streamable HTTP; stdio.go is stdio.
// Comments cite rule ids of shared/docs/spec-checklist.md.
//
// Known limits:
//
//   - No authorization (AUTH-*): it is a local example server.
//   - Nothing served ever changes, so although tools and resources declare
//     listChanged/subscribe, a listen stream only ever carries its
//     acknowledgment and keep-alives (SUB-9 is never exercised).
//   - Header values with control bytes are refused by net/http itself with a
//     plain-text 400 before the handler runs, so that case of HDR-5 gets the
//     right status but no -32020 body. Non-ASCII bytes do get -32020.
//   - The schema validator covers the keywords these tools and the MCP
//     schema use, not all of 2020-12; "email" is the only asserted format.
package refserver
