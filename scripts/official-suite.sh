#!/usr/bin/env bash
# Run the official MCP conformance suite (@modelcontextprotocol/conformance, pinned)
# against a running Streamable HTTP server on loopback, and print one verdict line
# per scenario (and per check) in a stable, tab-separated form.
#
#   bash scripts/official-suite.sh [options] URL [-- SUITE_ARGS...]
#   bash scripts/official-suite.sh --install-only
#
# URL must be http://127.0.0.1:PORT/..., http://localhost:PORT/... or http://[::1]:PORT/...;
# anything else is refused. The suite is only a client: this script starts no server.
# By default it runs `--requirements 2026-07-28` (37 scored scenarios + 13 run but not
# scored); SUITE_ARGS after `--` replace that, e.g. `-- --scenario caching`.
#
# Options:
#   --json FILE          also write every scenario and check as one JSON document
#   --out DIR            keep the suite's raw per-scenario checks.json files in DIR
#                        (default: a temporary directory, removed on exit)
#   --checks MODE        which check lines to print: all (default), problems
#                        (every status except SUCCESS), none
#   --scenario-timeout MS  the suite's per-scenario --timeout (default 10000)
#   --timeout SECONDS    hard deadline for the whole suite run (default 300)
#   --install-only       install the pinned suite into the cache and exit
#
# Output (stdout; stable order: scenarios as in the requirements file, then the rest by
# name; checks sorted by id, then status, then message):
#   # official-suite <version> url=<URL> node=<version>[+hook] args=<suite args>
#   scenario<TAB><name><TAB><scoring><TAB><verdict><TAB>success=N failure=N warning=N skipped=N info=N
#   check<TAB><scenario><TAB><check id><TAB><STATUS><TAB><message, one line, <= 300 chars>
#   summary<TAB>scenarios=N required=N required_pass=N required_fail=N exit=N wall=S.SS
# scoring: required | not_scored | unscored (not in the requirements file / no --requirements)
# verdict: PASS (no FAILURE, no WARNING) | WARN (WARNING but no FAILURE; the suite counts
#   it as passing) | SKIP (every check SKIPPED; counts as passing too) | FAIL (a FAILURE) |
#   ERROR (the scenario threw and the suite wrote no checks, or a scored scenario has no result)
# STATUS: the suite's own SUCCESS | FAILURE | WARNING | SKIPPED | INFO
#
# Exit: 0 = every scored scenario passed (the suite's exit 0); 1 = the suite exited 1;
#       2 = usage or install error; 3 = server unreachable (nothing answered at URL);
#       124 = the --timeout deadline was hit.
#
# Environment: OFFICIAL_SUITE_VERSION (default 0.2.0-alpha.12; `latest` = 0.1.16 rejects
# 2026-07-28), OFFICIAL_SUITE_CACHE (default <repo>/.cache/official-suite, git-ignored),
# OFFICIAL_SUITE_NODE (a node binary to use instead of `node`).
# Needs node >= 20 and npm (the npm registry is reached only when the cache is missing
# or holds another version). On Node < 22 a resolve hook supplies fs.globSync, which the
# suite's bundle imports at top level (only its tier-check command uses it).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VERSION=${OFFICIAL_SUITE_VERSION:-0.2.0-alpha.12}
CACHE=${OFFICIAL_SUITE_CACHE:-$ROOT/.cache/official-suite}
NODE=${OFFICIAL_SUITE_NODE:-node}
PKG_DIR=$CACHE/node_modules/@modelcontextprotocol/conformance

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
die() { echo "official-suite: $*" >&2; exit 2; }

json_out="" out_dir="" checks_mode=all scenario_timeout=10000 total_timeout=300
install_only=0 url="" suite_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --json) json_out=${2:?--json needs a file}; shift 2 ;;
    --out) out_dir=${2:?--out needs a directory}; shift 2 ;;
    --checks) checks_mode=${2:?--checks needs all, problems or none}; shift 2 ;;
    --scenario-timeout) scenario_timeout=${2:?}; shift 2 ;;
    --timeout) total_timeout=${2:?}; shift 2 ;;
    --install-only) install_only=1; shift ;;
    -h|--help) usage ;;
    --) shift; suite_args=("$@"); break ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [ -z "$url" ] || die "only one URL"; url=$1; shift ;;
  esac
done
case $checks_mode in all|problems|none) ;; *) die "--checks must be all, problems or none" ;; esac
[[ $scenario_timeout =~ ^[0-9]+$ && $total_timeout =~ ^[0-9]+$ ]] || die "timeouts must be integers"

command -v "$NODE" >/dev/null || die "node not found ($NODE)"
node_major=$("$NODE" -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || die "node >= 20 needed, have $("$NODE" --version)"

# ---------------------------------------------------------------- install (idempotent)
installed_version() {
  if [ -f "$PKG_DIR/package.json" ]; then
    "$NODE" -p "require('$PKG_DIR/package.json').version" 2>/dev/null || true
  fi
}
if [ "$(installed_version)" != "$VERSION" ]; then
  command -v npm >/dev/null || die "npm not found"
  mkdir -p "$CACHE"
  printf '{\n  "name": "mcp-eval-official-suite",\n  "private": true,\n  "dependencies": { "@modelcontextprotocol/conformance": "%s" }\n}\n' \
    "$VERSION" >"$CACHE/package.json"
  rm -f "$CACHE/package-lock.json"
  echo "official-suite: installing @modelcontextprotocol/conformance@$VERSION into $CACHE" >&2
  if ! (cd "$CACHE" && timeout 600 npm install --no-audit --no-fund --loglevel=error >"$CACHE/npm-install.log" 2>&1); then
    cat "$CACHE/npm-install.log" >&2
    die "npm install failed"
  fi
  [ "$(installed_version)" = "$VERSION" ] || die "installed $(installed_version), wanted $VERSION"
fi

# Node < 22: a resolve hook sends the bare `fs` import to a module that re-exports
# node:fs plus a globSync stub (the `server` command never calls it).
node_cmd=("$NODE")
node_label=$("$NODE" --version)
if [ "$node_major" -lt 22 ]; then
  hook=$CACHE/node20-hook
  mkdir -p "$hook"
  cat >"$hook/fs.mjs.tmp" <<'EOF'
// node:fs plus fs.globSync (Node >= 22 only) for the conformance suite on Node 20.
import fs from 'node:fs';
export * from 'node:fs';
export default fs;
export function globSync(...args) {
  if (typeof fs.globSync === 'function') return fs.globSync(...args);
  throw new Error('fs.globSync needs Node >= 22 (only the suite\'s tier-check command uses it)');
}
EOF
  cat >"$hook/hooks.mjs.tmp" <<'EOF'
const SHIM = new URL('./fs.mjs', import.meta.url).href;
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL !== SHIM) {
    return { url: SHIM, shortCircuit: true };
  }
  return next(specifier, context);
}
EOF
  cat >"$hook/register.mjs.tmp" <<'EOF'
import { register } from 'node:module';
register('./hooks.mjs', import.meta.url);
EOF
  for f in fs hooks register; do
    if cmp -s "$hook/$f.mjs.tmp" "$hook/$f.mjs" 2>/dev/null; then
      rm -f "$hook/$f.mjs.tmp"
    else
      mv "$hook/$f.mjs.tmp" "$hook/$f.mjs"
    fi
  done
  node_cmd+=(--import "$hook/register.mjs")
  node_label+="+hook"
fi

if [ "$install_only" = 1 ]; then
  echo "official-suite: @modelcontextprotocol/conformance@$VERSION ready in $CACHE (node $node_label)" >&2
  exit 0
fi
[ -n "$url" ] || die "missing URL (see --help)"

# ---------------------------------------------------------------- loopback only
host=$(printf '%s' "$url" | sed -nE 's#^http://(\[[^]]*\]|[^/:]+)(:[0-9]+)?(/.*)?$#\1#p')
case $host in
  127.0.0.1|localhost|'[::1]') ;;
  '') die "URL must be http://HOST[:PORT]/PATH, got $url" ;;
  *) die "refusing non-loopback host '$host': use 127.0.0.1, localhost or [::1]" ;;
esac

# Reachability: anything HTTP-ish answering counts; only a dead port is "unreachable".
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST \
  -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: server/discover' \
  --data '{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' \
  "$url" 2>/dev/null) || true
if [ -z "$code" ] || [ "$code" = 000 ]; then
  echo "official-suite: server unreachable at $url (no HTTP answer within 5 s); nothing was measured" >&2
  exit 3
fi

# ---------------------------------------------------------------- run
[ ${#suite_args[@]} -gt 0 ] || suite_args=(--requirements 2026-07-28)
rev=""
for ((i = 0; i < ${#suite_args[@]}; i++)); do
  [ "${suite_args[$i]}" = --requirements ] && rev=${suite_args[$((i + 1))]:-}
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/official-suite.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
checks_dir=${out_dir:-$tmp/checks}
if [ -n "$out_dir" ]; then rm -rf "$out_dir"; fi
mkdir -p "$checks_dir"

t0=$(date +%s%N)
set +e
timeout --kill-after=5 "$total_timeout" "${node_cmd[@]}" "$PKG_DIR/dist/index.js" server --url "$url" \
  --timeout "$scenario_timeout" "${suite_args[@]}" -o "$checks_dir" >"$tmp/stdout.txt" 2>"$tmp/stderr.txt" </dev/null
rc=$?
set -e
wall=$(( ($(date +%s%N) - t0) / 1000000 ))
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  echo "official-suite: the suite did not finish within ${total_timeout}s" >&2
fi
if [ "$rc" -gt 1 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ]; then
  echo "official-suite: the suite failed to run (exit $rc):" >&2
  tail -n 20 "$tmp/stderr.txt" >&2
  exit 2
fi

req_file=""
[ -n "$rev" ] && req_file=$PKG_DIR/requirements/$rev.yaml

cat >"$tmp/report.mjs" <<'EOF'
// Merge the suite's per-scenario checks.json files into stable text lines (+ optional JSON).
import fs from 'node:fs';
import path from 'node:path';
const [checksDir, reqFile, stdoutFile, stderrFile, jsonOut, mode, header, rc, wallMs] = process.argv.slice(2);

// requirements/<rev>.yaml: `server:` list of scored scenarios; `not_scored:` list of
// mappings with `scenario:` and `leg:` keys. A tiny reader for that flat shape.
const order = [], scoring = new Map();
if (reqFile && fs.existsSync(reqFile)) {
  let section = null, cur = null;
  for (const raw of fs.readFileSync(reqFile, 'utf8').split('\n')) {
    const line = raw.replace(/\s+#.*$/, '');
    if (/^\S/.test(line)) { section = line.replace(/:.*$/, '').trim(); cur = null; continue; }
    const item = line.match(/^\s+-\s+(.*)$/);
    if (section === 'server') { if (item) { order.push(item[1].trim()); scoring.set(item[1].trim(), 'required'); } continue; }
    if (section === 'not_scored') {
      const kv = (item ? item[1] : line).match(/^\s*([a-z_]+):\s*(.*)$/);
      if (item) cur = {};
      if (kv && cur) {
        cur[kv[1]] = kv[2].trim();
        if (cur.scenario && cur.leg === 'server' && !scoring.has(cur.scenario)) { order.push(cur.scenario); scoring.set(cur.scenario, 'not_scored'); }
      }
    }
  }
}

const scenarios = new Map();
for (const d of fs.existsSync(checksDir) ? fs.readdirSync(checksDir) : []) {
  const f = path.join(checksDir, d, 'checks.json');
  if (!fs.existsSync(f)) continue;
  const m = d.match(/^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/);
  const name = m ? m[1] : d;
  let checks;
  try { checks = JSON.parse(fs.readFileSync(f, 'utf8')); } catch (e) { checks = [{ id: 'checks-json-unreadable', status: 'FAILURE', errorMessage: String(e) }]; }
  scenarios.set(name, { name, checks: (scenarios.get(name)?.checks ?? []).concat(checks) });
}
// A scenario that throws writes no checks.json; the console summary still names it.
const out = fs.existsSync(stdoutFile) ? fs.readFileSync(stdoutFile, 'utf8') : '';
const err = fs.existsSync(stderrFile) ? fs.readFileSync(stderrFile, 'utf8') : '';
const sumPart = out.includes('=== SUMMARY ===') ? out.slice(out.lastIndexOf('=== SUMMARY ===')) : '';
for (const m of sumPart.matchAll(/^[\u2713\u2717] (\S+): (\d+) passed, (\d+) failed/gmu)) {
  if (scenarios.has(m[1])) continue;
  const esc = m[1].replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const why = ((out + err).match(new RegExp(`Failed to run scenario ${esc}: (.*)`)) || [])[1] ?? 'scenario threw; no checks.json written';
  scenarios.set(m[1], { name: m[1], error: why, checks: [] });
}

const oneLine = (s) => String(s ?? '').replace(/\s+/g, ' ').trim().slice(0, 300);
const names = [...order.filter((n) => scenarios.has(n)), ...[...scenarios.keys()].filter((n) => !scoring.has(n)).sort()];
const lines = [header];
const doc = { header, exitCode: Number(rc), wallMs: Number(wallMs), scenarios: [] };
let req = 0, reqPass = 0;
for (const n of names) {
  const s = scenarios.get(n);
  const counts = { SUCCESS: 0, FAILURE: 0, WARNING: 0, SKIPPED: 0, INFO: 0 };
  for (const c of s.checks) counts[c.status] = (counts[c.status] ?? 0) + 1;
  const verdict = s.error ? 'ERROR' : counts.FAILURE ? 'FAIL' : counts.WARNING ? 'WARN'
    : s.checks.length && counts.SKIPPED === s.checks.length ? 'SKIP' : 'PASS';
  const sc = scoring.get(n) ?? 'unscored';
  if (sc === 'required') { req++; if (verdict === 'PASS' || verdict === 'WARN' || verdict === 'SKIP') reqPass++; }
  lines.push(['scenario', n, sc, verdict, Object.entries(counts).map(([k, v]) => `${k.toLowerCase()}=${v}`).join(' ')].join('\t'));
  const checks = s.checks.map((c) => ({ id: c.id, status: c.status, message: oneLine(c.errorMessage) }))
    .sort((a, b) => a.id.localeCompare(b.id) || a.status.localeCompare(b.status) || a.message.localeCompare(b.message));
  if (s.error) checks.unshift({ id: n, status: 'ERROR', message: oneLine(s.error) });
  for (const c of checks) {
    if (mode === 'none' || (mode === 'problems' && c.status === 'SUCCESS')) continue;
    lines.push(['check', n, c.id, c.status, c.message].join('\t'));
  }
  doc.scenarios.push({ scenario: n, scoring: sc, verdict, counts, checks: s.error ? checks : s.checks });
}
const missing = order.filter((n) => scoring.get(n) === 'required' && !scenarios.has(n));
for (const n of missing) lines.push(['scenario', n, 'required', 'ERROR', 'not run (no result)'].join('\t'));
lines.push(['summary', `scenarios=${names.length} required=${req + missing.length} required_pass=${reqPass} required_fail=${req + missing.length - reqPass} exit=${rc} wall=${(Number(wallMs) / 1000).toFixed(2)}`].join('\t'));
process.stdout.write(lines.join('\n') + '\n');
if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify(doc, null, 2) + '\n');
EOF

header="# official-suite $VERSION url=$url node=$node_label args=${suite_args[*]}"
"$NODE" "$tmp/report.mjs" "$checks_dir" "$req_file" "$tmp/stdout.txt" "$tmp/stderr.txt" \
  "$json_out" "$checks_mode" "$header" "$rc" "$wall"
if [ "$rc" -eq 137 ]; then rc=124; fi
exit "$rc"
