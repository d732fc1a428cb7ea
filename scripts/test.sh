#!/usr/bin/env bash
# test.sh - install what is missing, build, and run every test:
#   1. the whole suite in a normal build (CTest: unit, end-to-end, Docker);
#   2. the whole suite again under ASan, UBSan and LSan;
#   3. each libFuzzer target for a short bounded time.
# Tests that cannot run on this machine say so (skipped, with the reason).
# CTest runs nproc test binaries at a time, and Criterion the tests of one
# binary in parallel too. Each stage prints how long it took; the README
# states the total on a 2-core machine.
#
# The fast loop while developing: ctest -L unit (no real binary is run).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
t_start=$SECONDS
t_stage=$SECONDS
# Prints how long the stage that just ended took.
stage_done() {
  echo "== $1: $((SECONDS - t_stage)) s"
  t_stage=$SECONDS
}

# Prints every skipped test with its reason (Criterion's [SKIP] lines, which
# CTest keeps in its log but does not show for a test binary that passed).
report_skips() {
  local log=$1/Testing/Temporary/LastTest.log
  if grep -q '\[SKIP\]' "$log" 2>/dev/null; then
    echo "== skipped tests ($1), with the reason:"
    grep -h '\[SKIP\]' "$log" | sed 's/^.*\[SKIP\]/  [SKIP]/' | sort -u
  else
    echo "== no test was skipped ($1)"
  fi
}

bash scripts/setup.sh --test build
stage_done "build"
(cd build && ctest --output-on-failure -j"$jobs")
report_skips build
stage_done "tests (build)"

if [ "${FORGE_SKIP_SANITIZE:-0}" != 1 ]; then
  bash scripts/setup.sh --test build-asan -- -DFORGE_SANITIZE=ON -DFORGE_BUILD_BENCH=OFF
  stage_done "build-asan"
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  (cd build-asan && ctest --output-on-failure -j"$jobs" -LE docker)
  report_skips build-asan
  echo "== (build-asan leaves out the tests labelled docker, podman ones included: they ran in build above)"
  stage_done "tests (build-asan)"
fi

if [ -x fuzz/run.sh ] && [ "${FORGE_SKIP_FUZZ:-0}" != 1 ]; then
  fuzz/run.sh "${FORGE_FUZZ_SECONDS:-20}"
  stage_done "fuzz"
fi
echo "== scripts/test.sh: $((SECONDS - t_start)) s in all"
