#!/bin/sh
# run-demo-docker.sh [BUILD_DIR] - the demo review loop of run-demo.sh, in a container.
#
# The same workspace, agents and review.md as run-demo.sh, but forge-runner
# starts the sandbox image (engine docker): forge-entrypoint runs as the
# container's PID 1, the scripted agents are the copies shipped in the image
# at /usr/local/share/forge-review/examples/agents/, the review.md is the
# image's default skill at /skills, and the workspace is bind-mounted at
# /workspace with the caller's uid:gid, so the files it writes are yours.
#
# Needs a running Docker Engine, not a registry: when the Debian base images
# are missing, docker/build-base.sh makes them from the host's apt mirror
# (root: debootstrap). The image is then built from docker/Dockerfile (tag
# $FORGE_IMAGE, default forge-review:latest; cached layers make reruns quick).
# BUILD_DIR (default build/) holds the host's forge-runner.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
. "$here/lib-demo.sh"
demo_build_dir "${1:-}"
runner=$build/runner/forge-runner
image=${FORGE_IMAGE:-forge-review:latest}
agents=/usr/local/share/forge-review/examples/agents

die() { echo "run-demo-docker.sh: $*" >&2; exit 2; }
[ -x "$runner" ] || die "no forge-runner at '$runner': build first (bash scripts/demo.sh)"
command -v docker >/dev/null 2>&1 || die "no docker CLI in PATH"
docker info >/dev/null 2>&1 || die "no Docker Engine answers 'docker info'"

if ! docker image inspect debian:bookworm >/dev/null 2>&1 ||
   ! docker image inspect debian:bookworm-slim >/dev/null 2>&1; then
	echo "== base images: docker/build-base.sh (Debian from the host's mirror, no registry)"
	sh "$repo/docker/build-base.sh"
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/forge-demo-docker.XXXXXX")
echo "== image $image: docker build -f docker/Dockerfile (log: $tmp/docker-build.log)"
# The legacy builder's deprecation notice on stderr is not an error; the
# exit status says whether the build worked.
if ! docker build -f "$repo/docker/Dockerfile" -t "$image" "$repo" >"$tmp/docker-build.log" 2>&1; then
	tail -n 40 "$tmp/docker-build.log" >&2
	echo "run-demo-docker.sh: docker build failed (log: $tmp/docker-build.log)" >&2
	exit 1
fi
demo_prepare "$tmp"
echo "== forge-runner run --engine docker --image $image"
status=0
FORGE_WORKER_CMD="$agents/demo-worker.sh" \
FORGE_REVIEWER_CMD="$agents/demo-reviewer.sh" \
FORGE_AGENT_TIMEOUT=60 FORGE_AGENT_IDLE_TIMEOUT=60 \
	"$runner" run --engine docker --image "$image" --step implement_task \
	--skill implement-task --task-key CALC-1 --task-file "$tmp/task.json" \
	--workspace "$tmp/workspace" --result "$tmp/result.json" --timeout 600 || status=$?

demo_report "$tmp" long
run_id=$(sed -n 's/^[[:space:]]*"run_id":[[:space:]]*"\([0-9a-f]*\)".*/\1/p' "$tmp/result.json" 2>/dev/null | head -n 1)
if [ -n "$run_id" ]; then
	echo "== containers left named forge-$run_id: $(docker ps -a -q --filter "name=^forge-$run_id\$" | wc -l)"
fi
echo "== forge-runner exit code: $status (files kept in $tmp)"
exit "$status"
