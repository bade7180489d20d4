# The Student Information service as a container image (docs/deploying.md).
#   docker build -t sis .      (or: podman build --format docker -t sis .)
#   docker run -p 8080:8080 -v sis-data:/data sis
# Two stages on the one Node base: the first compiles the TypeScript (npm and the dev
# dependencies); the second has Node, the compiled service and its production dependencies only.
# Nothing native is built: SQLite is Node's own (node:sqlite), so no compiler, make or Python.
# Node 24 LTS (maintained until April 2028); the README names the other Node versions tested.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV npm_config_fund=false \
    npm_config_audit=false \
    npm_config_update_notifier=false
# Only for a build behind a TLS-intercepting proxy: the CA bundle to trust (mounted at build time).
ARG NODE_EXTRA_CA_CERTS
COPY package.json package-lock.json ./
# No dependency has an install script, and package.json's allowScripts approves none: a dependency
# that brings one fails the build (the strict rebuild) instead of running it. The repository's own
# prepare (the whole build, tests included) is skipped: the service is compiled below. npm before
# 11.16 would ignore the flag and run every script, so it stops the build instead.
RUN if [ "$(npm config get strict-allow-scripts)" = "undefined" ]; then \
      echo "npm $(npm -v) predates allowScripts (11.16): use a newer base image" >&2; exit 1; fi \
  && npm ci --ignore-scripts && npm rebuild --strict-allow-scripts
COPY tsconfig.json ./
COPY src ./src
# The service only (the repository's tsconfig also compiles the tests and benchmarks).
RUN printf '{ "extends": "./tsconfig.json", "include": ["src"] }\n' > tsconfig.image.json \
  && npx tsc -p tsconfig.image.json \
  && npm prune --omit=dev

FROM ${NODE_IMAGE}
# No npm at run time: the service starts with node itself.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/include/node \
  && mkdir /data && chown node:node /data
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json ./
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist/src ./dist/src
# SQLite in the volume; JSON logs; a stop that fits the 10 s a container runtime waits by default
# (requests still running after 8 s are cut; raise both with docker stop -t / terminationGracePeriodSeconds).
# NODE_OPTIONS: V8's young generation capped as `npm start` caps it (scripts/start.js, measured in
# bench/RESULTS.md); no heap limit, so Node sizes the heap from the container's memory limit. A
# NODE_OPTIONS given to `docker run -e` replaces this one (docs/operations.md, "Memory").
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=16 \
    PORT=8080 \
    SIS_DATABASE_URL=sqlite:/data/sis.db \
    SIS_LOG_FORMAT=json \
    SIS_SHUTDOWN_GRACE_MS=2000 \
    SIS_SHUTDOWN_TIMEOUT_MS=8000
USER node
VOLUME /data
EXPOSE 8080
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: SIGTERM reaches node itself, which stops gracefully (and exits 0).
ENTRYPOINT ["node", "dist/src/cli/main.js"]
CMD ["serve"]
