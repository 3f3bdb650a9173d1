#!/usr/bin/env bash
# The Layer 0 benchmark (issue 15; figures in docs/benchmarks.md). One command:
#
#   bash bench/run.sh [bench flags]       e.g. -pairs 5 -reps 3 -only ab-ts,tools -json out.json
#
# It installs what it needs (idempotent): the interop servers (scripts/setup-interop.sh),
# the pinned official conformance suite (scripts/official-suite.sh --install-only), and,
# when BENCH_TS_SDK names a git checkout or mirror of github.com/modelcontextprotocol/typescript-sdk,
# that SDK's conformance server test/conformance/src/everythingServer.ts (the official
# suite's own reference server) on the published v2 packages. It builds mcp-eval and the
# bundled reference server, then runs `go run ./bench` (bench/main.go says what is measured).
#
# Environment: BENCH_TS_SDK (see above), BENCH_CACHE (default <repo>/.cache/bench),
# OFFICIAL_SUITE_VERSION / OFFICIAL_SUITE_CACHE as scripts/official-suite.sh.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
CACHE=${BENCH_CACHE:-$ROOT/.cache/bench}
SUITE_CACHE=${OFFICIAL_SUITE_CACHE:-$ROOT/.cache/official-suite}
mkdir -p "$CACHE/bin"

echo "== setup (idempotent)" >&2
bash scripts/setup-interop.sh >&2
bash scripts/official-suite.sh --install-only
go build -o "$CACHE/bin/mcp-eval" ./cmd/mcp-eval
go build -tags netgo -o "$CACHE/bin/example-server" ./golden-examples/cmd/example-server   # as golden-examples/mcp-eval.yaml builds it

suite_js=$SUITE_CACHE/node_modules/@modelcontextprotocol/conformance/dist/index.js
hook=()
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
  # written by official-suite.sh: supplies fs.globSync, which the suite imports at load
  hook=(-suite-hook "$SUITE_CACHE/node20-hook/register.mjs")
fi

everything=()
if [ -n "${BENCH_TS_SDK:-}" ]; then
  ev=$CACHE/everything
  mkdir -p "$ev"
  commit=$(git -C "$BENCH_TS_SDK" rev-parse HEAD)
  git -C "$BENCH_TS_SDK" show HEAD:test/conformance/src/everythingServer.ts >"$ev/everythingServer.ts"
  # The server was written against the SDK's workspace packages; these published
  # versions run it unchanged (../shared/docs/official-conformance-suite.md §4.2).
  cat >"$ev/package.json.new" <<'EOF'
{
  "name": "mcp-eval-bench-everything-server",
  "private": true,
  "type": "module",
  "dependencies": {
    "@modelcontextprotocol/server": "2.4.0",
    "@modelcontextprotocol/express": "2.0.2",
    "@modelcontextprotocol/node": "2.1.2",
    "cors": "^2.8.5",
    "express": "^5.1.0",
    "zod": "^4.2.1",
    "tsx": "^4.20.0"
  }
}
EOF
  if ! cmp -s "$ev/package.json.new" "$ev/package.json" || [ ! -d "$ev/node_modules/tsx" ]; then
    mv "$ev/package.json.new" "$ev/package.json"
    echo "bench: installing the everything server's packages into $ev" >&2
    (cd "$ev" && timeout 600 npm install --no-audit --no-fund --loglevel=error >&2)
  else
    rm -f "$ev/package.json.new"
  fi
  echo "bench: everything server from typescript-sdk $commit" >&2
  everything=(-everything "$ev")
else
  echo "bench: BENCH_TS_SDK not set: the official suite's own reference server is skipped" >&2
fi

exec go run ./bench -root "$ROOT" -mcp-eval "$CACHE/bin/mcp-eval" -refserver "$CACHE/bin/example-server" \
  -suite-js "$suite_js" "${hook[@]}" "${everything[@]}" "$@"
