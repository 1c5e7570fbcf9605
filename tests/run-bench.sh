#!/bin/sh
# Runs every benchmark binary of a build directory, then the benchmark
# scripts (on this host, then in the VM); they print their own tables.
cd "$(dirname "$0")/.." || exit 2
B=${1:-build}
for b in "$B"/bench/bench_*; do
	[ -x "$b" ] || continue
	echo "=== $b"
	"$b" || exit 1
done
# Benchmarks that start the daemon on this host (tests/bench/*.sh).
for s in tests/bench/bench_*.sh; do
	[ -f "$s" ] || continue
	echo "=== $s"
	VCAP_BUILD=$B sh "$s" || exit 1
done
# The VM benchmarks (a real driver in ../shared/vm/vivid-vm) with this build's
# tools and daemon.
for s in tests/vm/bench_*.sh; do
	[ -f "$s" ] || continue
	echo "=== $s"
	VCAP_BUILD=$B sh "$s" || exit 1
done
