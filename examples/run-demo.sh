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
build=${1:-$repo/build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
bin=$build/entrypoint/forge-entrypoint
if [ ! -x "$bin" ]; then
	echo "run-demo.sh: no forge-entrypoint at '$bin': build first (bash scripts/demo.sh)" >&2
	exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/forge-demo.XXXXXX")
cp -R "$here/demo-workspace" "$tmp/workspace"
cat > "$tmp/task.json" <<'JSON'
{"task_key": "CALC-1", "summary": "Make the calculator's tests pass",
 "description": "sh test.sh fails. Fix calc.sh so that add, sub and mul work.",
 "skill_name": "implement-task", "step_name": "implement_task", "previous_task_keys": []}
JSON

echo "== demo workspace: $tmp/workspace"
echo "== tests before:"
sh "$tmp/workspace/test.sh" || true
echo "== forge-runner run --engine local"
status=0
FORGE_WORKER_CMD="'$here/agents/demo-worker.sh'" \
FORGE_REVIEWER_CMD="'$here/agents/demo-reviewer.sh'" \
FORGE_AGENT_TIMEOUT=60 FORGE_AGENT_IDLE_TIMEOUT=60 \
	"$build/runner/forge-runner" run --engine local --entrypoint "$bin" --step implement_task --skill implement-task --task-key CALC-1 --task-file "$tmp/task.json" --workspace "$tmp/workspace" \
	--skills-dir "$repo/skills" --result "$tmp/result.json" || status=$?

echo "== cycle files in $tmp/workspace/.forge/implement_task:"
for f in "$tmp/workspace/.forge/implement_task"/review_cycle_*.json \
	 "$tmp/workspace/.forge/implement_task"/review_summary.json; do
	[ -f "$f" ] || continue
	echo "-- $(basename "$f")"
	cat "$f"
done
echo "== tests after:"
sh "$tmp/workspace/test.sh" || true
echo "== forge-runner result ($tmp/result.json):"; cat "$tmp/result.json" 2>/dev/null || true
echo "== forge-runner exit code: $status (files kept in $tmp)"
exit "$status"
