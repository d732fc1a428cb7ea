#!/bin/sh
# run-demo.sh BUILD_DIR - the demo review loop: no Docker, no AI service.
#
# Copies examples/demo-workspace to a temporary directory and runs the loop
# on it through forge-runner (engine local, which starts forge-entrypoint) with the scripted agents of examples/agents and the
# repository's skills/ (skills/default/implement-task/review.md). Expected: the
# worker fixes one bug, the reviewer rejects (a test still fails), the worker
# reads the feedback and fixes the rest, the reviewer approves in cycle 2.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
. "$here/lib-demo.sh"
demo_build_dir "${1:-}"
bin=$build/entrypoint/forge-entrypoint
if [ ! -x "$bin" ]; then
	echo "run-demo.sh: no forge-entrypoint at '$bin': build first (bash scripts/demo.sh)" >&2
	exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/forge-demo.XXXXXX")
demo_prepare "$tmp"
echo "== forge-runner run --engine local"
status=0
FORGE_WORKER_CMD="'$here/agents/demo-worker.sh'" \
FORGE_REVIEWER_CMD="'$here/agents/demo-reviewer.sh'" \
FORGE_AGENT_TIMEOUT=60 FORGE_AGENT_IDLE_TIMEOUT=60 \
	"$build/runner/forge-runner" run --engine local --entrypoint "$bin" --step implement_task --skill implement-task --task-key CALC-1 --task-file "$tmp/task.json" --workspace "$tmp/workspace" \
	--skills-dir "$repo/skills" --result "$tmp/result.json" || status=$?

demo_report "$tmp"
echo "== forge-runner exit code: $status (files kept in $tmp)"
exit "$status"
