// Package hostile is a deliberately malicious MCP server for the harness's
// own tests: the reference server of golden-examples with one hostile
// behaviour switched on, over stdio or Streamable HTTP. The server under test
// is untrusted code from a pull request; this package is how the test suite
// shows that whatever such a server does, mcp-eval ends in bounded time and
// memory, does not panic, leaves no process behind, keeps secrets to itself
// and reports what happened in a comment whose Markdown stays intact.
//
// Each Behaviour changes one thing and leaves every other request to the
// reference server, so a report can attribute a finding to that one thing.
// The binary in cmd/hostile-server runs one behaviour:
//
//	hostile-server --behaviour stdout-noise            # stdio
//	hostile-server --behaviour gzip-bomb --http 127.0.0.1:0
//
// Behaviours that need a second address (a redirect target, a remote $ref)
// read it from HOSTILE_TRIPWIRE; the secrets probe writes what it could read
// to the file HOSTILE_OUT names.
package hostile
