#!/bin/sh
# bench/run.sh - build the benchmark harness in build-bench (Release) and run
# every benchmark: prints the table, writes bench/results/latest.json.
# Extra arguments go to forge-bench (e.g. --smoke, --only latency, --workdir DIR).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-bench"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target forge-bench >/dev/null
mkdir -p "$root/bench/results"
exec "$build/bench/forge-bench" --json "$root/bench/results/latest.json" "$@"
