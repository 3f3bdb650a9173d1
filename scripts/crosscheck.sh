#!/usr/bin/env bash
# Re-run the cross-check of mcp-eval's Layer 0 against the official MCP conformance suite and
# regenerate the tables of docs/conformance-crosscheck.md (the sections between
# <!-- crosscheck:begin NAME --> and <!-- crosscheck:end NAME --> markers).
#
#   bash scripts/crosscheck.sh                       # every target and every HTTP mutant (~20 min on 2 cores)
#   bash scripts/crosscheck.sh -mutants=false        # the four targets only (~4 min)
#   bash scripts/crosscheck.sh -targets example,ts -mutant-ids TOOL-2,VER-3
#   bash scripts/crosscheck.sh -from .cache/crosscheck   # re-render from the last run's outputs
#
# It installs what it needs (scripts/setup-interop.sh for the ts/go-sdk/mcp-go fixtures,
# scripts/official-suite.sh --install-only for the pinned suite), then runs
# `go run ./internal/crosscheck` with the given flags. Raw outputs of both tools stay in
# .cache/crosscheck (git-ignored). The mapping of official checks to our ids is
# internal/crosscheck/mapping.tsv; every verdict is computed from the outputs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
case " $* " in
  *" -from "*|*" --from "*|*" -from="*|*" --from="*) ;;
  *)
    bash scripts/setup-interop.sh >&2
    bash scripts/official-suite.sh --install-only
    ;;
esac
exec go run ./internal/crosscheck "$@"
