# syntax=docker/dockerfile:1
#
# scim-audit-sync image: the daemon compiled to JavaScript, production dependencies only,
# Node 24, a numeric non-root user, nothing writable needed but /tmp.
#
#   docker build --build-arg VERSION=0.1.0 --build-arg REVISION=$(git rev-parse HEAD) -t scim-audit-sync:0.1.0 .
#
# Pin NODE_IMAGE by digest in your pipeline (node:24-bookworm-slim@sha256:…) for reproducible builds.
ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: all dependencies, TypeScript → dist/, then drop the dev dependencies ----------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Dependencies first, so source edits do not invalidate the npm layer.
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm \
    npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY bin ./bin
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# ---- runtime ---------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="scim-audit-sync" \
      org.opencontainers.image.description="SCIM 2.0 provisioning and exactly-once audit-log export into SIEM sinks for the hosted analytics platform" \
      org.opencontainers.image.source="https://github.com/example/scim-audit-sync" \
      org.opencontainers.image.documentation="https://github.com/example/scim-audit-sync/blob/main/docs/kubernetes.md" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"

# The daemon never runs npm, yarn or corepack: remove them (and what scanners flag in them),
# and add the numeric user the daemon runs as.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
           /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /opt/yarn-* \
           /usr/local/bin/yarn /usr/local/bin/yarnpkg \
 && groupadd --system --gid 10001 scimsync \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
           --shell /usr/sbin/nologin scimsync

# NODE_ENV=production for the libraries that read it; TMPDIR is the only path written to
# (an emptyDir in Kubernetes, so the root filesystem can stay read-only). No V8, Node or malloc
# tuning: Node sizes its heap from the container's memory limit, and the memory a run needs is
# the data structures' (docs/reconcile.md#memory, docs/audit.md#performance).
ENV NODE_ENV=production \
    TMPDIR=/tmp

WORKDIR /app
# Owned by root and read-only for the daemon's user: it cannot modify its own code.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin

USER 10001:10001
EXPOSE 9464
# node is PID 1 and receives SIGTERM itself (no shell, no npm in between); the daemon
# handles it: stop taking jobs, finish within daemon.shutdownTimeoutSeconds, close.
ENTRYPOINT []
CMD ["node", "bin/scim-audit-sync.mjs", "daemon", "--config", "/etc/scim-audit-sync/config.yaml"]
