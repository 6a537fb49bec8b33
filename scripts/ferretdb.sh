#!/usr/bin/env bash
# FerretDB (MongoDB's wire protocol over SQLite or PostgreSQL): the views' MongoDB adapter on a real
# server, for the tests and for trying the mode by hand.
#   scripts/ferretdb.sh build    builds it once, prints the binary's path
#   scripts/ferretdb.sh start [--sqlite <dir> | --postgresql <url>]
#     starts it on a free loopback port, on SQLite in a temporary folder (removed when it stops)
#     unless told otherwise, telemetry off; once it accepts connections prints
#     `MONGO_URL=mongodb://127.0.0.1:<port>/` on stdout and stays in the foreground (its log on
#     stderr) until interrupted or sent SIGTERM. FERRETDB_* variables set its other flags.
# Built with Go at FERRETDB_VERSION into node_modules/.cache/ferretdb/<version> (FERRETDB_CACHE: another
# folder). Without Go or that build: one line saying so, status 3 (skipped).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
FERRETDB_VERSION=v1.24.2
module=github.com/FerretDB/FerretDB
cache="${FERRETDB_CACHE:-$root/node_modules/.cache/ferretdb}/$FERRETDB_VERSION"
ferretdb="$cache/ferretdb"

usage() {
  sed -n '4,9s/^# \{0,1\}//p' "$0" >&2
  exit 2
}

# `go install $module/cmd/ferretdb@<version>` builds a binary that panics at its start: the module
# lacks build/version/version.txt, which its release builds generate. So the module's source is
# copied, given that file, and built as the main module (its own go.sum).
build() {
  [ ! -x "$ferretdb" ] || return 0
  local go
  go="$(command -v go || true)"
  [ -n "$go" ] || [ ! -x /usr/local/go/bin/go ] || go=/usr/local/go/bin/go
  if [ -z "$go" ]; then
    echo "FerretDB cannot be built: Go is not installed (FerretDB $FERRETDB_VERSION is built with it)"
    exit 3
  fi
  mkdir -p "$cache"
  # One build at a time (test workers may ask together): the others wait, then find it built.
  (
    flock 9
    [ ! -x "$ferretdb" ] || exit 0
    dir="$("$go" mod download -json "$module@$FERRETDB_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
    [ -d "$dir" ] || { echo "FerretDB $FERRETDB_VERSION: go mod download named no source folder" >&2; exit 1; }
    src="$(mktemp -d "${TMPDIR:-/tmp}/ferretdb-src-XXXXXX")"
    trap 'rm -rf "$src"' EXIT
    cp -R "$dir/." "$src"
    chmod -R u+w "$src"
    echo "$FERRETDB_VERSION" >"$src/build/version/version.txt"
    cd "$src"
    GOFLAGS="-trimpath -buildvcs=false" "$go" build -o "$cache/ferretdb.part" ./cmd/ferretdb >&2
    mv "$cache/ferretdb.part" "$ferretdb"
  ) 9>"$cache/.build.lock"
}

start() {
  backend=(--handler=sqlite) sqlite="" temp="" server="" log=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --sqlite) [ $# -ge 2 ] || usage; sqlite="$2"; shift 2 ;;
      --postgresql) [ $# -ge 2 ] || usage; backend=(--handler=postgresql "--postgresql-url=$2"); shift 2 ;;
      *) usage ;;
    esac
  done
  build
  temp="$(mktemp -d "${TMPDIR:-/tmp}/ferretdb-XXXXXX")"
  if [ "${backend[0]}" = --handler=sqlite ]; then
    [ -n "$sqlite" ] || sqlite="$temp/data"
    mkdir -p "$sqlite"
    # A directory URI (one file per database), ending in a slash.
    backend+=("--sqlite-url=file:$(cd "$sqlite" && pwd)/")
  fi
  stop() {
    trap - EXIT INT TERM
    if [ -n "$server" ]; then kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    if [ -n "$log" ]; then wait "$log" 2>/dev/null || true; fi
    rm -rf "$temp"
  }
  trap stop EXIT
  trap 'exit 0' INT TERM
  mkfifo "$temp/log"
  # Port 0: the OS picks a free one, which FerretDB's log names. No state folder (it keeps only
  # telemetry's), no debug HTTP listener (a fixed port, 8088, by default).
  "$ferretdb" "${backend[@]}" --listen-addr=127.0.0.1:0 --debug-addr=- --state-dir=- --telemetry=disable \
    --log-format=text 2>"$temp/log" &
  server=$!
  exec 4<"$temp/log"
  local line address=""
  while IFS= read -r -t 120 -u 4 line; do
    echo "$line" >&2
    if [[ $line =~ Listening\ on\ TCP\ (127\.0\.0\.1:[0-9]+) ]]; then address="${BASH_REMATCH[1]}"; break; fi
  done
  [ -n "$address" ] || { echo "FerretDB did not start listening" >&2; exit 1; }
  # Bound: a connection now is accepted.
  exec 5<>"/dev/tcp/${address%:*}/${address#*:}"
  exec 5>&-
  # The rest of its log, read on so that it never blocks writing it.
  cat <&4 >&2 &
  log=$!
  echo "MONGO_URL=mongodb://$address/"
  wait "$server"
}

case "${1:-}" in
  build) build; echo "$ferretdb" ;;
  start) shift; start "$@" ;;
  *) usage ;;
esac
