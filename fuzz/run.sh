#!/usr/bin/env bash
# run.sh SECONDS - build the libFuzzer targets with clang and run each for
# SECONDS (default 60) on a working copy of its seed corpus (fuzz/corpus/<t>
# plus the test fixtures), FORGE_FUZZ_JOBS targets at a time (default nproc). A crash leaves its input in fuzz/out/<t>/ and makes
# this script exit non-zero; turn it into a regression test. The last line
# is "fuzz: N passed, N failed" (targets).
# run.sh --build only builds the targets (scripts/test.sh does that beside
# the tests, then runs them with run.sh SECONDS, which finds them built).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
build=${FORGE_FUZZ_BUILD:-build-fuzz}

CC=clang cmake -S . -B "$build" -DFORGE_FUZZ=ON -DFORGE_BUILD_TESTS=OFF \
  -DFORGE_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzz_reviewmd fuzz_verdict fuzz_cycle fuzz_cmdline fuzz_output fuzz_json_out >/dev/null
if [ "$secs" = --build ]; then
  exit 0
fi

declare -A fixtures=( [reviewmd]=tests/fixtures/reviewmd [verdict]=tests/fixtures/verdict
                      [cycle]=tests/fixtures/cycle [cmdline]=tests/fixtures/cmdline
                      [output]=tests/fixtures/output [json_out]=tests/fixtures/cycle )
# One target: its own working corpus and crash directory; exit status 1 on
# a crash (its input is left in fuzz/out/<t>/crashes/).
run_one() {
  local t=$1 work="fuzz/out/$1"
  rm -rf "$work"; mkdir -p "$work/corpus" "$work/crashes"
  cp -r fuzz/corpus/"$t"/. "$work/corpus/" 2>/dev/null || true
  if [ -d "${fixtures[$t]}" ]; then
    find "${fixtures[$t]}" -type f -size -1M -exec cp {} "$work/corpus/" \; 2>/dev/null || true
  fi
  if ! "$build/fuzz/fuzz_$t" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="$work/crashes/" -print_final_stats=1 "$work/corpus" >"$work/log" 2>&1; then
    echo "fuzz: $t FAILED, see $work/log and $work/crashes/" >&2
    tail -n 30 "$work/log" >&2
    return 1
  fi
  echo "fuzz: $t for ${secs}s: $(grep -E "stat::number_of_executed_units" "$work/log" | tail -n 1)"
}

# The targets run side by side, FORGE_FUZZ_JOBS at a time (default: one per
# core); each gets the whole SECONDS.
jobs=${FORGE_FUZZ_JOBS:-$(nproc)}
status=0
running=0
npass=0
nfail=0
# Waits for one target and counts it.
reap() {
  if wait -n; then
    npass=$((npass + 1))
  else
    nfail=$((nfail + 1))
    status=1
  fi
  running=$((running - 1))
}
for t in reviewmd verdict cycle cmdline output json_out; do
  if [ "$running" -ge "$jobs" ]; then
    reap
  fi
  echo "fuzz: $t for ${secs}s"
  run_one "$t" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  reap
done
echo "fuzz: $npass passed, $nfail failed"
exit $status
