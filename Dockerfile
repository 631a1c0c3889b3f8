# terdut's two images, one file: `--target server` (terdut-server) and
# `--target operator` (terdut-operator).
#
#   docker build --target server   -t terdut-server:local   .
#   docker build --target operator -t terdut-operator:local .
#
# BASE is any Debian-like image with Node 24 and npm at /usr/local/bin; CI
# passes one it assembles locally (.ci/images), everyone else gets the
# official one. VERSION is the release (package.json's "version"; CI passes
# it, and test/release/versions.test.ts checks this default agrees).
ARG BASE=node:24-trixie-slim

# --- package manifests only, so the dependency layers below stay cached
# --- while the source changes.
FROM ${BASE} AS manifests
WORKDIR /src
COPY . .
RUN mkdir -p /out \
 && cp package.json package-lock.json /out/ \
 && for dir in packages/*/ test/support/; do mkdir -p "/out/$dir" && cp "$dir/package.json" "/out/$dir"; done

# --- production dependencies of one workspace each. npm nests some
# --- packages under packages/<workspace>/node_modules (ajv@8 for the
# --- server), so the final stages copy the whole /app tree, not only the
# --- root node_modules.
FROM ${BASE} AS deps-server
WORKDIR /app
COPY --from=manifests /out/ ./
RUN npm ci --omit=dev --workspace @terdut/server --ignore-scripts --no-audit --no-fund \
 && rm -rf /root/.npm

FROM ${BASE} AS deps-operator
WORKDIR /app
COPY --from=manifests /out/ ./
RUN npm ci --omit=dev --workspace @terdut/operator --ignore-scripts --no-audit --no-fund \
 && rm -rf /root/.npm

# --- the source, built: the web app's static assets and the server's
# --- JavaScript (`npm run build`; both need the dev dependencies: esbuild,
# --- TypeScript), then tests and dependencies removed.
FROM ${BASE} AS build
WORKDIR /src
COPY . .
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm run build \
 && rm -rf node_modules packages/*/node_modules /root/.npm \
 && find packages -name '*.test.ts' -delete

# --- terdut-server
FROM ${BASE} AS server
ARG VERSION=0.1.0
ARG SOURCE=https://github.com/ryuvia/terdut
# No licence has been chosen for terdut yet; change this with the LICENSE file.
ARG LICENSES=UNLICENSED
LABEL org.opencontainers.image.title="terdut-server" \
      org.opencontainers.image.description="On-call and incident manager for Prometheus teams" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="${LICENSES}"
WORKDIR /app
COPY --from=deps-server /app /app
COPY --from=build /src/package.json /app/package.json
COPY --from=build /src/packages /app/packages
# The server runs as built (packages/server/dist, packages/contract/dist),
# through packages/server/bin/terdut-server, which holds its Node flags; the
# TypeScript sources stay out. `terdut-server` on PATH, for `kubectl exec …
# -- terdut-server admin recover`.
RUN rm -rf /app/packages/operator /app/packages/server/src /app/packages/contract/src /app/packages/web/src \
 && ln -s /app/packages/server/bin/terdut-server /usr/local/bin/terdut-server \
 && mkdir -p /var/lib/terdut \
 && chown 10001:10001 /var/lib/terdut
# The root file system may be read-only. The embedded database (PGlite) lives
# in /var/lib/terdut, a volume (a PersistentVolume on Kubernetes); temporary
# files go to /tmp, which needs a tmpfs or an emptyDir (podman --read-only
# mounts one by itself; the operator's pod template mounts an emptyDir).
# With DATABASE_URL set, only /tmp is written to.
# glibc's allocator settings (MALLOC_MMAP_THRESHOLD_, MALLOC_ARENA_MAX) are
# set by the entrypoint, packages/server/bin/terdut-server, with why.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    TERDUT_DATA_DIR=/var/lib/terdut
VOLUME ["/var/lib/terdut"]
USER 10001:10001
EXPOSE 8080
# The server finishes requests in flight and closes the database on SIGTERM, then exits 0.
STOPSIGNAL SIGTERM
# The Node flags (heap limits, the built contract) are in
# packages/server/bin/terdut-server, with why; TERDUT_NODE_FLAGS adds to them.
ENTRYPOINT ["/app/packages/server/bin/terdut-server"]
CMD ["serve"]

# --- terdut-operator
FROM ${BASE} AS operator
ARG VERSION=0.1.0
ARG SOURCE=https://github.com/ryuvia/terdut
ARG LICENSES=UNLICENSED
LABEL org.opencontainers.image.title="terdut-operator" \
      org.opencontainers.image.description="Kubernetes operator that runs and bootstraps terdut-server" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="${LICENSES}"
WORKDIR /app
COPY --from=deps-operator /app /app
COPY --from=build /src/package.json /app/package.json
COPY --from=build /src/packages/operator /app/packages/operator
COPY --from=build /src/packages/client /app/packages/client
RUN printf '#!/bin/sh\nexec node /app/packages/operator/src/main.ts "$@"\n' >/usr/local/bin/terdut-operator \
 && chmod 0755 /usr/local/bin/terdut-operator
ENV NODE_ENV=production
# Writes nothing to disk: runs with a read-only root file system as it is.
USER 10001:10001
EXPOSE 8080 8081
# Finishes reconciles in flight and releases the leader Lease on SIGTERM, then exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "packages/operator/src/main.ts"]
