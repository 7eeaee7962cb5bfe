# Container image of the mudm-tiles CLI: built and packed in one stage, installed from the packed tarball in a slim one.
# docker build -t mudm-tiles:latest .
# docker run --rm -v "$PWD:/data" mudm-tiles:latest build sample-data/slide -o out

FROM node:20-bookworm-slim AS build
WORKDIR /src
# Dependencies first: this layer is reused while only sources change. --ignore-scripts: the package's own
# `prepare` (tsc) would run before the sources are copied; compiling needs no dependency's install script.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
# The runtime gets exactly what `npm pack` ships (package.json "files"), as users installing from npm do: a
# file missing from "files" fails here and in test/e2e/container.test.ts, not in production.
# --ignore-scripts: `prepare` would run tsc a second time.
RUN npm run build \
 && mkdir /pkg \
 && npm pack --ignore-scripts --pack-destination /pkg \
 && cp package-lock.json /pkg/

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /pkg/ /tmp/pkg/
# The tarball unpacked in /app with the project's lockfile, then `npm ci --omit=dev`: the exact dependency
# versions the tests ran with (sharp's linux prebuilt binaries come as its @img/* optional packages), no dev tools.
# npm runs the root package's `prepare` (tsc) on `npm ci`; dist/ is already built and tsc is a dev tool: dropped.
RUN tar -xzf /tmp/pkg/mudm-tiles-*.tgz --strip-components=1 -C /app \
 && cp /tmp/pkg/package-lock.json /app/ \
 && npm pkg delete scripts.prepare \
 && npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force \
 && rm -rf /tmp/pkg \
 && printf '#!/bin/sh\nexec node /app/bin/mudm-tiles.js "$@"\n' > /usr/local/bin/mudm-tiles \
 && chmod 755 /usr/local/bin/mudm-tiles \
 && mkdir -p /data \
 && chown node:node /data \
 && node -e "require('sharp')" \
 && mudm-tiles --help > /dev/null

# The image's own unprivileged user (uid 1000): pods set runAsUser 1000 and fsGroup 1000 to match.
USER node
WORKDIR /data
VOLUME /data
ENTRYPOINT ["mudm-tiles"]
CMD ["--help"]
