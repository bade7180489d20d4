# The Student Information service as a container image (docs/deploying.md).
#   docker build -t sis .      (or: podman build --format docker -t sis .)
#   docker run -p 8080:8080 -v sis-data:/data sis
# Two stages: the first compiles TypeScript and better-sqlite3's native module (python3, make,
# g++, npm); the second has Node, the compiled service and its production dependencies only.
# Node 24 LTS (maintained until April 2028); the README names the other Node versions tested.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# better-sqlite3 is compiled here against the image's own Node headers (no download of headers
# or of a prebuilt binary: the image's Node is the one it will run on), with node::ObjectWrap as
# before Node 24.19: since then its header makes better-sqlite3 12 abort the process when a
# statement is garbage-collected outside JavaScript (deploy/container/node-headers.sh says why).
COPY deploy/container/node-headers.sh /usr/local/share/sis/
RUN sh /usr/local/share/sis/node-headers.sh /usr/local /opt/node-headers
ENV npm_config_nodedir=/opt/node-headers \
    npm_config_build_from_source=true \
    npm_config_fund=false \
    npm_config_audit=false \
    npm_config_update_notifier=false
# Only for a build behind a TLS-intercepting proxy: the CA bundle to trust (mounted at build time).
ARG NODE_EXTRA_CA_CERTS
COPY package.json package-lock.json ./
# Dependencies' install scripts run only where package.json's allowScripts approves them (pinned
# versions; today better-sqlite3's alone): an unreviewed one fails the build. The repository's own
# prepare (the whole build, tests included) is skipped: the service is compiled below. npm before
# 11.16 would ignore the flag and run every script, so it stops the build instead.
RUN if [ "$(npm config get strict-allow-scripts)" = "undefined" ]; then \
      echo "npm $(npm -v) predates allowScripts (11.16): use a newer base image" >&2; exit 1; fi \
  && npm ci --ignore-scripts && npm rebuild --strict-allow-scripts \
  && if nm -D node_modules/better-sqlite3/build/Release/better_sqlite3.node | grep -q RemoveEnvironmentCleanupHook; \
     then echo "better-sqlite3 was compiled with ObjectWrap's cleanup hook (see node-headers.sh)" >&2; exit 1; fi
COPY tsconfig.json ./
COPY src ./src
# The service only (the repository's tsconfig also compiles the tests and benchmarks).
RUN printf '{ "extends": "./tsconfig.json", "include": ["src"] }\n' > tsconfig.image.json \
  && npx tsc -p tsconfig.image.json \
  && npm prune --omit=dev \
  && cd node_modules/better-sqlite3 \
  && mv build/Release/better_sqlite3.node . && rm -rf build deps src \
  && mkdir -p build/Release && mv better_sqlite3.node build/Release/

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
ENV NODE_ENV=production \
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
