#!/bin/sh
# bench/run.sh - build the benchmark harness in build-bench (Release) and run
# every benchmark: prints the tables, writes bench/results/latest.json,
# loop_cost.json, verdict.json, changeset.json and box.json.
# Extra arguments go to forge-bench (e.g. --smoke, --only latency, --workdir DIR).
#
# Targets, each a ratio to inotifywait measured in the same run,
# printed under the table as met or missed (by how much):
#   latency p50                   <= 1.5x inotifywait's p50
#   burst watcher CPU per file    <= 2.5x inotifywait's
# The burst (10,000 files) is spread over 10 directories: the runner tracks
# at most 1,000 cycle numbers per directory (RN_WATCH_MAX_CYCLE_FILES).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-bench"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DFORGE_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target forge-bench forge-bench-changeset forge-bench-trace \
  forge-bench-verdict forge-bench-box >/dev/null
mkdir -p "$root/bench/results"
rc=0
"$build/bench/forge-bench" --json "$root/bench/results/latest.json" "$@" || rc=$?
# The agents' box: its cost per agent start (target < 1 ms); the loop's
# overhead per cycle with the box is forge-bench's "entrypoint
# overhead/cycle" row above (target < 5 ms).
echo
echo "== the agents' box (forge-bench-box)"
"$build/bench/forge-bench-box" 2>/dev/null | tee "$root/bench/results/box.json" || rc=$?
# What a review costs: nine scenarios, reference loop vs defaults.
echo
echo "== loop cost (bench/loop_cost.sh)"
sh "$root/bench/loop_cost.sh" "$build" --json "$root/bench/results/loop_cost.json" || rc=$?
# The runner's CPU per cycle for its trace: export on against off.
echo
echo "== trace cost (forge-bench-trace)"
"$build/bench/forge-bench-trace" || rc=$?
# The verdict parser per review: each realistic reviewer output and a 1 MiB one.
echo
echo "== verdict parser cost (forge-bench-verdict)"
"$build/bench/forge-bench-verdict" | tee "$root/bench/results/verdict.json" || rc=$?
# The change set on 100,000 files / 1 GiB (a few minutes: the tree is made
# and committed first). FORGE_BENCH_SKIP_CHANGESET=1 leaves it out.
if [ "${FORGE_BENCH_SKIP_CHANGESET:-0}" != 1 ]; then
  echo
  echo "== change set cost (forge-bench-changeset)"
  "$build/bench/forge-bench-changeset" | tee "$root/bench/results/changeset.json" || rc=$?
fi
exit $rc
