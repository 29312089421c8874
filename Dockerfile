# rt in a container: `docker build -t rt . && docker run -p 9481:9481 rt`
# Override any setting with RT__* variables, e.g. `-e RT__HTTP__PORT=8123 -p 8123:8123`.
# Serve your own components by mounting them and pointing RT__REPO_URLS at them:
#   docker run -v $PWD/components:/components -e RT__REPO_URLS=file:///components -p 9481:9481 rt

# --- build: compile TypeScript and the bundled examples ---------------------------
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY lib lib
COPY console console
COPY bin bin
COPY examples examples
COPY test test
COPY bench bench
# npm ci runs `prepare` (tsc, and the console's bundle into dist/console); the
# examples need componentize-js, a dev dependency.
RUN npm ci && node dist/examples/build.js

# --- runtime: production dependencies only ---------------------------------------
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would run tsc, which is a dev dependency; dist/ comes from the build stage.
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist/lib dist/lib
COPY --from=build /app/dist/console dist/console
COPY --from=build /app/examples/build examples/build
COPY bin bin
COPY rt rt
# Transpiled components are cached here; mount a volume to keep them across containers.
ENV XDG_CACHE_HOME=/var/cache
# Configurations sent in restart bodies are kept here (and the generated TLS pair):
# mount a volume for them to outlive the container.
ENV XDG_DATA_HOME=/var/lib
EXPOSE 9481
# The primary forwards SIGTERM to the workers and exits 0 once they drained.
CMD ["node", "bin/rt.js", "start"]
