# The deals service image: one image for the API, the worker and the operator CLI
# (docker-compose.yml picks the entry point). See docs/distributed-mode.md.

# The Node.js image both stages start from; deploy/offline/make-images.sh makes one where no
# registry answers (`--build-arg BASE=deals-node:24`). Node.js 24, the version .node-version names.
ARG BASE=node:24-bookworm-slim

# ---- build: compile TypeScript and the native better-sqlite3 addon -------------------------------
FROM ${BASE} AS build
# better-sqlite3 falls back to compiling from source (node-gyp) when its prebuilt binary cannot be
# downloaded; node-gyp needs Python 3, make and a C++ compiler.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# `npm install`, not `npm ci`: the lockfile is written where the registry lacks some other-platform
# optional binaries, so `npm ci` refuses it.
# `npm ls` fails the build on anything missing: npm has been seen to exit 0 after an install cut
# short (a registry certificate it does not trust).
RUN npm install --no-audit --no-fund && npm ls --depth=0 >/dev/null
COPY . .
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# ---- runtime ---------------------------------------------------------------------------------------
FROM ${BASE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# /data holds the self-signed TLS certificate (/data/tls) and demo-partner.json; it must belong to
# the unprivileged user before VOLUME so that a new named volume starts out writable by it.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 3000
# The API by default; docker-compose.yml sets the worker's and the CLI's commands.
CMD ["node", "dist/apps/api/src/main.js"]
