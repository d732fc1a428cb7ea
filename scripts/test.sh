#!/usr/bin/env bash
# test.sh - install what is missing, build, and run every test:
#   1. the whole suite in a normal build (CTest: unit, end-to-end, Docker);
#   2. the whole suite again under ASan, UBSan and LSan;
#   3. each libFuzzer target for a short bounded time.
# Tests that cannot run on this machine say so (skipped, with the reason).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --test build
(cd build && ctest --output-on-failure -j2)

if [ "${FORGE_SKIP_SANITIZE:-0}" != 1 ]; then
  bash scripts/setup.sh --test build-asan -- -DFORGE_SANITIZE=ON -DFORGE_BUILD_BENCH=OFF
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  (cd build-asan && ctest --output-on-failure -j2 -LE docker)
fi

if [ -x fuzz/run.sh ] && [ "${FORGE_SKIP_FUZZ:-0}" != 1 ]; then
  fuzz/run.sh "${FORGE_FUZZ_SECONDS:-20}"
fi
