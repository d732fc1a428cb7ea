#!/bin/sh
# bench/run.sh - build the benchmark harness in build-bench (Release) and run
# every benchmark: prints the table, writes bench/results/latest.json.
# Extra arguments go to forge-bench (e.g. --smoke, --only latency, --workdir DIR).
#
# Targets (issue 17), each a ratio to inotifywait measured in the same run,
# printed under the table as met or missed (by how much):
#   latency p50                   <= 1.5x inotifywait's p50
#   burst watcher CPU per file    <= 2.5x inotifywait's
# The burst (10,000 files) is spread over 10 directories: the runner tracks
# at most 1,000 cycle numbers per directory (RN_WATCH_MAX_CYCLE_FILES).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-bench"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target forge-bench >/dev/null
mkdir -p "$root/bench/results"
exec "$build/bench/forge-bench" --json "$root/bench/results/latest.json" "$@"
