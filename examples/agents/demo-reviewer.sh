#!/bin/sh
# demo-reviewer.sh - a scripted stand-in for a reviewer agent (no AI service).
#
# It runs the workspace's tests and answers with the verdict protocol: APPROVED
# when they pass, otherwise REJECTED followed by the failures (which the loop
# hands to the worker as its feedback).
cat > /dev/null   # the review prompt; this reviewer needs only the tests
if out=$(sh ./test.sh 2>&1); then
	echo "The tests pass: $out."
	echo
	echo "APPROVED"
else
	echo "REJECTED"
	echo
	echo "The tests fail:"
	echo "$out"
fi
