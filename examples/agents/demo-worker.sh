#!/bin/sh
# demo-worker.sh - a scripted stand-in for a coding agent (no AI service).
#
# It fixes calc.sh in stages, the way a real agent often does:
#   first run (FORGE_CYCLE=0): fixes the bug it sees first (add subtracts);
#   a retry: reads $FORGE_FEEDBACK_FILE and fixes what the reviewer named
#            (a missing 'mul' operation).
# It reads its prompt from standard input, as a real agent CLI would.
set -eu
prompt=$(cat)
echo "demo worker: cycle ${FORGE_CYCLE:-0}, prompt of ${#prompt} bytes"

edit() {
	# POSIX sed has no -i: write a copy, then move it into place.
	sed "$1" calc.sh > calc.sh.new
	mv calc.sh.new calc.sh
}

if [ "${FORGE_CYCLE:-0}" = 0 ]; then
	echo "demo worker: fixing 'add' (it subtracted)"
	edit 's/^add) echo \$((a - b)) ;;$/add) echo $((a + b)) ;;/'
	exit 0
fi

if [ -z "${FORGE_FEEDBACK_FILE:-}" ] || [ ! -r "$FORGE_FEEDBACK_FILE" ]; then
	echo "demo worker: retry without a feedback file" >&2
	exit 1
fi
echo "demo worker: the reviewer said:"
sed 's/^/  > /' "$FORGE_FEEDBACK_FILE"
if grep -q 'mul' "$FORGE_FEEDBACK_FILE" && ! grep -q '^mul)' calc.sh; then
	echo "demo worker: adding 'mul'"
	awk '/^\*\)/ { print "mul) echo $((a * b)) ;;" } { print }' calc.sh > calc.sh.new
	mv calc.sh.new calc.sh
fi
