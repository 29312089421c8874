# rt in a container: `docker build -t rt . && docker run -p 9481:9481 rt`.
# docs/deployment.md, "Docker", has the rest: your own components in
# /components, RT__* settings, the cache and data volumes, the health check.
#
# test/e2e/production-install.test.ts runs this file's runtime stage outside
# Docker (docker/install-runtime.sh, its ENV, CMD and HEALTHCHECK): keep the
# two in step.

# The image runs on Node's Active LTS line (26, on Debian 13 "trixie").
# docs/deployment.md, "Node.js lines", says how to move to the next one: both
# stages name it, and they must name the same.

# --- build: compile what ships, build the bundled examples, pack ------------------
FROM node:26-trixie-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would compile the tests and benchmarks too.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.image.json ./
COPY lib lib
COPY console console
COPY bin bin
COPY examples examples
# tsconfig.image.json: lib/ and examples/ only; build:console bundles the
# console into dist/console (esbuild, a dev dependency). The examples are
# built with examples/builder.ts (componentize-js, a dev dependency),
# which package.json's `files` leave out of the package (dist/examples/),
# as they leave out everything but the runtime.
RUN npx tsc -p tsconfig.image.json \
 && npm run build:console \
 && node dist/examples/build.js \
 && npm pack --ignore-scripts --pack-destination /tmp \
 && mv /tmp/rt-*.tgz /tmp/rt.tgz

# --- runtime: the package and its production dependencies --------------------------
FROM node:26-trixie-slim
ENV NODE_ENV=production
COPY --from=build /tmp/rt.tgz /tmp/rt.tgz
COPY package-lock.json docker/install-runtime.sh /tmp/
# The app and the components belong to root (read-only to rt); the cache and
# data directories to the user rt runs as.
RUN sh /tmp/install-runtime.sh /tmp/rt.tgz /tmp/package-lock.json /app /components \
 && npm cache clean --force \
 && rm /tmp/rt.tgz /tmp/package-lock.json /tmp/install-runtime.sh \
 && mkdir -p /var/cache/rt /var/lib/rt \
 && chown node:node /var/cache/rt /var/lib/rt
WORKDIR /app
# Configuration only through RT__* variables (no rt/config.toml in /app). The
# bundled examples are in /components: mount your own components over it, or
# point RT__REPO_URLS elsewhere.
ENV RT__REPO_URLS=file:///components
# Transpiled components (cached by content hash), and restart configurations
# with the generated TLS pair: volumes, to outlive the container.
ENV RT_CACHE_DIR=/var/cache/rt
ENV RT_DATA_DIR=/var/lib/rt
VOLUME ["/var/cache/rt", "/var/lib/rt"]
USER node
EXPOSE 9481
# Liveness: /api/health answers while the components compile (the first start
# transpiles each JavaScript component, ~10 s each); readiness is /api/ready.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["node", "bin/healthcheck.js"]
# The primary forwards SIGTERM to the workers and exits 0 once they drained.
CMD ["node", "bin/rt.js", "start"]
