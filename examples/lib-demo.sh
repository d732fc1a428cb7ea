# lib-demo.sh - the parts run-demo.sh and run-demo-docker.sh share; sourced
# (POSIX sh), never run. The caller sets here (this directory) and repo (its
# parent) first. Every function writes to stdout for the reader of the demo.

# demo_build_dir [BUILD_DIR]: sets build to BUILD_DIR (default $repo/build),
# made absolute.
demo_build_dir() {
	build=${1:-$repo/build}
	case $build in /*) ;; *) build=$(pwd)/$build ;; esac
}

# demo_prepare TMP: the demo workspace copied to TMP/workspace, the task at
# TMP/task.json, and the workspace's tests run once to show them failing.
demo_prepare() {
	cp -R "$here/demo-workspace" "$1/workspace"
	cat > "$1/task.json" <<'JSON'
{"task_key": "CALC-1", "summary": "Make the calculator's tests pass",
 "description": "sh test.sh fails. Fix calc.sh so that add, sub and mul work.",
 "skill_name": "implement-task", "step_name": "implement_task", "previous_task_keys": []}
JSON
	echo "== demo workspace: $1/workspace"
	echo "== tests before:"
	sh "$1/workspace/test.sh" || true
}

# demo_report TMP [long]: the cycle files and summary the loop wrote (with
# "long", their owners and modes first), the tests again, the result file.
demo_report() {
	step_dir=$1/workspace/.forge/implement_task
	echo "== cycle files in $step_dir:"
	if [ "${2:-}" = long ]; then
		ls -ln "$step_dir" 2>/dev/null || true
	fi
	for f in "$step_dir"/review_cycle_*.json "$step_dir"/review_summary.json; do
		[ -f "$f" ] || continue
		echo "-- $(basename "$f")"
		cat "$f"
	done
	echo "== tests after:"
	sh "$1/workspace/test.sh" || true
	echo "== forge-runner result ($1/result.json):"; cat "$1/result.json" 2>/dev/null || true
}
