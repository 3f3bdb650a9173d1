# The mcp-eval action image. Releases publish it to ghcr.io and action.yml
# pins it by digest; `image: Dockerfile` is for development only.
#
# GitHub's rules for action images: run as root (no USER, or the action
# cannot write the mounted workspace), no WORKDIR (the runner mounts the
# workspace and sets the working directory), an exec-form ENTRYPOINT with an
# absolute path. No shell wrapper either: Debian's /bin/sh (dash) drops the
# INPUT_SERVER-URL style variables the runner sets.

# Builder: cross-compiles on the build machine's own platform, so a
# multi-arch build does not emulate the Go toolchain.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
# BuildKit fills these from --platform (linux/arm64 -> linux, arm64) only
# when they are declared without a default: a default would win and every
# platform would get the same binary.
ARG TARGETOS
ARG TARGETARCH
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w" -o /out/mcp-eval ./cmd/mcp-eval

# Final: Debian slim with node and python3, so stdio servers written in
# JavaScript or Python in the workspace can run inside the action. Trixie
# ships Node.js 20 and Python 3.13; ca-certificates for https endpoints and
# api.github.com. Only what a stdio server runs on is kept (every job pulls
# this image; docs/action.md "Image size" has the measurements): no npm, no
# recommends, no apt lists or package cache, no docs, no bytecode caches
# (Python compiles in memory; the server's uid 65534 could not write them
# anyway), no corepack, TypeScript typings, Python test modules or openssl
# CLI. A server that needs more (npm install, a virtualenv, another
# runtime) is the host action's job.
FROM debian:trixie-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates nodejs python3 \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/cache/debconf/*-old /var/lib/dpkg/*-old /var/log/*.log /var/log/apt \
    /usr/share/man/* /usr/share/info/* /usr/share/locale/* /usr/share/lintian \
    /usr/bin/corepack /usr/share/nodejs/corepack /usr/share/nodejs/@types /usr/share/nodejs/undici-types \
    /usr/lib/python3.*/test /usr/lib/python3.*/idlelib /usr/lib/python3.*/turtledemo /usr/lib/python3.*/pydoc_data \
    /usr/lib/python3.*/lib-dynload/_test*.so /usr/lib/python3.*/lib-dynload/_ctypes_test*.so \
    /usr/lib/python3.*/lib-dynload/_xxtestfuzz*.so /usr/lib/python3.*/lib-dynload/xx*.so \
    /usr/bin/openssl \
 && find /usr/share/doc -mindepth 2 ! -name copyright ! -type d -delete \
 && find /usr/lib/python3* -name __pycache__ -type d -prune -exec rm -rf {} + \
 && node -e 'JSON.parse("{}")' && python3 -B -c 'import json, asyncio, ssl'
COPY --from=build /out/mcp-eval /usr/local/bin/mcp-eval
LABEL org.opencontainers.image.source="https://github.com/mcp-eval/mcp-eval-action" \
      org.opencontainers.image.description="mcp-eval: tests MCP servers in CI"
ENTRYPOINT ["/usr/local/bin/mcp-eval"]
