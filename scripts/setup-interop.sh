#!/usr/bin/env bash
# Install the third-party MCP servers and build the fixture servers used by the
# interop tests (internal/interop). Idempotent: a target whose inputs did not change
# since the last successful run is skipped. Prints one line per target.
#
#   bash scripts/setup-interop.sh
#
# Needs node (>= 20) + npm, go, and access to the npm registry and the Go module proxy.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
INTEROP=$ROOT/interop

log_file=$(mktemp)
trap 'rm -f "$log_file"' EXIT

now_ms() { date +%s%3N; }

# report LABEL ACTION START_MS
report() { printf '%-22s %-11s %6d ms\n' "$1" "$2" "$(($(now_ms) - $3))"; }

# hash_inputs FILE... -> one sha256 over the files' contents and the given tool version
hash_inputs() {
  local tool_version=$1
  shift
  { printf '%s\n' "$tool_version"; for f in "$@"; do printf '%s\n' "$f"; cat "$f"; done; } | sha256sum | cut -d' ' -f1
}

# run_logged CMD... : run a command, show its output only if it fails
run_logged() {
  if ! "$@" >"$log_file" 2>&1; then
    echo "FAIL: $* (in $(pwd))" >&2
    cat "$log_file" >&2
    exit 1
  fi
}

setup_npm() {
  local name=$1 dir=$INTEROP/$1 start inputs stamp_file want action
  start=$(now_ms)
  cd "$dir"
  inputs=(package.json)
  [[ -f package-lock.json ]] && inputs+=(package-lock.json)
  want=$(hash_inputs "node $(node --version)" "${inputs[@]}")
  stamp_file=node_modules/.interop-stamp
  if [[ -d node_modules && -f $stamp_file && "$(cat "$stamp_file")" == "$want" ]]; then
    action="up to date"
  else
    if [[ -f package-lock.json ]]; then
      run_logged npm ci --no-audit --no-fund
      action="npm ci"
    else
      run_logged npm install --no-audit --no-fund
      action="npm install"
      want=$(hash_inputs "node $(node --version)" package.json package-lock.json)
    fi
    echo "$want" >"$stamp_file"
  fi
  report "interop/$name" "$action" "$start"
  cd "$ROOT"
}

setup_go() {
  local start want stamp_file action bin pkg
  cd "$INTEROP/go"
  mkdir -p "$INTEROP/bin"
  local -a inputs
  mapfile -t inputs < <(find . -name '*.go' -o -name go.mod -o -name go.sum | LC_ALL=C sort)
  want=$(hash_inputs "$(go version)" "${inputs[@]}")
  for pair in gosdk-srv:./gosdk mcpgo-srv:./mcpgo; do
    bin=${pair%%:*}
    pkg=${pair#*:}
    stamp_file=$INTEROP/bin/.$bin.stamp
    start=$(now_ms)
    if [[ -x $INTEROP/bin/$bin && -f $stamp_file && "$(cat "$stamp_file")" == "$want" ]]; then
      action="up to date"
    else
      GOWORK=off GOFLAGS=-mod=readonly run_logged go build -buildvcs=false -o "$INTEROP/bin/$bin" "$pkg"
      echo "$want" >"$stamp_file"
      action="go build"
    fi
    report "interop/bin/$bin" "$action" "$start"
  done
  cd "$ROOT"
}

setup_npm ts
setup_npm legacy
setup_npm tokenizer
setup_npm gfm
setup_go
