#!/usr/bin/env bash
# tests/jaeger/jaeger.sh: Jaeger (all-in-one, in-memory storage) for the trace tests,
# built here from the Go module proxy (github.com/jaegertracing/jaeger, cmd/jaeger).
#   build        build the binary once into the cache (reused when present)
#   path         print the binary's path (exit 1 when it is not built)
# The tests start it themselves on 127.0.0.1 (tests/e2e/test_trace.c) and
# stop it after; nothing of Jaeger is in the repository.
set -euo pipefail

JAEGER_VERSION=v1.75.0
CACHE_ROOT=${FORGE_JAEGER_CACHE_ROOT:-${FORGE_K8S_CACHE_ROOT:-/var/cache/forge-review}}
CACHE=$CACHE_ROOT/jaeger-$JAEGER_VERSION
BIN=$CACHE/bin/jaeger
GO=${GO:-/usr/local/go/bin/go}

die() { echo "jaeger.sh: $*" >&2; exit 1; }
say() { echo "jaeger.sh: $*" >&2; }

present() { [ -f "$CACHE/bin/.complete" ] && [ -x "$BIN" ]; }

# shellcheck source=tests/go_cache.sh
. "$(dirname "${BASH_SOURCE[0]}")/../go_cache.sh"

build_jaeger() {
    local src=$CACHE/src t0=$SECONDS
    rm -rf "$src" "$CACHE/bin"; mkdir -p "$src" "$CACHE/bin"
    # A throwaway module whose one tool is jaeger (go get -tool, as the module list says).
    (cd "$src" && "$GO" mod init forge-review/jaeger-build >/dev/null 2>&1) || die "go mod init failed"
    say "go get -tool github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION"
    (cd "$src" && nice -n 19 "$GO" get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION") ||
        die "go get failed (is the Go module proxy reachable? GOPROXY=$("$GO" env GOPROXY))"
    say "go build of cmd/jaeger (several minutes of CPU)"
    (cd "$src" && nice -n 19 "$GO" build -trimpath -ldflags '-s -w' -o "$BIN" github.com/jaegertracing/jaeger/cmd/jaeger) ||
        die "go build failed (see above)"
    touch "$CACHE/bin/.complete"
    say "built jaeger $JAEGER_VERSION into $BIN in $((SECONDS - t0)) s"
}

case ${1:-} in
    build) go_cached_build jaeger present build_jaeger ;;
    path) present || exit 1; echo "$BIN" ;;
    *) die "usage: jaeger.sh build|path" ;;
esac
