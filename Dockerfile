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
# api.github.com.
FROM debian:trixie-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates nodejs python3 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/mcp-eval /usr/local/bin/mcp-eval
LABEL org.opencontainers.image.source="https://github.com/mcp-eval/mcp-eval-action" \
      org.opencontainers.image.description="mcp-eval: tests MCP servers in CI"
ENTRYPOINT ["/usr/local/bin/mcp-eval"]
