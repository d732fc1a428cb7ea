#!/usr/bin/env bash
# test.sh - install what is missing, build, and run every test:
#   1. the whole suite in a normal build (CTest: unit, end-to-end, Docker);
#   2. the kubernetes engine's tests against a real single-node cluster
#      (tests/kubernetes/cluster.sh: build (cached), up, load the image, the
#      tests labelled kubernetes, down, and the check that the host is as it
#      was); where the cluster cannot be built or started the tests run all
#      the same and skip, each printing why;
#   3. the whole suite again under ASan, UBSan and LSan;
#   4. each libFuzzer target for a short bounded time (FORGE_FUZZ_SECONDS,
#      default 10).
# Tests that cannot run on this machine say so (skipped, with the reason).
# CTest runs nproc test binaries at a time, and Criterion the tests of one
# binary in parallel too. The builds of 3 and 4 are CPU work while the tests
# of 1 and 2 mostly wait (on Docker, on the cluster, on their processes), so
# they run beside those tests, one after the other, at the lowest priority
# (nice 19: the tests keep the CPU they ask for); stages 3 and 4 begin by
# waiting for what is left of them. Each stage prints how long it took; the
# README states the total on a 2-core machine.
#
# Each part ends with "== PART: N passed, N failed" (CTest's and Criterion's
# own lines stay above it), and the last line is the total, "N passed, N
# failed" (CTest tests of each build plus fuzz targets); exit 1 if any failed.
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

passed=0
failed=0
# counts PART PASSED FAILED: one "N passed, N failed" line per part, added
# to the total printed last.
counts() {
  echo "== $1: $2 passed, $3 failed"
  passed=$((passed + $2))
  failed=$((failed + $3))
}

# run_ctest DIR [ARGS...]: CTest in DIR, its own output kept; the counts
# come from its "N% tests passed, F tests failed out of T" line (no such
# line: CTest itself failed, counted as one failure).
run_ctest() {
  local dir=$1 log line t f
  shift
  log=$(mktemp)
  (cd "$dir" && ctest --output-on-failure -j"$jobs" "$@") 2>&1 | tee "$log" || true
  line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1 || true)
  rm -f "$log"
  report_skips "$dir"
  if [ -z "$line" ]; then
    counts "$dir" 0 1
    return
  fi
  t=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")
  f=$(sed -E 's/.*, ([0-9]+) tests? failed.*/\1/' <<<"$line")
  counts "$dir" $((t - f)) "$f"
}

bash scripts/setup.sh --test build
stage_done "build"

# The sanitizer build, then the fuzz targets' build, in the background (see
# above); each leaves DIR/NAME.log and, when done, DIR/NAME.done holding its
# exit status and the second it ended. set -m: a process group of its own,
# killed if this script ends first.
want_asan=0
want_fuzz=0
[ "${FORGE_SKIP_SANITIZE:-0}" != 1 ] && want_asan=1
[ -x fuzz/run.sh ] && [ "${FORGE_SKIP_FUZZ:-0}" != 1 ] && want_fuzz=1
bg_dir=$(mktemp -d)
bg_pid=
bg_start=$SECONDS
# bg_build NAME COMMAND...: one build of the chain, its status recorded.
bg_build() {
  local name=$1 rc=0
  shift
  nice -n 19 "$@" > "$bg_dir/$name.log" 2>&1 || rc=$?
  echo "$rc $SECONDS" > "$bg_dir/$name.done"
}
if [ "$want_asan" = 1 ] || [ "$want_fuzz" = 1 ]; then
  set -m
  (
    if [ "$want_asan" = 1 ]; then
      bg_build build-asan bash scripts/setup.sh --test build-asan -- -DFORGE_SANITIZE=ON -DFORGE_BUILD_BENCH=OFF
    fi
    if [ "$want_fuzz" = 1 ]; then
      bg_build build-fuzz fuzz/run.sh --build
    fi
  ) &
  bg_pid=$!
  set +m
fi
trap 'st=$?; [ -z "$bg_pid" ] || kill -- -"$bg_pid" 2>/dev/null || true; rm -rf "$bg_dir"; exit $st' EXIT
# bg_wait NAME: waits for NAME's build, prints its output, and stops the
# script if it failed (as a failed build in the foreground would).
bg_wait() {
  local rc end
  while [ ! -e "$bg_dir/$1.done" ]; do
    if ! kill -0 "$bg_pid" 2>/dev/null; then
      echo "== $1: the background build ended without a status" >&2
      exit 1
    fi
    sleep 0.2
  done
  cat "$bg_dir/$1.log" >&2
  read -r rc end < "$bg_dir/$1.done"
  echo "== $1 ran in the background (nice 19) from the second $((bg_start - t_start)) to the $((end - t_start)) of this script"
  if [ "$rc" != 0 ]; then
    echo "== $1: failed (exit $rc)" >&2
    exit 1
  fi
}
# Jaeger for the trace tests (tests/e2e/test_trace.c): built once from
# the Go module proxy into the cache (about 30 minutes of a loaded 2-core
# machine the first time, reused after); a failed build only makes those tests
# skip with the reason.
bash tests/jaeger/jaeger.sh build || echo "== jaeger: not built; its trace test skips" >&2
run_ctest build -LE kubernetes
stage_done "tests (build)"

# The kubernetes stage: the tests skip (with this reason) when there is no
# cluster; the host check counts as one test.
k8s=tests/kubernetes/cluster.sh
k8s_log=$(mktemp)
k8s_reason=""
if [ "${FORGE_SKIP_KUBERNETES:-0}" = 1 ]; then
  k8s_reason="FORGE_SKIP_KUBERNETES=1"
elif [ "$(id -u)" != 0 ]; then
  k8s_reason="not root (the cluster runs containerd and a kubelet)"
elif ! bash "$k8s" build > "$k8s_log" 2>&1; then
  k8s_reason="the cluster could not be built: $(tail -n 1 "$k8s_log")"
elif ! bash "$k8s" up >> "$k8s_log" 2>&1; then
  k8s_reason="the cluster did not start: $(tail -n 1 "$k8s_log")"
  bash "$k8s" down >> "$k8s_log" 2>&1 || true
elif ! bash "$k8s" load-image "${FGD_IMAGE:-forge-review:test}" >> "$k8s_log" 2>&1; then
  k8s_reason="the test image could not be loaded: $(tail -n 1 "$k8s_log")"
  bash "$k8s" down >> "$k8s_log" 2>&1 || true
fi
if [ -z "$k8s_reason" ]; then
  tail -n 3 "$k8s_log"
  (eval "$(bash "$k8s" env)" && export FORGE_K8S_IMAGE="${FGD_IMAGE:-forge-review:test}" &&
    export FORGE_K8S_FIGURES="$k8s_log.figures" && run_ctest build -L kubernetes) | tee "$k8s_log.ctest"
  if [ -s "$k8s_log.figures" ]; then
    echo "== kubernetes beside docker, the same demo on this machine:"
    cat "$k8s_log.figures"
  fi
  rm -f "$k8s_log.figures"
  bash "$k8s" down
  if bash "$k8s" check; then counts "host left as found" 1 0; else counts "host left as found" 0 1; fi
  line=$(grep -E '^== build: [0-9]+ passed, [0-9]+ failed$' "$k8s_log.ctest" | tail -n 1 || true)
  if [ -n "$line" ]; then
    counts kubernetes "$(sed -E 's/^== build: ([0-9]+) passed.*/\1/' <<<"$line")" \
      "$(sed -E 's/.*, ([0-9]+) failed$/\1/' <<<"$line")"
  else
    counts kubernetes 0 1
  fi
  rm -f "$k8s_log.ctest"
else
  echo "== kubernetes: no cluster: $k8s_reason"
  tail -n 20 "$k8s_log"
  (unset KUBECONFIG; export FORGE_K8S_NO_CLUSTER="$k8s_reason"; run_ctest build -L kubernetes)
fi
rm -f "$k8s_log"
stage_done "kubernetes"

if [ "${FORGE_SKIP_SANITIZE:-0}" != 1 ]; then
  bg_wait build-asan
  stage_done "build-asan"
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  run_ctest build-asan -LE 'docker|kubernetes'
  echo "== (build-asan leaves out the tests labelled docker, podman ones included, and kubernetes: they ran above)"
  stage_done "tests (build-asan)"
fi

if [ -x fuzz/run.sh ] && [ "${FORGE_SKIP_FUZZ:-0}" != 1 ]; then
  # fuzz/run.sh ends with "fuzz: N passed, N failed" (one per target).
  bg_wait build-fuzz
  stage_done "build-fuzz"
  fuzz_log=$(mktemp)
  # 10 s a target (6 targets, nproc at a time) in the suite; fuzz/run.sh
  # SECONDS alone for longer runs.
  fuzz/run.sh "${FORGE_FUZZ_SECONDS:-10}" 2>&1 | tee "$fuzz_log" || true
  line=$(grep -E '^fuzz: [0-9]+ passed, [0-9]+ failed$' "$fuzz_log" | tail -n 1 || true)
  rm -f "$fuzz_log"
  if [ -n "$line" ]; then
    counts fuzzers "$(sed -E 's/^fuzz: ([0-9]+) passed.*/\1/' <<<"$line")" \
      "$(sed -E 's/.*, ([0-9]+) failed$/\1/' <<<"$line")"
  else
    counts fuzzers 0 1
  fi
  stage_done "fuzz"
fi
echo "== scripts/test.sh: $((SECONDS - t_start)) s in all"
# The one total line, last: test binaries of each build plus fuzz targets.
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
