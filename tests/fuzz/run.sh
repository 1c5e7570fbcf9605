#!/bin/sh
# Runs libFuzzer harnesses built by `make fuzz-bins` (build/fuzz/fuzz_NAME),
# each for FUZZ_SECONDS (default 60) from its seed corpus tests/fuzz/corpus/NAME.
# New inputs go to build/fuzz/corpus/NAME (kept between runs, never the tree),
# crashes to build/fuzz/artifacts/NAME/, the full log to build/fuzz/logs/.
# One line per harness: "fuzz.NAME: OK (N execs)" or "fuzz.NAME: FAIL ..." with
# the crash file.
#   sh tests/fuzz/run.sh [NAME...]     (default: every harness built)
# FUZZ_RUNS=N runs N inputs instead of a time limit (the long runs of the
# issue's closing note).
cd "$(dirname "$0")/../.." || exit 2
B=${FUZZ_BUILD:-build/fuzz}
S=${FUZZ_SECONDS:-60}
names=$*
if [ -z "$names" ]; then
	for b in "$B"/fuzz_*; do
		[ -x "$b" ] && names="$names ${b##*/fuzz_}"
	done
fi
if [ -z "$names" ]; then
	echo "fuzz: FAIL no harness in $B (make fuzz-bins)"
	exit 1
fi
status=0
for n in $names; do
	bin=$B/fuzz_$n art=$B/artifacts/$n/ work=$B/corpus/$n log=$B/logs/$n.log
	if [ ! -x "$bin" ]; then
		echo "fuzz.$n: FAIL $bin not built"; status=1; continue
	fi
	rm -rf "$art" # this run's crashes only (an old one is in the old log)
	mkdir -p "$art" "$work" "$B/logs"
	if [ -n "$FUZZ_RUNS" ]; then limit="-runs=$FUZZ_RUNS"; else limit="-max_total_time=$S"; fi
	# -timeout: one input taking 10 s is a hang; -rss_limit_mb: a leak or an
	# allocation without bound fails instead of swapping the machine.
	"$bin" "$limit" -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
		-artifact_prefix="$art" "$work" "tests/fuzz/corpus/$n" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	crash=$(ls "$art" 2>/dev/null | head -n 1)
	if [ "$rc" = 0 ] && [ -z "$crash" ] && [ -n "$execs" ]; then
		echo "fuzz.$n: OK (${execs} execs)"
	else
		echo "fuzz.$n: FAIL (exit $rc, crash file: ${crash:+$art$crash}, log: $log)"
		grep -E 'ERROR|invariant|SUMMARY|^    #[0-9] ' "$log" | head -n 20
		status=1
	fi
done
exit $status
