#!/bin/sh
# Runs every benchmark binary of a build directory; they print their own tables.
cd "$(dirname "$0")/.." || exit 2
B=${1:-build}
for b in "$B"/bench/bench_*; do
	[ -x "$b" ] || continue
	echo "=== $b"
	"$b" || exit 1
done
