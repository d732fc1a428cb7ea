# tests/go_cache.sh: sourced by tests/jaeger/jaeger.sh and tests/kubernetes/cluster.sh,
# which build Go programs once into a cache shared by every checkout of the machine.
# The sourcing script sets CACHE_ROOT (the Go module and build caches live in it),
# CACHE (its own directory), BIN (what it names in its messages), GO, and defines
# die and say.

# Go for a static build from the module proxy, with the caches under CACHE_ROOT.
go_env() {
    export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
    export GOMODCACHE=$CACHE_ROOT/go/mod GOCACHE=$CACHE_ROOT/go/build
}

# go_cached_build WHAT PRESENT BUILD: runs BUILD (a function) unless PRESENT (a
# function) says the cache already holds WHAT. Builds hold $CACHE.lock (flock on
# fd 9, kept until the script exits), so a second build waiting for the first
# finds the cache filled and reuses it.
go_cached_build() {
    local what=$1 present=$2 build=$3
    if "$present"; then say "$what present in $BIN (reused)"; return 0; fi
    [ -x "$GO" ] || die "no Go toolchain at $GO"
    mkdir -p "$CACHE" || die "cannot create $CACHE"
    exec 9> "$CACHE.lock"
    flock 9
    if "$present"; then say "$what present in $BIN (built meanwhile)"; return 0; fi
    go_env
    "$build"
}
