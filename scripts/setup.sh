#!/usr/bin/env bash
# setup.sh - install the Debian packages forge-review needs, then configure
# and build it.
#
#   scripts/setup.sh [--test] [BUILD_DIR] [-- extra cmake args]
#
# --test also installs what the test suite uses (inotify-tools, prometheus
# for promtool and the dashboard test with prometheus-node-exporter and curl, jq, clang and libclang-rt for the fuzzers and sanitizers,
# debootstrap for the offline Docker base images, podman and uidmap for the
# podman engine's tests).
set -euo pipefail
cd "$(dirname "$0")/.."

with_test=0
if [ "${1:-}" = "--test" ]; then with_test=1; shift; fi
build_dir=${1:-build}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift

# libsodium-dev: the seals of the records (common/src/seal.c).
# git: the change set of a git workspace (entrypoint/changeset.c; without it
# the entrypoint falls back to its manifest).
# libcurl4-openssl-dev: the runner's OTLP trace export (runner/otlp.c).
pkgs=(build-essential cmake pkg-config libuv1-dev libcjson-dev libyaml-dev libsodium-dev libcriterion-dev git
      libcurl4-openssl-dev)
if [ "$with_test" = 1 ]; then
  pkgs+=(inotify-tools prometheus jq clang libclang-rt-14-dev llvm debootstrap procps)
  # prometheus-node-exporter and curl: the dashboard's queries against a real
  # Prometheus (tests/e2e/test_metrics_dashboard.c).
  pkgs+=(prometheus-node-exporter curl)
  # chromium: the HTML report's DOM and screenshot (tests/e2e/test_report_html.c).
  pkgs+=(chromium)
  # The podman engine's tests, as root and rootless (uidmap: newuidmap/newgidmap).
  pkgs+=(podman uidmap)
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

cmake -S . -B "$build_dir" -DFORGE_WERROR=ON "$@" >&2
cmake --build "$build_dir" -j"$(nproc)" >&2
