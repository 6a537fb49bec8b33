#!/usr/bin/env bash
# Fails (status 1) when openapi.json breaks a client of the last release: oasdiff's breaking-change
# checks of `current` against `base` (by default the newest api/releases/openapi-<version>.json),
# failing on its errors. api/oasdiff-levels.txt raises to errors what oasdiff rates lower and our
# policy counts as breaking (docs/api.md, "Versions"); the changes accepted against that release,
# each with its reason, are in api/releases/openapi-<version>.accepted.md.
#   scripts/check-api-compatibility.sh [base.json [current.json]]
# oasdiff is built once with Go, at OASDIFF_VERSION, into node_modules/.cache/oasdiff/<version>
# (OASDIFF_CACHE: another folder). Without Go or that build: one line saying so, status 3 (skipped).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
OASDIFF_VERSION=v1.38.0
cache="${OASDIFF_CACHE:-$root/node_modules/.cache/oasdiff}/$OASDIFF_VERSION"
oasdiff="$cache/oasdiff"
base="${1:-$(ls "$root"/api/releases/openapi-*.json | sort -V | tail -n 1)}"
current="${2:-$root/openapi.json}"

if [ ! -x "$oasdiff" ]; then
  go="$(command -v go || true)"
  [ -n "$go" ] || [ ! -x /usr/local/go/bin/go ] || go=/usr/local/go/bin/go
  if [ -z "$go" ]; then
    echo "API compatibility check skipped: Go is not installed (oasdiff $OASDIFF_VERSION is built with it)"
    exit 3
  fi
  mkdir -p "$cache"
  GOBIN="$cache" GOFLAGS=-trimpath "$go" install "github.com/oasdiff/oasdiff@$OASDIFF_VERSION" >&2
fi

args=(breaking --fail-on ERR --severity-levels "$root/api/oasdiff-levels.txt")
accepted="${base%.json}.accepted.md"
if [ -f "$accepted" ]; then args+=(--err-ignore "$accepted"); fi
"$oasdiff" "${args[@]}" "$base" "$current"
