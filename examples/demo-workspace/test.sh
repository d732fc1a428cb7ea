#!/bin/sh
# test.sh - the calculator's tests: prints one line per failure, exits 1 if any.
cd "$(dirname "$0")" || exit 2
failures=0
check() {
	want=$1
	shift
	got=$(sh ./calc.sh "$@" 2>&1)
	if [ "$got" != "$want" ]; then
		echo "FAIL: calc.sh $*: expected $want, got '$got'"
		failures=$((failures + 1))
	fi
}
check 5 add 2 3
check 2 sub 5 3
check 12 mul 4 3
check 0 mul 7 0
if [ "$failures" -eq 0 ]; then
	echo "all tests pass"
	exit 0
fi
echo "$failures test(s) failed"
exit 1
