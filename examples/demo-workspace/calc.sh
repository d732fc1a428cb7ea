#!/bin/sh
# calc.sh - a tiny calculator: sh calc.sh add|sub|mul A B
op=$1
a=$2
b=$3
case $op in
add) echo $((a - b)) ;;
sub) echo $((a - b)) ;;
*) echo "calc.sh: unknown operation '$op'" >&2; exit 2 ;;
esac
